"""The agent code policy, and a server without authentication."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from jupyter_server.auth.identity import IdentityProvider, LegacyIdentityProvider, User
from jupyter_server.auth.login import LoginHandler
from traitlets.config import Config

from jupyter_approvals import cli
from jupyter_approvals.core.journal.reader import read_entries
from jupyter_approvals.core.project import journal_path
from tests.kernel.helpers import HUMAN_PAUSE_S, SETUP

from .agent_client import KernelSocket, add_agent, call
from .conftest import SANDBOXED_KERNELSPEC

API = "jupyter-approvals/api"


@pytest.fixture
def jp_server_config(request):
    return request.param


def server_config(**extra) -> Config:
    return Config({"ServerApp": {"jpserver_extensions": {"jupyter_approvals": True}}, **extra})


@pytest.mark.parametrize(
    "jp_server_config",
    [server_config(ApprovalsServer={"agent_code": "protected-only"})],
    indirect=True,
)
async def test_protected_only_runs_agent_code_and_protected_calls_name_the_agent(
    jp_fetch, kernels, jp_http_port, jp_base_url, state_dir, jp_root_dir
):
    # Given the protected-only policy and an agent on a notebook's kernel
    token = add_agent(state_dir, "bot")
    kernel = await kernels()
    agent = await KernelSocket.open(jp_http_port, jp_base_url, kernel.id, token, v1=False)
    try:
        # When the agent's code defines and calls a protected function
        assert (await agent.execute(SETUP))["reply"]["status"] == "ok"
        result = await agent.execute("save('new', 'out.txt')")
        # Then its code ran, but the protected call asks a person and names the agent
        assert result["reply"]["ename"] == "ApprovalPending"
        assert "nothing ran" in result["reply"]["evalue"]
        assert "wait(" not in result["reply"]["evalue"]  # an agent's cell must not block
        _, _, listing = await call(jp_fetch, API, "pending")
        [item] = listing["pending"]
        assert item["agent"] == "bot"
        assert item["held_at"] == "kernel"
        card = json.dumps([m["content"] for m in result["messages"]])
        assert "requested by agent bot" in card
        # When the person approves it in the sidebar, the agent's retry runs it
        await asyncio.sleep(HUMAN_PAUSE_S)
        status, _, body = await call(
            jp_fetch,
            *item["decide_url"].split("/"),
            method="POST",
            body=json.dumps({"decision": "approve", "fingerprint": item["fingerprint"]}),
        )
        assert status == 200, body
        assert (await agent.execute("save('new', 'out.txt')"))["reply"]["status"] == "ok"
        assert (Path(jp_root_dir) / "out.txt").read_text() == "new"
        # And the journal names the agent that asked and the person that decided
        path = journal_path(Path(jp_root_dir).resolve(), state_dir)
        entries = {e["event"]: e for e in read_entries(path, limit=20).entries}
        assert entries["requested"]["agent"] == "bot"
        assert entries["approved"]["decided_by"]
        assert not entries["approved"]["decided_by"].startswith("agent:")
    finally:
        agent.close()


@pytest.mark.parametrize(
    "jp_server_config",
    [server_config(ApprovalsServer={"agent_code": "protected-only"})],
    indirect=True,
)
@pytest.mark.parametrize("paused_from", ["sidebar", "cli"])
async def test_a_pause_rejects_what_the_agents_code_asked_for_in_a_kernel(
    jp_fetch, kernels, jp_http_port, jp_base_url, state_dir, jp_root_dir, paused_from
):
    # Given protected-only, and a protected request that an agent's code opened in a kernel
    token = add_agent(state_dir, "bot")
    kernel = await kernels()
    agent = await KernelSocket.open(jp_http_port, jp_base_url, kernel.id, token, v1=False)
    try:
        assert (await agent.execute(SETUP))["reply"]["status"] == "ok"
        assert (await agent.execute("save('new', 'out.txt')"))["reply"][
            "ename"
        ] == "ApprovalPending"
        # And one the person's own code opened in the same kernel
        mine = await kernel.pending_call("save('mine', 'mine.txt')")
        _, _, listing = await call(jp_fetch, API, "pending")
        assert sorted(item.get("agent") or "" for item in listing["pending"]) == ["", "bot"]
        await asyncio.sleep(HUMAN_PAUSE_S)  # the person has read the list
        # When the person pauses the agent
        if paused_from == "sidebar":
            status, _, _ = await call(
                jp_fetch, API, "agents", "bot", "pause", method="POST", body=""
            )
            assert status == 200
        else:
            assert cli.main(["agent", "pause", "bot"]) == 0
            await asyncio.sleep(2.5)  # the server's sweep, then the kernel's answer
        # Then the agent's kernel request is rejected with the pause as the reason
        _, _, listing = await call(jp_fetch, API, "pending")
        assert [item["id"] for item in listing["pending"]] == [mine["request_id"]]
        path = journal_path(Path(jp_root_dir).resolve(), state_dir)
        [rejected] = [e for e in read_entries(path, limit=50).entries if e["event"] == "rejected"]
        assert rejected["agent"] == "bot"
        assert rejected["reason"].startswith("agent bot was paused")
        # And it never runs
        assert not (Path(jp_root_dir) / "out.txt").exists()
    finally:
        agent.close()


@pytest.mark.parametrize(
    "jp_server_config",
    [
        server_config(
            ServerApp={
                "jpserver_extensions": {"jupyter_approvals": True},
                "token": "",
                "password": "",
            }
        )
    ],
    indirect=True,
)
async def test_without_authentication_agent_tokens_are_refused(jp_fetch, state_dir, jp_serverapp):
    # Given a server that runs without any authentication
    assert not jp_serverapp.identity_provider.auth_enabled
    token = add_agent(state_dir, "bot")
    # When an agent connects with its token
    status, _, body = await call(jp_fetch, "api", "status", token=token)
    # Then it is refused with a code (it could not be told from anyone else)
    assert status == 403
    assert body["code"] == "APPROVAL_NO_SERVER_AUTH"
    # And the doctor says the gate is not in force
    _, _, report = await call(jp_fetch, API, "doctor", headers={"Authorization": ""})
    check = next(c for c in report["checks"] if c["name"] == "agent_gate")
    assert not check["ok"]
    assert "authentication" in check["detail"]


@pytest.mark.parametrize("jp_server_config", [server_config()], indirect=True)
async def test_the_doctor_fails_when_the_gate_is_swapped_out_and_the_sweep_restores_it(
    jp_fetch, jp_serverapp, approvals, monkeypatch
):
    # Given a server with the gate in force
    async def gate_check() -> dict:
        _, _, report = await call(jp_fetch, API, "doctor")
        return {c["name"]: c for c in report["checks"]}

    checks = await gate_check()
    assert checks["agent_gate"]["ok"], checks["agent_gate"]
    assert checks["agent_gate"]["policy"] == "sandbox"  # the default
    settings = jp_serverapp.web_app.settings
    # When another extension puts the plain kernel websocket connection back
    wrapped = settings["kernel_websocket_connection_class"]
    settings["kernel_websocket_connection_class"] = wrapped.__mro__[1]
    # Then the gate's one-second sweep wraps it again
    await asyncio.sleep(1.5)
    assert settings["kernel_websocket_connection_class"].jupyter_approvals_wrapped
    # When the identity provider in force is replaced by a plain one (and the sweep, which
    # would wrap it again within a second, does not run meanwhile)
    monkeypatch.setattr(approvals, "keep_gate_in_force", lambda _settings: False)
    original = settings["identity_provider"]
    settings["identity_provider"] = IdentityProvider(token=original.token)
    try:
        checks = await gate_check()
    finally:
        settings["identity_provider"] = original
    # Then the doctor fails and says why
    assert not checks["agent_gate"]["ok"]
    assert "identity provider" in checks["agent_gate"]["detail"]


@pytest.mark.parametrize("jp_server_config", [server_config()], indirect=True)
async def test_the_doctor_fails_when_upstream_renamed_a_name_the_gate_relies_on(
    jp_fetch, monkeypatch
):
    # Given an installed jupyter_server that no longer has a handler the gate names
    from jupyter_approvals.server.gate import jupyter_server_seam as seam

    renamed = "jupyter_server.services.kernels.handlers.KernelActionHandlerV2"
    monkeypatch.setattr(seam, "HANDLERS", (*seam.HANDLERS, renamed))
    seam.missing.cache_clear()
    try:
        # When the doctor runs
        _, _, report = await call(jp_fetch, API, "doctor")
    finally:
        seam.missing.cache_clear()
    check = next(c for c in report["checks"] if c["name"] == "agent_gate")
    # Then the gate check fails and names it
    assert not check["ok"]
    assert renamed in check["detail"]


@pytest.mark.parametrize("jp_server_config", [server_config()], indirect=True)
@pytest.mark.parametrize(
    ("extension", "what", "turn_off"),
    [
        ("jupyter_mcp_server", "MCP server", "agent add --mcp"),
        ("jupyter_ai_jupyternaut", "no permission step", "disable jupyter_ai_jupyternaut"),
        ("jupyter_server_mcp", "without authentication", "disable jupyter_server_mcp"),
        ("jupyter_ai", "Jupyter AI 2", "disable jupyter_ai"),
        ("jupyter_ai_acp_client", "bound to nothing", "jupyter_ai_bridge = True"),
    ],
)
async def test_the_doctor_warns_of_agents_that_use_the_persons_identity(
    jp_fetch, jp_serverapp, extension, what, turn_off
):
    # Given an extension enabled that lets agents act as the person (Jupyter AI's ACP client
    # included: it is not installed here, so no bridge puts it through the gate)
    jp_serverapp.jpserver_extensions[extension] = True
    try:
        _, _, report = await call(jp_fetch, API, "doctor")
    finally:
        del jp_serverapp.jpserver_extensions[extension]
    check = next(c for c in report["checks"] if c["name"] == "ungated_agents")
    # Then the doctor warns, naming it, what it does and how to turn it off
    assert check["warning"] is True
    assert check["extensions"] == [extension]
    assert what in check["detail"]
    assert turn_off in check["turn_off"][extension]


class HeaderIdentityProvider(IdentityProvider):
    """A configured identity provider of a deployment: people are named by a proxy's header."""

    async def get_user(self, handler):
        name = handler.request.headers.get("X-Forwarded-User")
        if name:
            return User(username=name)
        return await super().get_user(handler)


