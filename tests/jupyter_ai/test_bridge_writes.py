"""Jupyter AI's agent writes a file: held, shown as a diff, written only as approved, once."""

from __future__ import annotations

import time

import pytest

from tests.jupyter_ai.conftest import (
    AGENT_NAME,
    ALLOW_REJECT,
    HUMAN_PAUSE_S,
    JupyterAi,
    write_call,
)

pytestmark = [pytest.mark.jupyter_ai, pytest.mark.timeout(300)]


def test_a_write_approved_in_the_sidebar_lands_once_and_is_journaled(jupyter_ai: JupyterAi):
    # Given a file the agent wants to change
    target = jupyter_ai.root / "notes.txt"
    target.write_text("alpha\nbeta\n")
    call = write_call("w1", target, "beta", "BETA")
    # When the agent asks for permission, then (if allowed) writes the whole new text
    jupyter_ai.run(
        {"ask": call, "options": ALLOW_REJECT},
        {"write": {"path": str(target), "content": "alpha\nBETA\n"}, "if_allowed": True},
        {"write": {"path": str(target), "content": "alpha\nBETA\n"}, "if_allowed": True},
    )
    # Then the sidebar holds it as the agent's request, with the diff of the file on disk
    row = jupyter_ai.held_row("notes.txt")
    assert row["held_at"] == "server"
    assert row["agent"] == AGENT_NAME
    assert "-beta" in row["preview"]
    assert "+BETA" in row["preview"]
    assert target.read_text() == "alpha\nbeta\n"
    # When the person approves it in the sidebar
    time.sleep(HUMAN_PAUSE_S)
    assert jupyter_ai.server.decide_held(row, "approve")["status"] == "approved"
    asked, wrote, again = jupyter_ai.answers(3)
    # Then the agent is told "allow", its write lands, and the same write again is refused
    assert asked["result"]["outcome"] == {"outcome": "selected", "optionId": "allow"}
    assert wrote["error"] is None, wrote
    assert target.read_text() == "alpha\nBETA\n"
    assert again["error"]["data"]["code"] == "APPROVAL_REQUIRED"
    events = [line["event"] for line in jupyter_ai.server.events_of(row["id"])]
    assert events == ["requested", "approved", "executed"]


def test_a_lying_agents_other_content_is_refused_and_nothing_is_written(jupyter_ai: JupyterAi):
    # Given a permission asked for one text of a new file
    target = jupyter_ai.root / "report.md"
    jupyter_ai.run(
        {"ask": write_call("w2", target, None, "# Report\n"), "options": ALLOW_REJECT},
        {"write": {"path": str(target), "content": "rm -rf ~\n"}, "if_allowed": True},
        {"write": {"path": str(target), "content": "# Report\n"}, "if_allowed": True},
    )
    row = jupyter_ai.held_row("report.md")
    # When the person approves it, and the agent writes other content
    time.sleep(HUMAN_PAUSE_S)
    jupyter_ai.server.decide_held(row, "approve")
    _, lie, honest_after = jupyter_ai.answers(3)
    # Then the other content is refused as a mismatch, and the approval is spent by it
    assert lie["error"]["data"]["code"] == "APPROVAL_FINGERPRINT_MISMATCH", lie
    assert honest_after["error"]["data"]["code"] == "APPROVAL_REQUIRED", honest_after
    assert not target.exists()
    refused = [
        line for line in jupyter_ai.server.events_of(row["id"]) if line["event"] == "refused"
    ]
    assert refused
    assert refused[0]["code"] == "APPROVAL_FINGERPRINT_MISMATCH"


def test_a_write_nobody_approved_is_refused(jupyter_ai: JupyterAi):
    # Given an agent that writes without asking
    target = jupyter_ai.root / "unasked.txt"
    jupyter_ai.run({"write": {"path": str(target), "content": "x"}})
    # Then the write is refused with its code, nothing is written, and the refusal is journaled
    [answer] = jupyter_ai.answers(1)
    assert answer["error"]["data"]["code"] == "APPROVAL_REQUIRED"
    assert "APPROVAL_REQUIRED" in answer["error"]["message"]
    assert not target.exists()
    assert jupyter_ai.journal(event="refused", agent=AGENT_NAME, code="APPROVAL_REQUIRED")


def test_a_rejected_write_tells_the_agent_reject_and_writes_nothing(jupyter_ai: JupyterAi):
    # Given a permission request for a file
    target = jupyter_ai.root / "rejected.txt"
    jupyter_ai.run(
        {"ask": write_call("w3", target, None, "no\n"), "options": ALLOW_REJECT},
        {"write": {"path": str(target), "content": "no\n"}},
    )
    row = jupyter_ai.held_row("rejected.txt")
    # When the person rejects it in the sidebar
    time.sleep(HUMAN_PAUSE_S)
    jupyter_ai.server.decide_held(row, "reject")
    asked, wrote = jupyter_ai.answers(2)
    # Then the agent is told "reject", and a write it tries anyway is refused as rejected
    assert asked["result"]["outcome"] == {"outcome": "selected", "optionId": "reject"}
    assert wrote["error"]["data"]["code"] == "APPROVAL_REJECTED"
    assert not target.exists()


@pytest.mark.parametrize("where", ["hidden", "outside", "jupyter-own"])
def test_writes_and_reads_of_places_agents_never_touch_are_refused(
    jupyter_ai: JupyterAi, where: str
):
    # Given a path agents may not touch
    path = {
        "hidden": jupyter_ai.root / ".jupyter" / "personas" / "evil_persona.py",
        "outside": jupyter_ai.root.parent / "outside.txt",
        "jupyter-own": jupyter_ai.server.state_dir / "agents.json",
    }[where]
    # When the agent asks to write there, and reads there
    jupyter_ai.run(
        {"ask": write_call(f"w-{where}", path, None, "x"), "options": ALLOW_REJECT},
        {"read": {"path": str(path)}},
    )
    asked, read = jupyter_ai.answers(2)
    # Then the permission is never shown (the agent is told "cancelled") and the read refused
    assert asked["result"]["outcome"] == {"outcome": "cancelled"}
    assert read["error"]["data"]["code"] == "APPROVAL_AGENT_FORBIDDEN", read
    assert not path.exists() or where == "jupyter-own"


def test_an_ordinary_read_is_never_held(jupyter_ai: JupyterAi):
    # Given a file in the project
    (jupyter_ai.root / "data.csv").write_text("a,b\n1,2\n")
    # When the agent reads it
    jupyter_ai.run({"read": {"path": str(jupyter_ai.root / "data.csv")}})
    # Then it gets the text at once
    [answer] = jupyter_ai.answers(1)
    assert answer["result"] == {"content": "a,b\n1,2\n"}
