"""The cards of one kernel: one per request, shown in the output of the call that asked.

:class:`CardRegistry` makes a request's card the first time it is shown, shows it once per
cell run, hands it every later state of its request, tells the frontend guard which comm a
decision for a request may come from, and releases the widgets of ended requests beyond the
last :data:`ENDED_CARDS_KEPT`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..core.model import RequestInfo
from . import frontend
from .card import ApprovalCard
from .decisions import Decisions

#: Cards of ended requests kept alive (so their final state stays visible) before closing.
ENDED_CARDS_KEPT = 50


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
        self._lock = threading.RLock()

    def show(self, info: RequestInfo) -> None:
        """Display the card of ``info`` in the current output, once per cell run."""
        from IPython.display import display

        with self._lock:
            card = self.cards.get(info.id)
            if card is None:
                card = self.cards[info.id] = ApprovalCard(info, **self._card_context)
        execution = (frontend.current_parent().get("header") or {}).get("msg_id")
        if card.shown_in != execution or execution is None:
            card.shown_in = execution
            display(card)  # type: ignore[no-untyped-call]

    def comm_of(self, request_id: str) -> str | None:
        """The comm id of ``request_id``'s card (where a decision from it arrives), if any."""
        with self._lock:
            card = self.cards.get(request_id)
        return card.comm.comm_id if card is not None and card.comm is not None else None

    def refresh(self, info: RequestInfo, event: str, fields: dict[str, Any]) -> None:
        """Show ``info``'s new state on its card, if it has one."""
        with self._lock:
            card = self.cards.get(info.id)
        if card is not None:
            card.refresh(info, event=event, fields=fields)

    def trim(self, live: Iterable[str]) -> None:
        """Release the widgets of ended requests beyond the newest :data:`ENDED_CARDS_KEPT`."""
        alive = set(live)
        with self._lock:
            ended = [rid for rid in self.cards if rid not in alive]
            dropped = [
                self.cards.pop(rid) for rid in ended[: max(0, len(ended) - ENDED_CARDS_KEPT)]
            ]
        for card in dropped:
            card.close_quietly()
