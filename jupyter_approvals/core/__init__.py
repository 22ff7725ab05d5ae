"""Pure-Python core of jupyter-approvals: no Jupyter imports here (see docs/protocol.md)."""
