"""What a well-formed decision message is (checked before the store looks at any request),
and which requests can still be decided."""

from __future__ import annotations

from typing import Any

from . import errors
from .fingerprint import is_fingerprint
from .model import Status

#: The only two answers a person can give.
DECISIONS = ("approve", "reject")


def decision_payload(data: object) -> dict[str, Any] | None:
    """The decision inside a comm message's data: a card's widget ``custom`` message (the
    decision is its ``content``) or an endpoint ``decide`` message. None if the data carries
    no decision. The kernel's guard and the server's record of relayed decisions read
    messages by this one rule."""
    if isinstance(data, dict) and data.get("method") == "custom":
        data = data.get("content")
    if isinstance(data, dict) and data.get("op") == "decide":
        return data
    return None


def check_decision(
    decision: object, fingerprint: object, reason: object, max_reason: int
) -> tuple[str, str, str]:
    """Refuse a malformed decision: an unknown answer, a missing or malformed fingerprint,
    a reason that is not text (APPROVAL_MALFORMED_DECISION) or too long (APPROVAL_TOO_LARGE).
    """
    if decision not in DECISIONS:
        raise errors.ApprovalMalformedDecision(
            f"A decision must be one of {DECISIONS}, not {decision!r}.", field="decision"
        )
    if not is_fingerprint(fingerprint):
        raise errors.ApprovalMalformedDecision(
            "A decision must carry the fingerprint the UI displayed, as 'sha256:<64 hex>'.",
            field="fingerprint",
        )
    if not isinstance(reason, str):
        raise errors.ApprovalMalformedDecision("The reason must be text.", field="reason")
    if any("\ud800" <= char <= "\udfff" for char in reason):
        # JSON can carry a lone surrogate as an escape; it is no text a person typed, and
        # it cannot be sent on (UTF-8) to a kernel or written to the journal as is.
        raise errors.ApprovalMalformedDecision(
            "The reason must be text without lone surrogates.", field="reason"
        )
    if len(reason) > max_reason:
        raise errors.ApprovalTooLarge(
            f"The reason has {len(reason)} characters; at most {max_reason} are accepted.",
            field="reason",
            limit=max_reason,
        )
    return str(decision), str(fingerprint), reason


def check_still_pending(request_id: str, status: Status) -> None:
    """Refuse a decision for a request that is no longer waiting for one."""
    if status is Status.TIMED_OUT:
        raise errors.ApprovalTimedOut(
            "This request timed out before the decision arrived; nothing will run.",
            request_id=request_id,
        )
    if status is Status.WITHDRAWN:
        raise errors.ApprovalWithdrawn(
            "The caller withdrew this request before the decision arrived.",
            request_id=request_id,
        )
    if status is not Status.PENDING:
        raise errors.ApprovalAlreadyDecided(
            f"This request is already {status.value}; one decision per request.",
            request_id=request_id,
            status=status.value,
        )
