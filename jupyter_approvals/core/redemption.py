"""The checks an approval passes before it runs, and the errors that say why it did not.

The store calls these in the promised order: issued by this store, same action and the same
protected function, same fingerprint, not expired, not used. Only the first and the last two
need the store's records; the scope and content checks depend on the approval alone.
"""

from __future__ import annotations

from typing import Any

from . import errors
from .fingerprint import same_fingerprint, short_fingerprint
from .model import Approval


def not_issued(offered: object) -> errors.ApprovalNotIssued:
    """The error for an object that is not an approval this store issued."""
    return errors.ApprovalNotIssued(
        "This object is not an approval issued by this kernel. Approvals come only from a "
        "person's decision in the UI; nothing else counts. Nothing ran.",
        offered_type=f"{type(offered).__module__}.{type(offered).__qualname__}",
    )


def _details(approval: Approval) -> dict[str, Any]:
    return {"request_id": approval.request_id, "approved_action": approval.action}


def check_scope_and_content(
    approval: Approval, action: str, fingerprint: str, owner: str | None
) -> None:
    """Refuse an approval used for another action, another function, or other content."""
    if approval.action != action:
        raise errors.ApprovalScopeMismatch(
            f"The approval is for {approval.action!r}, not {action!r}. Nothing ran; "
            f"{action!r} needs its own approval.",
            **_details(approval),
            action=action,
        )
    if approval.owner != owner:
        raise errors.ApprovalScopeMismatch(
            f"The approval is for another protected function ({approval.owner}), not {owner}. "
            "Nothing ran; this function needs its own approval.",
            **_details(approval),
            action=action,
            approved_function=approval.owner,
            function=owner,
        )
    if not same_fingerprint(approval.fingerprint, fingerprint):
        raise errors.ApprovalFingerprintMismatch(
            f"The content differs from what was approved (approved "
            f"{short_fingerprint(approval.fingerprint)}, now {short_fingerprint(fingerprint)}). "
            "Nothing ran. The approval is spent; call again to request approval of the current "
            "content.",
            **_details(approval),
            approved_fingerprint=approval.fingerprint,
            fingerprint=fingerprint,
        )


def expired(approval: Approval) -> errors.ApprovalExpired:
    """The error for an approval not used within its lifetime."""
    return errors.ApprovalExpired(
        "The approval was not used in time; nothing ran. Ask for a new approval.",
        **_details(approval),
    )


def already_used(approval: Approval, status: str) -> errors.ApprovalAlreadyUsed:
    """The error for an approval that already ran (or was spent)."""
    return errors.ApprovalAlreadyUsed(
        f"The approval was already used ({status}); one approval runs once. Nothing ran.",
        **_details(approval),
        status=status,
    )


def forked(approval: Approval) -> errors.ApprovalForkedProcess:
    """The error for an approval used in a process forked from the kernel's."""
    return errors.ApprovalForkedProcess(
        "This process was forked from the kernel after the approval was given; an approval "
        "runs once, in the kernel's own process. Nothing ran here.",
        **_details(approval),
    )
