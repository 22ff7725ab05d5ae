"""The REST API's shared facts: where it lives below the server's base URL, and how a coded
error is answered (docs/protocol.md 6)."""

from __future__ import annotations

import json

from tornado import web

from ..core import errors

#: The path of every endpoint of this extension, below the base URL.
API_PREFIX = "jupyter-approvals/api"


def coded_error_body(handler: web.RequestHandler, error: errors.ApprovalError) -> str:
    """Set ``handler``'s status and headers for ``error`` and return the JSON body to finish
    with: the one way every route of this extension, and the agent gate in any upstream
    handler, answers a coded error."""
    # A refused request must not leave a login cookie behind.
    handler.clear_header("Set-Cookie")
    handler.set_status(error.http_status)
    handler.set_header("Content-Type", "application/json")
    retry_after = error.retry_after_s
    if retry_after is not None:
        handler.set_header("Retry-After", str(max(1, round(retry_after))))
    return json.dumps(error.to_response())
