"""An agent under the ``protected-only`` policy (its code runs; protected calls ask): what it
tries through its own kernel websocket and from the code it runs (T2)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from traitlets.config import Config

from tests.kernel.helpers import HUMAN_PAUSE_S
from tests.server.agent_client import KernelSocket

from .conftest import journal_of
from .test_rest_credentials import WRITER

pytestmark = pytest.mark.kernel


@pytest.fixture
def jp_server_config() -> Config:
    return Config(
        {
            "ServerApp": {"jpserver_extensions": {"jupyter_approvals": True}},
            "ApprovalsServer": {"kernel_timeout": 3.0, "agent_code": "protected-only"},
        }
    )


@pytest.fixture
def agent_on_kernel(
    jp_fetch: Any, kernels: Any, jp_http_port: int, jp_base_url: str, agent_token: str
) -> Any:
    """``await agent_on_kernel()``: a kernel of a notebook, and the agent's socket to it (the
    server listens once ``jp_fetch`` is set up)."""
    sockets: list[KernelSocket] = []

    async def open_() -> KernelSocket:
        kernel = await kernels()
        agent = await KernelSocket.open(jp_http_port, jp_base_url, kernel.id, agent_token, v1=False)
        sockets.append(agent)
        return agent

    yield open_
    for agent in sockets:
        agent.close()


def card_of(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The approval card's model id and state, from the comm_open the agent's socket saw."""
    for message in messages:
        content = message["content"]
        state = (content.get("data") or {}).get("state") or {}
        if message["msg_type"] == "comm_open" and str(state.get("_anywidget_id", "")).endswith(
            "ApprovalCard"
        ):
            return {"model_id": content["comm_id"], **state}
    raise AssertionError("no card was shown to the agent")


async def test_an_agent_cannot_press_the_card_it_was_shown(
    agent_on_kernel: Any, jp_root_dir: Any
) -> None:
    # Given an agent whose protected call is pending; its socket received the card
    agent = await agent_on_kernel()
    assert (await agent.execute(WRITER))["reply"]["status"] == "ok"
    result = await agent.execute("save('x', 'agent.txt')")
    assert result["reply"]["ename"] == "ApprovalPending"
    card = card_of(result["messages"])
    await asyncio.sleep(HUMAN_PAUSE_S)
    # When it sends the card's own decide message to the card's model, as the view would
    content = {
        "op": "decide",
        "id": card["request_id"],
        "decision": "approve",
        "fingerprint": card["fingerprint"],
        "reason": "",
        "shown": {k: card.get(k) for k in ("action", "summary", "preview", "fingerprint")},
    }
    msg_id = await agent.send(
        "comm_msg",
        {"comm_id": card["model_id"], "data": {"method": "custom", "content": content}},
    )
    [closed] = await agent.replies_to(msg_id, timeout=10, first_only=True)
    # Then the server refuses it before the kernel sees it, and the call still asks
    assert closed["msg_type"] == "comm_close"
    assert closed["content"]["data"]["code"] == "APPROVAL_AGENT_FORBIDDEN"
    again = await agent.execute("save('x', 'agent.txt')")
    assert again["reply"]["ename"] == "ApprovalPending"
    assert not (Path(jp_root_dir) / "agent.txt").exists()


async def test_an_agents_code_calling_the_decision_function_is_refused_and_journaled(
    agent_on_kernel: Any, jp_root_dir: Any, state_dir: Path
) -> None:
    # Given an agent's pending protected call
    agent = await agent_on_kernel()
    await agent.execute(WRITER)
    result = await agent.execute("save('x', 'agent.txt')")
    card = card_of(result["messages"])
    await asyncio.sleep(HUMAN_PAUSE_S)
    # When the agent's own code decides it in the kernel
    attempt = await agent.execute(
        "from jupyter_approvals.kernel.session import KernelSession\n"
        f"KernelSession.current().decisions.decide({card['request_id']!r}, 'approve', "
        f"{card['fingerprint']!r})"
    )
    # Then the kernel refuses it, journals the refusal under the agent's request, nothing ran
    assert attempt["reply"]["ename"] == "ApprovalNotFromFrontend"
    again = await agent.execute("save('x', 'agent.txt')")
    assert again["reply"]["ename"] == "ApprovalPending"
    assert not (Path(jp_root_dir) / "agent.txt").exists()
    [refusal] = [
        e
        for e in journal_of(jp_root_dir, state_dir)
        if e["event"] == "refused" and e.get("request_id") == card["request_id"]
    ]
    assert refusal["code"] == "APPROVAL_NOT_FROM_FRONTEND"
    assert refusal["agent"] == "bot"


async def test_an_agent_cannot_open_the_approvals_comm_with_a_decision(
    agent_on_kernel: Any, jp_root_dir: Any
) -> None:
    # Given an agent's pending protected call
    agent = await agent_on_kernel()
    await agent.execute(WRITER)
    card = card_of((await agent.execute("save('x', 'agent.txt')"))["messages"])
    await asyncio.sleep(HUMAN_PAUSE_S)
    # When it opens the approvals comm with a decide message, and sends one on it
    decide = {
        "op": "decide",
        "id": card["request_id"],
        "decision": "approve",
        "fingerprint": card["fingerprint"],
    }
    for msg_type, content in (
        ("comm_open", {"comm_id": "a1", "target_name": "jupyter_approvals", "data": decide}),
        ("comm_msg", {"comm_id": "a1", "data": decide}),
    ):
        msg_id = await agent.send(msg_type, content)
        [closed] = await agent.replies_to(msg_id, timeout=10, first_only=True)
        # Then each is closed with the code
        assert closed["msg_type"] == "comm_close"
        assert closed["content"]["data"]["code"] == "APPROVAL_AGENT_FORBIDDEN"
    again = await agent.execute("save('x', 'agent.txt')")
    assert again["reply"]["ename"] == "ApprovalPending"
    assert not (Path(jp_root_dir) / "agent.txt").exists()
