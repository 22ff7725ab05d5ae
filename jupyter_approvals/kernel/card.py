"""The approval card: an anywidget shown in the cell output of a protected call.

The view (``card.js``) shows the action, summary, bounded preview and fingerprint, counts down
the time left, and sends ``{"op": "decide", "decision", "fingerprint", "reason"}`` with the
fingerprint it displayed. The kernel accepts it only through
:meth:`KernelSession.decide_from_frontend`, which checks that a frontend sent it.

``text/plain`` (what nbval compares and what a terminal shows) is deterministic apart from
ids and clock times, which the sanitize file in the repository masks.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import anywidget
from traitlets import Int, Unicode

from ..core import errors
from ..core.fingerprint import short_fingerprint
from ..core.model import RequestInfo, Status, iso_utc

if TYPE_CHECKING:
    from .session import KernelSession

_ESM = (Path(__file__).parent / "card.js").read_text(encoding="utf-8")
_CSS = (Path(__file__).parent / "card.css").read_text(encoding="utf-8")

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
    """One request's card. Created by the kernel session; never constructed by callers."""

    _esm = _ESM
    _css = _CSS

    request_id = Unicode(help="Id of the request this card decides.").tag(sync=True)
    action = Unicode(help="Action name, such as 'table.write'.").tag(sync=True)
    summary = Unicode(help="One line saying what will happen.").tag(sync=True)
    preview = Unicode(help="The bounded preview of the change.").tag(sync=True)
    preview_omitted = Int(0, help="Characters of the preview left out.").tag(sync=True)
    fingerprint = Unicode(help="sha256 fingerprint of exactly what will run.").tag(sync=True)
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

    def __init__(self, session: KernelSession, info: RequestInfo) -> None:
        self._session = session
        self._info = info
        #: The execute request whose output shows this card last (one display per cell run).
        self.shown_in: str | None = None
        super().__init__(
            request_id=info.id,
            action=info.action,
            summary=info.summary,
            preview=info.preview,
            preview_omitted=info.preview_omitted,
            fingerprint=info.fingerprint,
            min_answer_ms=int(session.limits.min_answer_s * 1000),
        )
        self.refresh(info)
        self.on_msg(self._on_frontend_message)

    def refresh(
        self, info: RequestInfo, event: str | None = None, fields: dict[str, Any] | None = None
    ) -> None:
        """Show the request's current state (called on every store event for it)."""
        self._info = info
        journal = self._session.journal
        with self.hold_sync():
            self.state = info.status.value
            self.message = _STATE_MESSAGES.get(info.status, info.status.value)
            if info.status is Status.FAILED and fields and fields.get("error"):
                self.message = f"Ran and failed: {fields['error']}"
            self.reason = info.reason
            ends = info.approval_expires_at if info.status is Status.APPROVED else info.expires_at
            self.expires_at = iso_utc(ends) if ends else ""
            self.origin = _origin_text(info)
            self.journal_error = (
                f"The decision journal cannot be written ({journal.last_error}); decisions "
                "still apply but are not being recorded."
                if journal.last_append_ok is False
                else ""
            )
            if event == "refused" and info.status is Status.PENDING and fields:
                self.notice = f"A decision was refused ({fields.get('code')})."

    def _on_frontend_message(self, _widget: object, content: object, _buffers: object) -> None:
        if not isinstance(content, dict):
            return
        op = content.get("op")
        try:
            if op == "decide":
                self._session.decide_from_frontend(
                    self.request_id,
                    content.get("decision"),
                    content.get("fingerprint"),
                    content.get("reason", ""),
                    channel="card",
                )
                self.notice = ""
            elif op == "dismiss":
                self._session.dismiss(self.request_id, channel="card")
        except errors.ApprovalError as exc:
            self.notice = f"{exc.code}: {exc.message}"

    def close(self) -> None:
        """Closing the card ends a still-pending request without running it."""
        session = getattr(self, "_session", None)
        if session is not None and self._info.status is Status.PENDING:
            session.dismiss(self._info.id, channel="card-closed")
        super().close()

    def close_quietly(self) -> None:
        """Release the widget of an ended request (no state change)."""
        super().close()

    def __repr__(self) -> str:
        return card_text(self._info)


def _origin_text(info: RequestInfo) -> str:
    parts = []
    if info.origin.notebook_path:
        parts.append(f"notebook {info.origin.notebook_path}")
    if info.origin.cell_id:
        parts.append(f"cell {info.origin.cell_id}")
    if info.origin.username:
        parts.append(f"client user {info.origin.username!r} (claimed)")
    return ", ".join(parts) or "this kernel"


def card_text(info: RequestInfo) -> str:
    """The plain-text card: stable for the same request content (ids and times aside)."""
    lines = [
        f"Approval needed: {info.action}",
        f"  {info.summary}",
        f"  fingerprint {short_fingerprint(info.fingerprint)}  ({info.fingerprint})",
        f"  request {info.id}, answer by {iso_utc(info.expires_at)}",
        "  preview:",
    ]
    lines.extend(f"    {line}" for line in (info.preview or "(no preview)").splitlines())
    if info.preview_omitted:
        lines.append(f"    ... {info.preview_omitted} more characters left out of this preview")
    lines.append(
        "  Approve or reject it in the card or in the Approvals sidebar, then run the call again."
    )
    return "\n".join(lines)
