"""A person pauses Jupyter AI's agent as any other: what it asked is rejected, it is refused
until resumed."""

from __future__ import annotations

import json

import pytest

from tests.jupyter_ai.conftest import AGENT_NAME, ALLOW_REJECT, JupyterAi, write_call

pytestmark = [pytest.mark.jupyter_ai, pytest.mark.timeout(300)]


def set_paused(jupyter_ai: JupyterAi, paused: bool) -> dict:
    action = "pause" if paused else "resume"
    answer = jupyter_ai.server.api(
        f"/jupyter-approvals/api/agents/{AGENT_NAME}/{action}", "POST", b""
    )
    return dict(json.loads(answer))


def test_pausing_jupyter_ais_agent_rejects_what_it_asked_and_refuses_it_until_resumed(
    jupyter_ai: JupyterAi,
):
    # Given the agent's request waiting, and the agent listed among the agents
    target = jupyter_ai.root / "paused.txt"
    jupyter_ai.run({"ask": write_call("p1", target, None, "x\n"), "options": ALLOW_REJECT})
    jupyter_ai.held_row("paused.txt")
    agents = jupyter_ai.server.api_json("/jupyter-approvals/api/agents")["agents"]
    [listed] = [a for a in agents if a["name"] == AGENT_NAME]
    assert (listed["runner"], listed["paused"], listed["pending"]) == ("jupyter-ai", False, 1)
    # When the person pauses it (the sidebar's Pause button)
    assert set_paused(jupyter_ai, True)["paused"] is True
    [asked] = jupyter_ai.answers(1)
    # Then the agent is told reject, and while paused it cannot ask, write or read
    assert asked["result"]["outcome"]["optionId"] == "reject"
    jupyter_ai.run(
        {"ask": write_call("p2", target, None, "x\n"), "options": ALLOW_REJECT},
        {"write": {"path": str(target), "content": "x\n"}},
        {"read": {"path": str(jupyter_ai.root / "agent.chat")}},
    )
    asked_again, wrote, read = jupyter_ai.answers(3)
    assert asked_again["result"]["outcome"] == {"outcome": "cancelled"}
    assert wrote["error"]["data"]["code"] == "APPROVAL_AGENT_PAUSED"
    assert read["error"]["data"]["code"] == "APPROVAL_AGENT_PAUSED"
    assert jupyter_ai.journal(event="agent_paused", agent=AGENT_NAME)
    assert jupyter_ai.server.pending() == []
    # When the person resumes it
    set_paused(jupyter_ai, False)
    jupyter_ai.run({"read": {"path": str(jupyter_ai.root / "agent.chat")}})
    # Then it works again
    [read_again] = jupyter_ai.answers(1)
    assert read_again["error"] is None
