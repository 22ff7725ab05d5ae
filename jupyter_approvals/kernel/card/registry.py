"""The cards of one kernel: one live card per request, shown in the output of the call that
asked.

:class:`CardRegistry` makes a request's card the first time it is shown and displays it under
a display id of its own. A later call for the same pending request, in another cell, gets a
short plain output pointing to that card instead of a second live card; the card is displayed
again only where nobody could see it any more: when the cell showing it runs again (the
frontend clears that cell's output first), or in the re-run cell itself. When the request
ends, every output that showed the card or pointed to it is updated (``update_display_data``)
to its ended text, so a saved notebook reads as past. The registry also hands each card every
later state of its request, tells the frontend guard which comm a decision for a request may
come from, and releases the widgets of ended requests beyond the last :data:`ENDED_CARDS_KEPT`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...core import errors
from ...core.model import Origin, RequestInfo
from ...core.protocol import PENDING_MIMETYPE
from .. import frontend
from ..decisions import Decisions
from .text import ended_detail, ended_phrase, pointer_text, stopped_line
from .widget import ApprovalCard

#: Cards of ended requests kept alive (so their final state stays visible) before closing.
ENDED_CARDS_KEPT = 50


@dataclass
class Shown:
    """Where a request's card is visible, as far as the kernel can tell."""

    #: The execute request whose output shows the card (one display per cell run).
    execution: str | None
    cell_id: str | None
    execution_count: int | None
    #: The cell ran again since: the frontend cleared the output that showed the card.
    gone: bool = False
    #: A later call's output points to the card (display id :func:`pointer_display_id`).
    pointed: bool = False
    #: The execute request whose output points to the card last (one pointer per cell run).
    pointed_in: str | None = None
    #: The ended phrase the outputs were last updated to, once the request ended.
    ended: str | None = None
    #: The stopped call's JSON under the card (display id :func:`stopped_display_id`), once a
    #: call stopped where the card shows.
    stopped: dict[str, Any] | None = None


def card_display_id(request_id: str) -> str:
    """The display id of the outputs showing ``request_id``'s card."""
    return f"jupyter-approvals-card-{request_id}"


def stopped_display_id(request_id: str) -> str:
    """The display id of the quiet lines under ``request_id``'s card."""
    return f"jupyter-approvals-stopped-{request_id}"


def stopped_bundle(action: str, detail: dict[str, Any]) -> dict[str, Any]:
    """The quiet line's output: its text, and the stopped call's JSON for agents."""
    return {"text/plain": stopped_line(action), PENDING_MIMETYPE: detail}


def pointer_display_id(request_id: str) -> str:
    """The display id of the outputs pointing to ``request_id``'s card."""
    return f"jupyter-approvals-pointer-{request_id}"


