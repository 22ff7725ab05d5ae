"""The approval card: an anywidget shown in the cell output of a protected call.

The view (``card.js``) shows the action, summary, bounded preview and fingerprint, counts down
the time left, and sends ``{"op": "decide", "id", "decision", "fingerprint", "reason",
"shown"}``, where ``shown`` is what it displayed. The kernel compares ``shown`` with the
store's own record of the request (never with this widget's traits, which cell code could
change) and accepts the decision only while handling that very frontend message
(:mod:`.frontend`).

``text/plain`` (what nbval compares and what a terminal shows, :mod:`.text`) is
deterministic apart from ids and clock times, which the sanitize file in the repository masks.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anywidget
from traitlets import Dict, Int, Unicode

from ...core import errors
from ...core.model import Origin, RequestInfo, Status, iso_utc
from ...core.protocol import CARD_MIMETYPE, SHOWN_FIELDS
from .text import card_text, origin_text, state_message

if TYPE_CHECKING:
    from ..decisions import Decisions

# The structured preview's renderer is shared with the sidebar (views/preview.js); the card's
# module is that renderer followed by the card's own view, one ES module.
_VIEWS = Path(__file__).parents[2] / "views"
_ESM = (_VIEWS / "preview.js").read_text(encoding="utf-8") + (
    Path(__file__).parent / "card.js"
).read_text(encoding="utf-8")
_CSS = (_VIEWS / "preview.css").read_text(encoding="utf-8") + (
    Path(__file__).parent / "card.css"
).read_text(encoding="utf-8")

# What the card shows of its request (every shown field), and what it is made of.
_FIXED = frozenset({*SHOWN_FIELDS, "request_id", "min_answer_ms", "_esm", "_css"})


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
        default_value=None,
        allow_none=True,
        help="The structured preview (docs/protocol.md 4.1), if any.",
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
            min_answer_ms=round(min_answer_s * 1000),
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
            self.message = state_message(info, fields)
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

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:
        # Beside the widget view and the text: the request it shows, for a frontend that
        # finds the widget gone (a notebook reopened after its kernel ended, docs/protocol.md
        # 4.2). Fixed facts only: how the request ended is looked up, never stored here.
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        data, metadata = bundle
        info = self._info
        data[CARD_MIMETYPE] = {
            "version": 1,
            "request_id": info.id,
            "action": info.action,
            "summary": info.summary,
            "fingerprint": info.fingerprint,
            "asked_at": iso_utc(info.created_at),
            "agent": info.origin.agent or None,
        }
        return data, metadata
