"""The approval card: an anywidget shown in the cell output of a protected call.

The view (``card.js``) shows the action, summary, bounded preview and fingerprint, counts down
the time left, and sends ``{"op": "decide", "id", "decision", "fingerprint", "reason",
"shown"}``, where ``shown`` is what it displayed. The kernel compares ``shown`` with the
store's own record of the request (never with this widget's traits, which cell code could
change) and accepts the decision only while handling that very frontend message
(:mod:`.frontend`).

``text/plain`` (what nbval compares and what a terminal shows) is deterministic apart from
ids and clock times, which the sanitize file in the repository masks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anywidget
from traitlets import Dict, Int, Unicode

from ..core import errors
from ..core.fingerprint import short_fingerprint
from ..core.model import Origin, RequestInfo, Status, iso_utc
from ..core.protocol import SHOWN_FIELDS

if TYPE_CHECKING:
    from .decisions import Decisions

# The structured preview's renderer is shared with the sidebar (views/preview.js); the card's
# module is that renderer followed by the card's own view, one ES module.
_VIEWS = Path(__file__).parent.parent / "views"
_ESM = (_VIEWS / "preview.js").read_text(encoding="utf-8") + (
    Path(__file__).parent / "card.js"
).read_text(encoding="utf-8")
_CSS = (_VIEWS / "preview.css").read_text(encoding="utf-8") + (
    Path(__file__).parent / "card.css"
).read_text(encoding="utf-8")

_FIXED = frozenset(
    {
        "request_id",
        "action",
        "summary",
        "preview",
        "preview_omitted",
        "structured",
        "fingerprint",
        "function",
        "min_answer_ms",
        "_esm",
        "_css",
    }
)

_STATE_MESSAGES = {
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


class ApprovalCard(anywidget.AnyWidget):
    """One request's card. Made by the kernel's card registry; never constructed by callers."""

    _esm = _ESM
    _css = _CSS

    request_id = Unicode(help="Id of the request this card decides.").tag(sync=True)
    action = Unicode(help="Action name, such as 'table.write'.").tag(sync=True)
    summary = Unicode(help="One line saying what will happen.").tag(sync=True)
    preview = Unicode(help="The bounded preview of the change.").tag(sync=True)
    preview_omitted = Int(0, help="Characters of the preview left out.").tag(sync=True)
    structured = Dict(
        None, allow_none=True, help="The structured preview (docs/protocol.md 4.1), if any."
    ).tag(sync=True)
    fingerprint = Unicode(help="sha256 fingerprint of exactly what will run.").tag(sync=True)
    function = Unicode(help="The protected function that will run.").tag(sync=True)
    state = Unicode("pending", help="Status of the request.").tag(sync=True)
    message = Unicode(help="What the state means for the person.").tag(sync=True)
    reason = Unicode(help="The rejection reason, once rejected.").tag(sync=True)
    notice = Unicode(help="Why the last decision from this card was refused.").tag(sync=True)
    expires_at = Unicode(help="When the pending request or the approval ends (ISO UTC).").tag(
        sync=True
    )
    origin = Unicode(help="Where the request came from.").tag(sync=True)
    journal_error = Unicode(help="Why the journal cannot be written, if it cannot.").tag(sync=True)
    min_answer_ms = Int(1000, help="Answers sooner than this are not counted.").tag(sync=True)

    def __init__(
        self,
        info: RequestInfo,
        *,
        decisions: Decisions,
        journal_health: Callable[[], str],
        project_root: Path,
        min_answer_s: float,
    ) -> None:
        self._decisions = decisions
        self._journal_health = journal_health
        self._project_root = project_root
        self._info = info
        #: Where the card is shown now: the cell and its number (the request's origin, or
        #: the cell that ran again and shows the card anew).
        self._place: Origin = info.origin
        super().__init__(
            request_id=info.id,
            action=info.action,
            summary=info.summary,
            preview=info.preview,
            preview_omitted=info.preview_omitted,
            structured=info.structured,
            fingerprint=info.fingerprint,
            function=info.function,
            min_answer_ms=int(min_answer_s * 1000),
        )
        self.refresh(info)
        self.on_msg(self._on_frontend_message)
        self._frozen = True

    def __setattr__(self, name: str, value: Any) -> None:
        # What the card shows is fixed at creation: it is the request the store holds.
        if name in _FIXED and getattr(self, "_frozen", False):
            raise AttributeError(
                f"ApprovalCard.{name} cannot change: a card shows exactly the request it was "
                "made for."
            )
        super().__setattr__(name, value)

    def refresh(
        self, info: RequestInfo, event: str | None = None, fields: dict[str, Any] | None = None
    ) -> None:
        """Show the request's current state (called on every store event for it)."""
        self._info = info
        journal_problem = self._journal_health()
        with self.hold_sync():
            self.state = info.status.value
            self.message = _STATE_MESSAGES.get(info.status, info.status.value)
            if info.status is Status.FAILED and fields and fields.get("error"):
                self.message = f"Ran and failed: {fields['error']}"
            self.reason = info.reason
            ends = info.approval_expires_at if info.status is Status.APPROVED else info.expires_at
            self.expires_at = iso_utc(ends) if ends else ""
            self.origin = origin_text(info, self._project_root, self._place)
            self.journal_error = (
                f"The decision journal cannot be written ({journal_problem}); decisions "
                "still apply but are not being recorded."
                if journal_problem
                else ""
            )
            if event == "refused" and info.status is Status.PENDING and fields:
                self.notice = f"A decision was refused ({fields.get('code')})."

    def shown_at(self, place: Origin) -> None:
        """The card is displayed (again) in the output of the cell run at ``place``."""
        self._place = place
        self.origin = origin_text(self._info, self._project_root, place)

    def _on_frontend_message(self, _widget: object, content: object, _buffers: object) -> None:
        op = content.get("op") if isinstance(content, dict) else None
        if not isinstance(content, dict) or op not in ("decide", "dismiss"):
            # Every message gets a coded answer (docs/protocol.md 4); nothing is decided.
            self.notice = (
                f"{errors.ApprovalMalformedMessage.code}: unknown or missing op "
                f"{str(op)[:40]!r}; expected 'decide' or 'dismiss'. Nothing was decided."
            )
            return
        try:
            if op == "decide":
                self._decisions.decide(
                    content.get("id"),
                    content.get("decision"),
                    content.get("fingerprint"),
                    content.get("reason", ""),
                    channel="card",
                    check=lambda: self._check_shown(content),
                )
                self.notice = ""
            elif op == "dismiss":
                self._decisions.dismiss(self._info.id, channel="card")
        except errors.ApprovalError as exc:
            self.notice = f"{exc.code}: {exc.message}"

    def _check_shown(self, content: dict[str, Any]) -> None:
        request_id = content.get("id")
        record = self._decisions.get(request_id)
        shown = content.get("shown")
        if record is None or request_id != self._info.id:
            raise errors.ApprovalUnknownRequest(
                "This card does not belong to that request.", request_id=request_id
            )
        expected = {name: getattr(record, name) for name in SHOWN_FIELDS}
        if not isinstance(shown, dict) or {k: shown.get(k) for k in SHOWN_FIELDS} != expected:
            raise errors.ApprovalFingerprintMismatch(
                "The card displayed something other than the request it decides; nothing was "
                "decided. Reload the notebook and review the request again.",
                request_id=request_id,
            )

    def close(self) -> None:
        """Closing the card ends a still-pending request without running it."""
        decisions = getattr(self, "_decisions", None)
        if decisions is not None and self._info.status is Status.PENDING:
            decisions.dismiss(self._info.id, channel="card-closed")
        super().close()

    def close_quietly(self) -> None:
        """Release the widget of an ended request; a live request keeps its card."""
        if not self._info.status.live:
            super().close()

    def __repr__(self) -> str:
        return card_text(self._info)


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
    if origin.username:
        text += f", run by {origin.username} (claimed)"
    return text


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
