"""What a card says in words: the state messages of the live card, where the request came
from, and the plain-text card (``text/plain``) that a saved notebook and a terminal keep.

The plain text is dated and reads in the past tense once the request ended, so a notebook
opened later never shows an old request as one still waiting.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ...core.fingerprint import short_fingerprint
from ...core.model import Origin, RequestInfo, Status, iso_utc

#: What each state means for the person looking at the live card.
STATE_MESSAGES = {
    Status.PENDING: "Waiting for a person. Approve or reject here or in the Approvals sidebar.",
    Status.APPROVED: "Approved. Run the call again before the approval expires; it runs once.",
    Status.RUNNING: "Running.",
    Status.EXECUTED: "Executed once. Another run needs a new approval.",
    Status.FAILED: "Ran and failed.",
    Status.REJECTED: "Rejected.",
    Status.WITHDRAWN: "Withdrawn by the caller. Nothing ran.",
    Status.DISMISSED: "Dismissed without a decision. Nothing ran.",
    Status.TIMED_OUT: "Nobody answered in time. Nothing ran.",
    Status.EXPIRED: "The approval was not used in time. Nothing ran.",
    Status.AUTO_ANSWERED: "Answered faster than a person reads; counted as no answer. Nothing ran.",
    Status.REFUSED: "The approval was refused at run time (the content or action differed). "
    "Nothing ran.",
}

#: What an ended request's stored text says happened.
_ENDED = {
    Status.EXECUTED: "approved and executed",
    Status.FAILED: "approved, ran and failed",
    Status.REJECTED: "rejected",
    Status.WITHDRAWN: "withdrawn by the caller, nothing ran",
    Status.DISMISSED: "closed without a decision, nothing ran",
    Status.TIMED_OUT: "timed out, nobody answered, nothing ran",
    Status.EXPIRED: "approved but not used in time, nothing ran",
    Status.AUTO_ANSWERED: "answered faster than a person reads, nothing ran",
    Status.REFUSED: "refused at run time (the content or action differed), nothing ran",
}


def state_message(info: RequestInfo, fields: dict[str, Any] | None = None) -> str:
    """What the request's state means for the person; a failed run says its error, when the
    event that ended it (``fields``) names one."""
    if info.status is Status.FAILED and fields and fields.get("error"):
        return f"Ran and failed: {fields['error']}"
    return STATE_MESSAGES.get(info.status, info.status.value)


def origin_text(info: RequestInfo, project_root: Path, place: Origin | None = None) -> str:
    """Where the request came from, as a person sees it: the notebook, the cell by the number
    shown next to it (``cell [5]``, or "a new cell" where the run has none) and who ran it (as
    the client claimed), or the agent whose code asked. ``place`` is the cell showing the card
    now, when that is another run than the one that asked first (the cell ran again)."""
    origin = info.origin
    if place is not None:
        origin = replace(origin, cell_id=place.cell_id, execution_count=place.execution_count)
    where = []
    if origin.notebook_path:
        notebook = Path(origin.notebook_path)
        if notebook.is_absolute() and notebook.is_relative_to(project_root):
            notebook = notebook.relative_to(project_root)
        where.append(f"notebook {notebook}")
    if origin.execution_count is not None:
        where.append(f"cell [{origin.execution_count}]")
    elif origin.notebook_path or origin.cell_id:
        where.append("a new cell")
    named = ", ".join(where)
    if origin.agent:
        return f"requested by agent {origin.agent}" + (f" from {named}" if named else "")
    text = f"requested from {named or 'this kernel'}"
    who = origin.display_name or origin.username
    if who:
        text += f", run by {who} (name not verified)"
    return text


def ended_phrase(info: RequestInfo) -> str | None:
    """How the request ended ("approved and executed", "rejected, reason: ..."), or None while
    it is pending, approved or running."""
    phrase = _ENDED.get(info.status)
    if phrase is not None and info.status is Status.REJECTED and info.reason:
        phrase += ", reason: " + " ".join(info.reason.split())[:200]
    return phrase


def _shown_on(info: RequestInfo) -> str:
    return datetime.fromtimestamp(info.created_at, tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _state(info: RequestInfo) -> str:
    ended = ended_phrase(info)
    if ended is not None:
        return f"ended: {ended}; run the cell to ask again"
    if info.status is Status.PENDING or info.approval_expires_at is None:
        return f"answer by {iso_utc(info.expires_at)}"
    return f"approved, use by {iso_utc(info.approval_expires_at)}"


def card_text(info: RequestInfo) -> str:
    """The plain-text card: stable for the same request content (ids and times aside), dated,
    and in the past tense once the request ended."""
    ended = ended_phrase(info) is not None
    lines = [
        f"Approval request ended: {info.action}" if ended else f"Approval needed: {info.action}",
        f"  {info.summary}",
        f"  runs {info.function}",
        *([f"  requested by agent {info.origin.agent}"] if info.origin.agent else []),
        f"  fingerprint {short_fingerprint(info.fingerprint)}  ({info.fingerprint})",
        f"  request {info.id}, shown on {_shown_on(info)}, {_state(info)}",
        "  preview:",
    ]
    lines.extend(f"    {line}" for line in (info.preview or "(no preview)").splitlines())
    if info.preview_omitted:
        lines.append(f"    ... {info.preview_omitted} more characters left out of this preview")
    if not ended:
        lines.append(
            "  Approve or reject it in the card or in the Approvals sidebar, then run the call "
            "again."
        )
    return "\n".join(lines)


def pointer_text(info: RequestInfo, execution_count: int | None) -> str:
    """What a repeated call shows instead of a second live card: where the card is."""
    card = f"the card of cell [{execution_count}]" if execution_count else "its card"
    ended = ended_phrase(info)
    state = (
        f"ended: {ended}; run the cell to ask again."
        if ended is not None
        else "waiting for a decision: approve or reject it there or in the Approvals sidebar."
    )
    return f"Already asked in {card} (request {info.id}), {state}"


def stopped_line(action: str) -> str:
    """The quiet line under a card whose call stopped to ask: why the cell stopped, in words
    that stay true once the request ended (no deadline, no state)."""
    return (
        f"Stopped before {action or 'the call'} ran: it needs a person's approval, in the card "
        "above or the Approvals sidebar. Once approved, run the call again."
    )


def ended_detail(detail: dict[str, Any], info: RequestInfo) -> dict[str, Any]:
    """The stopped call's JSON (an ``ApprovalPending.to_dict()``) once its request ended: its
    status and how it ended instead of the deadline that no longer applies."""
    details = {k: v for k, v in detail.get("details", {}).items() if k != "expires_at"}
    details["status"] = info.status.value
    ended = ended_phrase(info) or info.status.value
    details["ended"] = ended
    return {
        **detail,
        "details": details,
        "message": f"{info.action} stopped to ask for approval; the request ended: {ended}.",
    }
