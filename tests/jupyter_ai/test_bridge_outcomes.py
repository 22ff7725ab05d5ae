"""Every outcome of a Jupyter AI permission is journaled: timed out, failed."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.jupyter_ai.conftest import (
    ALLOW_REJECT,
    HUMAN_PAUSE_S,
    JupyterAi,
    running_jupyter_ai,
    write_call,
)

pytestmark = [pytest.mark.jupyter_ai, pytest.mark.timeout(300)]

#: Seconds a request waits on the impatient server (the default is 600).
TIMEOUT_S = 3


@pytest.fixture(scope="module")
def impatient(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterAi]:
    """Jupyter AI with jupyter-approvals, where a request waits a few seconds only."""
    base = tmp_path_factory.mktemp("jupyter-ai-impatient")
    with running_jupyter_ai(base, f"--ApprovalsConfig.request_timeout={TIMEOUT_S}") as running:
        yield running


def test_a_permission_nobody_answers_times_out_and_the_agent_is_told_reject(
    impatient: JupyterAi,
):
    # Given a permission request nobody answers
    target = impatient.root / "unanswered.txt"
    impatient.run(
        {"ask": write_call("o1", target, None, "late\n"), "options": ALLOW_REJECT},
        {"write": {"path": str(target), "content": "late\n"}, "if_allowed": True},
    )
    row = impatient.held_row("unanswered.txt")
    # When its time is up
    asked, wrote = impatient.answers(2, timeout=TIMEOUT_S + 30)
    # Then the agent is told reject, nothing is written, and the journal says it timed out
    assert asked["result"]["outcome"]["optionId"] == "reject"
    assert wrote["result"] == "skipped"
    assert not target.exists()
    events = [line["event"] for line in impatient.server.events_of(row["id"])]
    assert events == ["requested", "timed_out"]


def test_an_approved_write_that_fails_is_journaled_failed(impatient: JupyterAi):
    # Given a write into a folder that is a file, approved
    (impatient.root / "blocker").write_text("a file, not a folder\n")
    target = impatient.root / "blocker" / "inside.txt"
    impatient.run(
        {"ask": write_call("o2", target, None, "x\n"), "options": ALLOW_REJECT},
        {"write": {"path": str(target), "content": "x\n"}, "if_allowed": True},
    )
    row = impatient.held_row("inside.txt")
    time.sleep(HUMAN_PAUSE_S)
    impatient.server.decide_held(row, "approve")
    # When Jupyter AI carries it out and the file system refuses
    _, wrote = impatient.answers(2)
    # Then the agent gets the error, and the journal says the approved write failed
    assert wrote["error"] is not None
    lines = impatient.server.events_of(row["id"])
    assert [line["event"] for line in lines] == ["requested", "approved", "failed"]
    assert lines[-1]["error"]
