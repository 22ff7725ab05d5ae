"""The scripted reviewer of the example notebooks: what a person does, for unattended runs.

Cells whose next step needs a person's answer carry a tag saying which answer the notebook's
text asks for (``reviewer:approve`` or ``reviewer:reject``). After such a cell ran, the
reviewer waits longer than the 1 s reading floor and presses that button on the last card the
notebook displayed, through a frontend connection of its own
(:class:`jupyter_approvals.testing.KernelFrontend`). Used by ``nbval_reviewer.py`` (nbval)
and ``refresh_outputs.py``; it lives with the tests, not in the package.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from jupyter_approvals.testing import KernelFrontend, Widget

#: Cell tags of example notebooks and the button the scripted reviewer presses after them.
REVIEW_TAGS = {"reviewer:approve": "approve", "reviewer:reject": "reject"}
#: The reason a scripted rejection gives.
REJECT_REASON = "Not now: checked by the scripted reviewer."
#: Longer than the 1 s floor below which answers count as automatic.
READING_TIME_S = 1.3


def review_decision(cell: Mapping[str, Any]) -> str | None:
    """The answer a notebook cell's ``reviewer:*`` tag asks for after it ran, if any."""
    tags = cell.get("metadata", {}).get("tags", [])
    decisions = [REVIEW_TAGS[tag] for tag in tags if tag in REVIEW_TAGS]
    return decisions[0] if decisions else None


def answer_last_card(reviewer: KernelFrontend, decision: str, timeout: float = 20) -> Widget:
    """Read the newest card like a person, press ``decision``, wait until the kernel took it."""
    deadline = time.monotonic() + timeout
    while not reviewer.cards():
        if time.monotonic() > deadline:
            raise AssertionError("the cell tagged for review displayed no approval card")
    card = reviewer.cards()[-1]
    time.sleep(READING_TIME_S)
    reason = REJECT_REASON if decision == "reject" else ""
    reviewer.click(card, decision, reason=reason)
    while time.monotonic() < deadline:
        state = reviewer.card(card.model_id).state
        if state.get("state") != "pending" or state.get("notice"):
            return reviewer.card(card.model_id)
    raise AssertionError(f"the kernel never took the reviewer's {decision}")
