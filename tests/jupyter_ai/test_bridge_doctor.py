"""The doctor says whether Jupyter AI's agents ask through jupyter-approvals, and which of
Jupyter AI's extensions act as the person without a permission step."""

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


@pytest.fixture(scope="module")
def without_bridge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterAi]:
    """Jupyter AI with jupyter-approvals, the bridge turned off."""
    base = tmp_path_factory.mktemp("jupyter-ai-off")
    with running_jupyter_ai(base, "--ApprovalsServer.jupyter_ai_bridge=False") as running:
        yield running


def checks(server) -> dict[str, dict]:
    report = server.api_json("/jupyter-approvals/api/doctor")
    return {check["name"]: check for check in report["checks"]}


def test_the_doctor_says_the_bridge_is_in_force_and_names_what_it_does_not_cover(
    jupyter_ai: JupyterAi,
):
    # Given Jupyter AI 3 with the bridge (the default)
    # When the doctor runs in the server
    found = checks(jupyter_ai.server)
    # Then the bridge is in force, and the MCP server of Jupyter AI is named with its off switch
    assert found["jupyter_ai_bridge"]["ok"] is True
    assert found["jupyter_ai_bridge"]["in_force"] is True
    ungated = found["ungated_agents"]
    assert "jupyter_server_mcp" in ungated["extensions"]
    assert "jupyter_ai_acp_client" not in ungated["extensions"]
    assert "without authentication" in ungated["detail"]
    assert ungated["turn_off"]["jupyter_server_mcp"] == (
        "`jupyter server extension disable jupyter_server_mcp`"
    )


def test_with_the_bridge_off_the_doctor_fails_it_and_jupyter_ai_is_as_it_was(
    without_bridge: JupyterAi,
):
    # Given Jupyter AI 3 with c.ApprovalsServer.jupyter_ai_bridge = False
    found = checks(without_bridge.server)
    # Then the doctor fails the bridge check and lists Jupyter AI's ACP client as ungated
    assert found["jupyter_ai_bridge"]["ok"] is False
    assert "jupyter_ai_bridge is False" in found["jupyter_ai_bridge"]["detail"]
    assert "jupyter_ai_acp_client" in found["ungated_agents"]["extensions"]
    # And Jupyter AI answers as it does without jupyter-approvals: the chat's Allow decides
    target = without_bridge.root / "unbound.txt"
    without_bridge.run(
        {"ask": write_call("off1", target, None, "asked\n"), "options": ALLOW_REJECT},
        {"write": {"path": str(target), "content": "other\n"}, "if_allowed": True},
    )
    time.sleep(HUMAN_PAUSE_S)
    deadline = time.monotonic() + 30
    while without_bridge.answer_in_chat("off1", "allow")[0] != 200:
        assert time.monotonic() < deadline, "the chat's question never appeared"
        time.sleep(0.2)
    asked, wrote = without_bridge.answers(2)
    assert asked["result"]["outcome"]["optionId"] == "allow"
    assert wrote["error"] is None
    assert target.read_text() == "other\n"
    assert without_bridge.server.pending() == []
