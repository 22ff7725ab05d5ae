"""How an ended request is reported to the next identical call: the error and its words.

A call learns once how its request ended (rejected with the person's reason, timed out,
expired, auto-answered, dismissed); the call after that asks anew. Withdrawn requests are not
reported: the caller withdrew them itself.
"""

from __future__ import annotations

from typing import Any

from . import errors
from .fingerprint import short_fingerprint
from .model import RequestInfo, Status

_ERRORS: dict[Status, type[errors.ApprovalError]] = {
    Status.REJECTED: errors.ApprovalRejected,
    Status.TIMED_OUT: errors.ApprovalTimedOut,
    Status.EXPIRED: errors.ApprovalExpired,
    Status.AUTO_ANSWERED: errors.ApprovalAutoAnswered,
    Status.DISMISSED: errors.ApprovalDismissed,
}

_AGAIN = "Nothing ran. Call again to ask anew."


def ended_outcome(request: RequestInfo) -> errors.ApprovalError | None:
    """The error an identical call raises for this ended request, or None if not reported."""
    error_class = _ERRORS.get(request.status)
    if error_class is None:
        return None
    what = f"{request.action} ({short_fingerprint(request.fingerprint)})"
    reason = _sentence(request.reason or "no reason given")
    message = {
        Status.REJECTED: f"A person rejected {what}: {reason} "
        "Nothing ran. Do not retry the same operation unchanged.",
        Status.TIMED_OUT: f"Nobody answered the request for {what} in time. {_AGAIN}",
        Status.EXPIRED: f"The approval of {what} was not used in time. {_AGAIN}",
        Status.AUTO_ANSWERED: f"The request for {what} was answered faster than a person "
        f"reads, so it counts as no answer. {_AGAIN}",
        Status.DISMISSED: f"The approval card for {what} was closed without a decision. {_AGAIN}",
    }[request.status]
    details: dict[str, Any] = {
        "request_id": request.id,
        "action": request.action,
        "fingerprint": request.fingerprint,
        "status": request.status.value,
    }
    if request.status is Status.REJECTED:
        details["reason"] = request.reason
    if request.latency_ms is not None:
        details["latency_ms"] = request.latency_ms
    return error_class(message, **details)


def _sentence(text: str) -> str:
    """``text`` ending in one full stop (a reason may bring its own)."""
    text = text.rstrip()
    return text if text.endswith((".", "!", "?")) else text + "."
