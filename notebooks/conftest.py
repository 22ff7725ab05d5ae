"""A scripted reviewer for unattended runs of the example notebooks (``pytest --nbval``).

A person running a notebook reads each card and presses Approve or Reject. Under nbval nobody
is there, so cells whose next step needs a person's answer carry a tag saying which answer
the notebook's text asks for: ``reviewer:approve`` or ``reviewer:reject``. After such a cell
ran, the reviewer below does what a person would: it waits longer than the 1 s reading floor
and presses that button on the last card the notebook displayed, through a frontend
connection of its own (the same comm message the card's button sends). It never answers a
card the notebook did not ask it to.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from jupyter_approvals.testing import KernelFrontend, Widget, connect

#: Cell tags and the button each one presses.
REVIEW_TAGS = {"reviewer:approve": "approve", "reviewer:reject": "reject"}
#: The reason a scripted rejection gives.
REJECT_REASON = "Not now: checked by the scripted reviewer."
#: Longer than the 1 s floor below which answers count as automatic.
READING_TIME_S = 1.3


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Any:
    """Attach a reviewer to each notebook's kernel once nbval has started it."""
    outcome = yield
    notebook = item.parent
    kernel = getattr(notebook, "kernel", None)
    if outcome.excinfo is None and kernel is not None and not hasattr(notebook, "jpa_reviewer"):
        notebook.jpa_reviewer = connect(kernel.km.connection_file)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    """After a tagged cell ran (and its outputs were checked), answer its card."""
    yield
    cell = getattr(item, "cell", None)
    tags = (cell or {}).get("metadata", {}).get("tags", [])
    decisions = [REVIEW_TAGS[tag] for tag in tags if tag in REVIEW_TAGS]
    reviewer = getattr(item.parent, "jpa_reviewer", None)
    if decisions and reviewer is not None:
        answer_last_card(reviewer, decisions[0])


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Disconnect the reviewer when its notebook is done."""
    if nextitem is None or nextitem.parent is not item.parent:
        reviewer = getattr(item.parent, "jpa_reviewer", None)
        if reviewer is not None:
            reviewer.client.stop_channels()
            del item.parent.jpa_reviewer


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
