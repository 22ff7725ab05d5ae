"""Where this extension's REST API lives below the server's base URL (docs/protocol.md 6)."""

from __future__ import annotations

#: The path of every endpoint of this extension, below the base URL.
API_PREFIX = "jupyter-approvals/api"