@pytest.mark.parametrize(
    "jp_server_config",
    [
        server_config(
            ServerApp={
                "jpserver_extensions": {"jupyter_approvals": True},
                "identity_provider_class": HeaderIdentityProvider,
            }
        )
    ],
    indirect=True,
)
async def test_a_configured_identity_provider_is_wrapped_not_replaced(
    jp_fetch, jp_serverapp, state_dir
):
    # Given a deployment with its own identity provider
    provider = jp_serverapp.identity_provider
    # Then the one in force is that provider, made agent-aware
    assert type(provider) is HeaderIdentityProvider
    assert provider.jupyter_approvals_wrapped
    # And people are still whoever it says
    _, _, me = await call(jp_fetch, "api", "me", headers={"X-Forwarded-User": "ana"})
    assert me["identity"]["username"] == "ana"
    # While an agent token is the agent, even with a person's header on the request
    token = add_agent(state_dir, "bot")
    _, _, me = await call(jp_fetch, "api", "me", token=token, headers={"X-Forwarded-User": "ana"})
    assert me["identity"]["username"] == "agent:bot"


@pytest.mark.parametrize(
    "jp_server_config",
    [server_config(ApprovalsConfig={"request_timeout": 1.5})],
    indirect=True,
)
async def test_held_code_nobody_answers_times_out_and_is_journaled_by_itself(
    jp_fetch, kernels, jp_http_port, jp_base_url, state_dir, jp_root_dir
):
    # Given a server whose requests time out after 1.5 s, and an agent's held code
    token = add_agent(state_dir, "bot")
    kernel = await kernels()
    agent = await KernelSocket.open(jp_http_port, jp_base_url, kernel.id, token)
    try:
        held = await agent.execute("x = 1")
        assert held["reply"]["ename"] == "APPROVAL_PENDING"
        # When nobody answers and nothing asks the server anything
        await asyncio.sleep(3)
        # Then the server's own sweep ended it, and the journal says so
        path = journal_path(Path(jp_root_dir).resolve(), state_dir)
        events = [e["event"] for e in read_entries(path, limit=20).entries]
        assert events[:2] == ["timed_out", "requested"]
        # And the agent learns it once, then asks anew
        again = await agent.execute("x = 1")
        assert again["reply"]["ename"] == "APPROVAL_TIMED_OUT"
    finally:
        agent.close()