class CardRegistry:
    """Every card of this kernel, by request id, oldest first."""

    def __init__(
        self,
        decisions: Decisions,
        journal_health: Callable[[], str],
        project_root: Path,
        min_answer_s: float,
    ) -> None:
        self._card_context: dict[str, Any] = {
            "decisions": decisions,
            "journal_health": journal_health,
            "project_root": project_root,
            "min_answer_s": min_answer_s,
        }
        self.cards: OrderedDict[str, ApprovalCard] = OrderedDict()
        self.shown: dict[str, Shown] = {}
        self._lock = threading.RLock()

    def show(self, info: RequestInfo, place: Origin) -> None:
        """Show ``info`` in the current output: its card, or where its card already is.

        ``place`` says where the call is being made now (its cell and execution count).
        """
        from IPython.display import display

        execution = (frontend.current_parent().get("header") or {}).get("msg_id")
        with self._lock:
            card = self.cards.get(info.id)
            if card is None:
                card = self.cards[info.id] = ApprovalCard(info, **self._card_context)
            shown = self.shown.get(info.id)
            if shown is not None and execution is not None and shown.execution == execution:
                return  # shown in this cell run already
            visible_elsewhere = (
                shown is not None
                and not shown.gone
                and not (shown.cell_id is not None and shown.cell_id == place.cell_id)
            )
            if visible_elsewhere:
                assert shown is not None
                if execution is not None and shown.pointed_in == execution:
                    return  # pointed to it in this cell run already
                shown.pointed, shown.pointed_in = True, execution
                pointer = pointer_text(info, shown.execution_count)
            else:
                pointed = shown.pointed if shown is not None else False
                self.shown[info.id] = Shown(
                    execution, place.cell_id, place.execution_count, pointed=pointed
                )
        if visible_elsewhere:
            display(  # type: ignore[no-untyped-call]
                {"text/plain": pointer}, raw=True, display_id=pointer_display_id(info.id)
            )
        else:
            card.shown_at(place)
            display(card, display_id=card_display_id(info.id))  # type: ignore[no-untyped-call]

    def cell_runs(self, info: Any = None) -> None:
        """IPython's ``pre_run_cell``: a cell that showed a card runs again, and the frontend
        has cleared its outputs, so its card is no longer visible there."""
        cell_id = getattr(info, "cell_id", None) or frontend.caller_context()["cell_id"]
        if cell_id is None:
            return  # a console's outputs stay; nothing is known to be cleared
        with self._lock:
            for shown in self.shown.values():
                if shown.cell_id == cell_id:
                    shown.gone = True

    def shown_in_run(self, request_id: str) -> str | None:
        """What the current cell run shows of ``request_id``: ``"card"``, ``"pointer"`` (a
        line pointing to its card elsewhere), or None."""
        execution = (frontend.current_parent().get("header") or {}).get("msg_id")
        with self._lock:
            shown = self.shown.get(request_id)
        if shown is None or execution is None:
            return None
        if shown.execution == execution:
            return "card"
        return "pointer" if shown.pointed_in == execution else None

    def stopped(self, error: errors.ApprovalPending) -> bool:
        """A call of the current run stopped with ``error``: show its quiet line under the
        card this run shows (nothing more where the run shows a pointer, which is then its one
        output). False when the run shows neither, and the error should show as usual."""
        from IPython.display import display

        request_id = str(error.details.get("request_id", ""))
        here = self.shown_in_run(request_id)
        if here is None:
            return False
        if here == "card":
            detail = error.to_dict()
            action = str(error.details.get("action", ""))
            with self._lock:
                shown = self.shown.get(request_id)
                if shown is not None:
                    shown.stopped = detail
            display(  # type: ignore[no-untyped-call]
                stopped_bundle(action, detail),
                raw=True,
                display_id=stopped_display_id(request_id),
            )
        return True

    def comm_of(self, request_id: str) -> str | None:
        """The comm id of ``request_id``'s card (where a decision from it arrives), if any."""
        with self._lock:
            card = self.cards.get(request_id)
        return card.comm.comm_id if card is not None and card.comm is not None else None

    def refresh(self, info: RequestInfo, event: str, fields: dict[str, Any]) -> None:
        """Show ``info``'s new state on its card, if it has one; once the request ended, turn
        the outputs that show it or point to it into their ended text."""
        from IPython.display import update_display

        with self._lock:
            card = self.cards.get(info.id)
            shown = self.shown.get(info.id)
        if card is None:
            return
        card.refresh(info, event=event, fields=fields)
        ended = ended_phrase(info)
        if shown is None or ended is None or ended == shown.ended:
            return
        shown.ended = ended
        update_display(card, display_id=card_display_id(info.id))  # type: ignore[no-untyped-call]
        if shown.pointed:
            update_display(  # type: ignore[no-untyped-call]
                {"text/plain": pointer_text(info, shown.execution_count)},
                raw=True,
                display_id=pointer_display_id(info.id),
            )
        if shown.stopped is not None:
            update_display(  # type: ignore[no-untyped-call]
                stopped_bundle(info.action, ended_detail(shown.stopped, info)),
                raw=True,
                display_id=stopped_display_id(info.id),
            )

    def trim(self, live: Iterable[str]) -> None:
        """Release the widgets of ended requests beyond the newest :data:`ENDED_CARDS_KEPT`."""
        alive = set(live)
        with self._lock:
            ended = [rid for rid in self.cards if rid not in alive]
            dropped = [
                self.cards.pop(rid) for rid in ended[: max(0, len(ended) - ENDED_CARDS_KEPT)]
            ]
            for card in dropped:
                self.shown.pop(card.request_id, None)
        for card in dropped:
            card.close_quietly()
