"""A scripted reviewer for unattended runs of the example notebooks (``pytest --nbval``).

A person running a notebook reads each card and presses Approve or Reject. Under nbval nobody
is there, so cells whose next step needs a person's answer carry a tag saying which answer
the notebook's text asks for: ``reviewer:approve`` or ``reviewer:reject``. After such a cell
ran, the reviewer does what a person would: it waits longer than the 1 s reading floor and
presses that button on the last card the notebook displayed, through a frontend connection of
its own (the same comm message the card's button sends). It never answers a card the notebook
did not ask it to. ``tests/notebooks/refresh_outputs.py`` uses the same reviewer to store
outputs. A pytest plugin (``-p tests.notebooks.nbval_reviewer``, set in pyproject.toml) rather
than a conftest.py beside the notebooks: the folder the demo opens holds the notebooks only.
"""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_approvals.core.protocol import CARD_MIMETYPE, PENDING_MIMETYPE
from jupyter_approvals.testing import connect
from tests.notebooks.reviewer import answer_last_card, review_decision


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Any:
    """Attach a reviewer to each notebook's kernel once nbval has started it; leave the
    approval JSON outputs out of the comparison."""
    outcome = yield
    notebook = item.parent
    # The JSON beside a card and beside its stopped call's line holds ids, times and this
    # checkout's fingerprints, which nbval's text masks cannot reach inside JSON (it masks
    # strings only); their text/plain siblings are compared, and tests/kernel checks the JSON.
    skipped = getattr(notebook, "skip_compare", None)
    if isinstance(skipped, tuple) and CARD_MIMETYPE not in skipped:
        notebook.skip_compare = (*skipped, CARD_MIMETYPE, PENDING_MIMETYPE)
    kernel = getattr(notebook, "kernel", None)
    if outcome.excinfo is None and kernel is not None and not hasattr(notebook, "jpa_reviewer"):
        notebook.jpa_reviewer = connect(kernel.km.connection_file)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    """After a tagged cell ran (and its outputs were checked), answer its card."""
    yield
    decision = review_decision(getattr(item, "cell", None) or {})
    reviewer = getattr(item.parent, "jpa_reviewer", None)
    if decision is not None and reviewer is not None:
        answer_last_card(reviewer, decision)


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Disconnect the reviewer when its notebook is done."""
    if nextitem is None or nextitem.parent is not item.parent:
        reviewer = getattr(item.parent, "jpa_reviewer", None)
        if reviewer is not None:
            reviewer.client.stop_channels()
            del item.parent.jpa_reviewer