class HeaderLoginHandler(LoginHandler):
    """A pre-2.0 login handler (``ServerApp.login_handler_class``): people by a header."""

    @classmethod
    def get_user(cls, handler):
        return handler.request.headers.get("X-Legacy-User") or super().get_user(handler)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize(
    "jp_server_config",
    [
        server_config(
            ServerApp={
                "jpserver_extensions": {"jupyter_approvals": True},
                "login_handler_class": HeaderLoginHandler,
            }
        )
    ],
    indirect=True,
)
async def test_a_server_configured_the_legacy_way_keeps_its_login_and_knows_agents(
    jp_fetch, jp_serverapp, state_dir
):
    # Given a server configured with a login handler class, as before Jupyter Server 2
    provider = jp_serverapp.identity_provider
    # Then jupyter_server's own legacy provider is in force, set up as without the extension
    assert type(provider) is LegacyIdentityProvider
    assert provider.login_handler_class is HeaderLoginHandler
    assert provider.login_available
    assert provider.auth_enabled
    assert provider.jupyter_approvals_wrapped
    # And people are whoever the login handler says
    _, _, me = await call(jp_fetch, "api", "me", headers={"X-Legacy-User": "pinecone"})
    assert me["identity"]["username"] == "pinecone"
    # While an agent token is the agent
    token = add_agent(state_dir, "bot")
    _, _, me = await call(jp_fetch, "api", "me", token=token)
    assert me["identity"]["username"] == "agent:bot"


