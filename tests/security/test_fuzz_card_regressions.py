"""Regressions the fuzzing of the card's messages found (tests/security/test_fuzz_in_process.py),
each reduced to its minimal example."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_approvals.core.project import make_git_top_level
from tests.security.fuzz_support import InProcessKernel


@pytest.fixture
def in_process(tmp_path: Path) -> Iterator[InProcessKernel]:
    """An approvals kernel session in this process, in a project with a state dir outside."""
    project = tmp_path / "project"
    make_git_top_level(project)
    with InProcessKernel(project, tmp_path / "state") as session:
        yield session


def test_a_card_message_without_a_known_op_is_answered(in_process):
    """Found by the fuzzing (fixed in kernel/card.py): a card message whose op is missing or
    unknown used to be dropped without a word.
    Given a pending request's card, when it receives a decision without ``op`` and then a
    value that is not an object, then each time the card's notice carries
    APPROVAL_MALFORMED_MESSAGE and nothing is decided."""
    kernel = in_process
    target = kernel.ask()
    kernel.clock.advance(2)
    card = kernel.card(target.request_id)
    decision = {"id": target.request_id, "decision": "approve", "fingerprint": target.fingerprint}
    for content in (decision, ["approve"]):
        card.notice = ""
        kernel.deliver(card.comm.comm_id, {"method": "custom", "content": content})
        assert card.notice.startswith("APPROVAL_MALFORMED_MESSAGE: ")
        assert kernel.status(target.request_id) == "pending"
