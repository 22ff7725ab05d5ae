"""The sandbox for agents' code: kernels run under bubblewrap with the project as a
copy-on-write overlay, and what they change waits as a change set (docs/security.md)."""