@pytest.mark.parametrize("jp_server_config", [server_config()], indirect=True)
@pytest.mark.parametrize("installed", [True, False], ids=["kernelspec", "no-kernelspec"])
async def test_the_doctor_and_the_sidebar_say_what_the_sandbox_policy_amounts_to(
    jp_fetch, jp_env_jupyter_path, installed
):
    # Given the default policy, with or without the "Python 3 (sandboxed)" kernelspec
    if installed:
        kernels = Path(jp_env_jupyter_path) / "kernels"
        shutil.copytree(SANDBOXED_KERNELSPEC, kernels / "python3-sandboxed")
    # When the person asks the doctor
    _, _, report = await call(jp_fetch, API, "doctor")
    [check] = [c for c in report["checks"] if c["name"] == "agent_gate"]
    # Then the check names the policy, and what it amounts to here
    assert check["policy"] == "sandbox"
    # And GET changes tells the sidebar the same, with the reason
    _, _, changes = await call(jp_fetch, API, "changes")
    if installed:
        assert check["effective_policy"] == "sandbox"
        assert "per cell" not in check["detail"]
        assert changes["sandbox"] == {
            "policy": "sandbox",
            "effective_policy": "sandbox",
            "unavailable": None,
        }
    else:
        assert check["effective_policy"] == "ask"
        assert "holds agent code per cell here" in check["detail"]
        assert changes["sandbox"] == {
            "policy": "sandbox",
            "effective_policy": "ask",
            "unavailable": "the 'python3-sandboxed' kernelspec is not installed",
        }
