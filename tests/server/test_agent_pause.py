"""Pausing an agent: its held requests rejected at once, its sockets closed, its token refused
until the person resumes it; from the sidebar's REST call or from the CLI."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from jupyter_approvals import cli
from jupyter_approvals.core.journal.reader import read_entries
from jupyter_approvals.core.project import journal_path

from .agent_client import KernelSocket, add_agent, call
from .conftest import approvals_config


@pytest.fixture
def jp_server_config():
    """Agents' writes held one by one (policy ``ask``); policy ``sandbox`` stages them
    instead (test_sandbox_staged_writes.py)."""
    return approvals_config(agent_code="ask")


API = "jupyter-approvals/api"


@pytest.fixture
def agent_token(state_dir) -> str:
    return add_agent(state_dir, "bot")


async def held(jp_fetch) -> list[dict]:
    _, _, listing = await call(jp_fetch, API, "pending")
    return [item for item in listing["pending"] if item.get("held_at") == "server"]


async def test_one_pause_rejects_all_of_an_agents_requests_and_resume_lets_it_in_again(
    jp_fetch, kernels, jp_http_port, jp_base_url, agent_token, state_dir, jp_root_dir
):
    # Given three held requests of one agent, and one of another agent
    kernel = await kernels()
    agent = await KernelSocket.open(jp_http_port, jp_base_url, kernel.id, agent_token)
    other = await KernelSocket.open(
        jp_http_port, jp_base_url, kernel.id, add_agent(state_dir, "other")
    )
    try:
        for code in ("a = 1", "b = 2"):
            await agent.execute(code)
        await call(
            jp_fetch,
            "api",
            "contents",
            "notes.txt",
            token=agent_token,
            method="PUT",
            body=json.dumps({"type": "file", "format": "text", "content": "x"}),
        )
        await other.execute("c = 3")
        assert len(await held(jp_fetch)) == 4
        _, _, listing = await call(jp_fetch, API, "agents")
        assert {a["name"]: a["pending"] for a in listing["agents"]} == {"bot": 3, "other": 1}
        # When the person pauses the agent (one click in the sidebar)
        status, _, body = await call(
            jp_fetch, API, "agents", "bot", "pause", method="POST", body=""
        )
        assert (status, body["paused"]) == (200, True)
        # Then all three of its requests are rejected, the other agent's stays
        assert [item["agent"] for item in await held(jp_fetch)] == ["other"]
        path = journal_path(Path(jp_root_dir).resolve(), state_dir)
        entries = read_entries(path, limit=50).entries
        rejected = [e for e in entries if e["event"] == "rejected" and e.get("agent") == "bot"]
        assert len(rejected) == 3
        # (each reason names the person as people know them, the journal by their username)
        # (a token's anonymous user is given a new name on each request: only the shape holds)
        _, _, me = await call(jp_fetch, "api", "me")
        person = me["identity"]
        assert person["display_name"].startswith("Anonymous ")
        for entry in rejected:
            assert entry["reason"].startswith("agent bot was paused by Anonymous "), entry
            assert person["username"] not in entry["reason"]
        assert any(e["event"] == "agent_paused" and e["decided_by"] for e in entries)
        # And its open socket is closed, and its next call is refused with a code
        while (message := await agent.read(timeout=5)) is not None:
            assert message["msg_type"] in ("status", "execute_reply", "error")
        status, _, body = await call(jp_fetch, "api", "status", token=agent_token)
        assert (status, body["code"]) == (403, "APPROVAL_AGENT_PAUSED")
        # When the person resumes it
        status, _, body = await call(
            jp_fetch, API, "agents", "bot", "resume", method="POST", body=""
        )
        assert (status, body["paused"]) == (200, False)
        # Then it is let in again
        assert (await call(jp_fetch, "api", "status", token=agent_token))[0] == 200
        entries = read_entries(path, limit=5).entries
        assert entries[0]["event"] == "agent_resumed"
    finally:
        agent.close()
        other.close()


async def test_a_pause_from_the_cli_reaches_a_running_server(
    jp_fetch, kernels, jp_http_port, jp_base_url, agent_token, monkeypatch, state_dir
):
    kernel = await kernels()
    agent = await KernelSocket.open(jp_http_port, jp_base_url, kernel.id, agent_token)
    try:
        await agent.execute("a = 1")
        # When the person runs `jupyter approvals agent pause bot`
        assert cli.main(["agent", "pause", "bot"]) == 0
        # Then within the server's one-second sweep the agent's request is rejected
        await asyncio.sleep(1.5)
        assert await held(jp_fetch) == []
        status, _, body = await call(jp_fetch, "api", "status", token=agent_token)
        assert (status, body["code"]) == (403, "APPROVAL_AGENT_PAUSED")
        assert cli.main(["agent", "resume", "bot"]) == 0
        assert (await call(jp_fetch, "api", "status", token=agent_token))[0] == 200
    finally:
        agent.close()


async def test_agents_cannot_pause_or_list_agents(jp_fetch, agent_token, state_dir):
    add_agent(state_dir, "other")
    for method, parts in (("GET", ("agents",)), ("POST", ("agents", "other", "pause"))):
        kwargs = {"body": ""} if method == "POST" else {}
        status, _, body = await call(
            jp_fetch, API, *parts, token=agent_token, method=method, **kwargs
        )
        assert (status, body["code"]) == (403, "APPROVAL_AGENT_FORBIDDEN")
    status, _, body = await call(jp_fetch, API, "agents", "ghost", "pause", method="POST", body="")
    assert (status, body["code"]) == (404, "APPROVAL_UNKNOWN_AGENT")
