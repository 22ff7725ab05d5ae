"""What a well-formed decision message is, checked before the store looks at any request."""

from __future__ import annotations

from . import errors
from .fingerprint import is_fingerprint

#: The only two answers a person can give.
DECISIONS = ("approve", "reject")


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
    if len(reason) > max_reason:
        raise errors.ApprovalTooLarge(
            f"The reason has {len(reason)} characters; at most {max_reason} are accepted.",
            field="reason",
            limit=max_reason,
        )
    return str(decision), str(fingerprint), reason
