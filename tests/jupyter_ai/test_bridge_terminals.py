"""Jupyter AI's agent runs a command: held with the argv, folder and environment it runs with,
run only exactly as approved."""

from __future__ import annotations

import time

import pytest

from tests.jupyter_ai.conftest import (
    ALLOW_REJECT,
    HUMAN_PAUSE_S,
    JupyterAi,
    command_call,
)

pytestmark = [pytest.mark.jupyter_ai, pytest.mark.timeout(300)]


def test_an_approved_command_runs_once_where_it_was_approved(jupyter_ai: JupyterAi):
    # Given an agent that asks to run a command in the project
    root = str(jupyter_ai.root)
    jupyter_ai.run(
        {"ask": command_call("t1", "touch ran.txt", cwd=root), "options": ALLOW_REJECT},
        {"terminal": {"command": "touch ran.txt", "cwd": root}, "if_allowed": True},
        {"terminal": {"command": "touch ran.txt", "cwd": root}, "if_allowed": True},
    )
    # Then the sidebar shows the argv and the folder it runs in
    row = jupyter_ai.held_row("touch")
    assert "ran.txt" in row["preview"]
    assert root in row["preview"]
    assert not (jupyter_ai.root / "ran.txt").exists()
    # When the person approves it
    time.sleep(HUMAN_PAUSE_S)
    jupyter_ai.server.decide_held(row, "approve")
    _, ran, again = jupyter_ai.answers(3)
    # Then it runs once, and the same command again is refused
    assert ran["result"]["exit"]["exitCode"] == 0, ran
    assert (jupyter_ai.root / "ran.txt").exists()
    assert again["error"]["data"]["code"] == "APPROVAL_REQUIRED"
    events = [line["event"] for line in jupyter_ai.server.events_of(row["id"])]
    assert events == ["requested", "approved", "executed"]


@pytest.mark.parametrize(
    "other",
    [
        {"command": "touch other.txt"},
        {"command": "touch", "args": ["approved.txt", "extra.txt"]},
        {"command": "touch approved.txt", "cwd": "/tmp"},
        {"command": "touch approved.txt", "env": [{"name": "LD_PRELOAD", "value": "/x.so"}]},
    ],
    ids=["command", "args", "cwd", "env"],
)
def test_a_command_other_than_the_approved_one_is_refused(jupyter_ai: JupyterAi, other: dict):
    # Given an approved command
    root = str(jupyter_ai.root)
    tool_call = command_call(f"t2-{sorted(other)}-{time.time()}", "touch approved.txt", cwd=root)
    jupyter_ai.run(
        {"ask": tool_call, "options": ALLOW_REJECT},
        {"terminal": {"cwd": root, **other}, "if_allowed": True},
    )
    row = jupyter_ai.held_row("approved.txt")
    time.sleep(HUMAN_PAUSE_S)
    jupyter_ai.server.decide_held(row, "approve")
    # When the agent runs another command, arguments, folder or environment
    _, ran = jupyter_ai.answers(2)
    # Then it is refused and nothing runs
    assert ran["error"]["data"]["code"] == "APPROVAL_FINGERPRINT_MISMATCH", ran
    assert not (jupyter_ai.root / "other.txt").exists()
    assert not (jupyter_ai.root / "extra.txt").exists()
