"""The agent registry and ``jupyter approvals agent``: tokens shown once, only hashes kept."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest

from jupyter_approvals import cli
from jupyter_approvals.core import agents
from jupyter_approvals.core.errors import (
    ApprovalAgentExists,
    ApprovalAgentRegistryUnreadable,
    ApprovalInvalidArgument,
    ApprovalUnknownAgent,
)


@pytest.fixture
def state_dir(tmp_path, monkeypatch):
    state = tmp_path / "state"
    monkeypatch.setenv("JUPYTER_APPROVALS_STATE_DIR", str(state))
    return state


def registry(state_dir) -> agents.AgentRegistry:
    return agents.AgentRegistry(agents.registry_path(state_dir))


def test_a_token_matches_its_agent_and_only_its_hash_is_stored(state_dir):
    # When an agent is added
    record, token = registry(state_dir).add("bot")
    # Then its token names it, and the file holds the hash, never the token
    assert token.startswith(agents.TOKEN_PREFIX)
    assert registry(state_dir).match(token) == record
    raw = agents.registry_path(state_dir).read_text()
    assert token not in raw
    assert agents.hash_token(token) in raw
    # And the registry is private: directory 0700, file 0600
    assert stat.S_IMODE(os.stat(state_dir).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(agents.registry_path(state_dir)).st_mode) == 0o600


def test_wrong_and_foreign_tokens_match_nothing(state_dir):
    registry(state_dir).add("bot")
    assert registry(state_dir).match("jpagent_" + "A" * 43) is None
    assert registry(state_dir).match("the-persons-server-token") is None
    assert registry(state_dir).match("") is None


def test_a_removal_is_seen_by_a_registry_that_was_already_reading(state_dir):
    # Given the server's registry, which has already matched a token
    server_side = registry(state_dir)
    _, token = registry(state_dir).add("bot")
    assert server_side.match(token) is not None
    # When the CLI removes the agent
    registry(state_dir).remove("bot")
    # Then the server's registry refuses the token at once
    assert server_side.match(token) is None
    assert not server_side.is_registered("bot")


def test_names_are_checked_and_unique(state_dir):
    with pytest.raises(ApprovalInvalidArgument):
        registry(state_dir).add("Bad Name")
    with pytest.raises(ApprovalInvalidArgument):
        registry(state_dir).add("-starts-with-dash")
    registry(state_dir).add("bot")
    with pytest.raises(ApprovalAgentExists):
        registry(state_dir).add("bot")
    with pytest.raises(ApprovalUnknownAgent):
        registry(state_dir).remove("nobody")


def test_concurrent_adds_lose_nothing(state_dir):
    # When eight agents are added at once
    names = [f"agent-{i}" for i in range(8)]
    threads = [threading.Thread(target=registry(state_dir).add, args=(n,)) for n in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # Then every one of them is registered
    assert sorted(registry(state_dir).records()) == names


def test_a_damaged_registry_refuses_every_token(state_dir):
    _, token = registry(state_dir).add("bot")
    agents.registry_path(state_dir).write_text('{"v": 1, "agents": [{"name": "bot"}]}')
    reader = registry(state_dir)
    assert reader.match(token) is None
    assert isinstance(reader.problem, ApprovalAgentRegistryUnreadable)
    with pytest.raises(ApprovalAgentRegistryUnreadable):
        reader.records()
    with pytest.raises(ApprovalAgentRegistryUnreadable):
        reader.add("other")


def test_cli_add_json_prints_the_token_once(state_dir, capsys):
    # When the person adds an agent with --json
    assert cli.main(["agent", "add", "bot", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    # Then one line of JSON names it and carries a working token
    assert set(printed) == {"name", "token"}
    assert registry(state_dir).match(printed["token"]).name == "bot"
    # And listing never shows the token or its hash
    assert cli.main(["agent", "list", "--json"]) == 0
    listed = capsys.readouterr().out
    assert printed["token"] not in listed
    assert json.loads(listed)["agents"][0]["name"] == "bot"


def program(folder: Path, name: str) -> Path:
    """An executable called ``name`` in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


def test_cli_add_mcp_starts_the_server_with_uvx_when_there_is_one(
    state_dir, capsys, monkeypatch, tmp_path
):
    # Given uvx on PATH (and an installed server too)
    program(tmp_path / "bin", "uvx")
    program(tmp_path / "bin", "jupyter-mcp-server")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    # When the configuration is printed
    assert cli.main(["agent", "add", "bot", "--mcp", "--url", "http://127.0.0.1:9999/"]) == 0
    out, err = capsys.readouterr()
    # Then uvx runs the pinned release, and nothing is said on stderr
    [entry] = json.loads(out)["mcpServers"].values()
    assert (entry["command"], entry["args"]) == ("uvx", ["jupyter-mcp-server==2.2.4"])
    assert err == ""


def test_cli_add_mcp_uses_an_installed_server_without_uvx(state_dir, capsys, monkeypatch, tmp_path):
    # Given no uvx, but jupyter-mcp-server installed on PATH
    installed = program(tmp_path / "bin", "jupyter-mcp-server")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    # When the configuration is printed
    assert cli.main(["agent", "add", "bot", "--mcp", "--url", "http://127.0.0.1:9999/"]) == 0
    out, err = capsys.readouterr()
    # Then it starts that server by its path: the configuration works as printed
    [entry] = json.loads(out)["mcpServers"].values()
    assert (entry["command"], entry["args"]) == (str(installed), [])
    # And its kernel websockets open again after a pause is lifted
    assert entry["env"]["RECONNECT_INTERVAL"] == "5"
    assert err == ""


def test_cli_add_mcp_says_how_to_get_uvx_when_nothing_can_start_the_server(
    state_dir, capsys, monkeypatch, tmp_path
):
    # Given neither uvx nor an installed server
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    # When the configuration is printed
    assert cli.main(["agent", "add", "bot", "--mcp", "--url", "http://127.0.0.1:9999/"]) == 0
    out, err = capsys.readouterr()
    # Then stdout is still the configuration alone (it can be piped), and stderr says how to
    # get what it starts
    [entry] = json.loads(out)["mcpServers"].values()
    assert entry["command"] == "uvx"
    assert "pip install uv" in err
    assert "pip install 'jupyter-mcp-server==2.2.4'" in err


def test_cli_add_mcp_prints_a_configuration_jupyter_mcp_server_reads(state_dir, capsys):
    assert cli.main(["agent", "add", "bot", "--mcp", "--url", "http://127.0.0.1:9999/"]) == 0
    config = json.loads(capsys.readouterr().out)
    [entry] = config["mcpServers"].values()
    env = entry["env"]
    token = env["JUPYTER_TOKEN"]
    assert registry(state_dir).match(token).name == "bot"
    for prefix in ("JUPYTER", "DOCUMENT", "RUNTIME", "CODE_SANDBOX"):
        assert env[f"{prefix}_URL"] == "http://127.0.0.1:9999/"
        assert env[f"{prefix}_TOKEN"] == token


def test_cli_errors_are_coded_and_exit_2(state_dir, capsys):
    assert cli.main(["agent", "add", "bot"]) == 0
    out = capsys.readouterr().out
    assert "shown only now" in out
    assert cli.main(["agent", "add", "bot"]) == 2
    assert "APPROVAL_AGENT_EXISTS" in capsys.readouterr().err
    assert cli.main(["agent", "remove", "ghost"]) == 2
    assert "APPROVAL_UNKNOWN_AGENT" in capsys.readouterr().err
    assert cli.main(["agent", "remove", "bot"]) == 0
    assert cli.main(["agent", "list"]) == 0
    assert "no agents registered" in capsys.readouterr().out


def test_cli_pause_and_resume_keep_the_token_and_show_the_state(state_dir, capsys):
    assert cli.main(["agent", "add", "bot", "--json"]) == 0
    token = json.loads(capsys.readouterr().out)["token"]
    # When the person pauses the agent
    assert cli.main(["agent", "pause", "bot"]) == 0
    assert "paused" in capsys.readouterr().out
    # Then it is still the agent's token, but the agent is not active
    reader = registry(state_dir)
    assert reader.match(token).paused is True
    assert not reader.is_active("bot")
    assert cli.main(["agent", "list"]) == 0
    assert "paused" in capsys.readouterr().out
    # And resuming lets it in again
    assert cli.main(["agent", "resume", "bot"]) == 0
    assert reader.is_active("bot")
    assert cli.main(["agent", "pause", "ghost"]) == 2
    assert "APPROVAL_UNKNOWN_AGENT" in capsys.readouterr().err


def test_an_agent_of_a_hub_token_is_registered_once_without_a_token(state_dir):
    # Given an empty registry
    registry = agents.AgentRegistry(agents.registry_path(state_dir))
    # When the server meets the agent of a JupyterHub token twice
    first = registry.hub_agent("hub-alice-a12")
    again = registry.hub_agent("hub-alice-a12")
    # Then it is registered once, as a hub agent, with no token any request could match
    assert first == again
    assert first.hub
    stored = json.loads(agents.registry_path(state_dir).read_text())["agents"]
    assert stored == [
        {
            "name": "hub-alice-a12",
            "token_sha256": None,
            "created_at": first.created_at,
            "paused": False,
            "hub": True,
        }
    ]
    assert registry.match(agents.TOKEN_PREFIX) is None
    assert registry.match("") is None
    # And a person can pause it like any agent
    registry.set_paused("hub-alice-a12", True)
    assert not registry.is_active("hub-alice-a12")


def test_names_of_hub_agents_cannot_be_taken_by_a_registered_agent(state_dir):
    # Given a registry; when a person registers an agent under a hub agent's name
    registry = agents.AgentRegistry(agents.registry_path(state_dir))
    with pytest.raises(ApprovalInvalidArgument, match="hub-"):
        registry.add("hub-alice-a12")
    # Then nothing is registered
    assert registry.records() == {}


def test_a_hub_entry_holding_a_token_hash_is_a_damaged_registry(state_dir):
    # Given a registry file whose hub entry also names a token hash (a hand edit)
    path = agents.registry_path(state_dir)
    registry = agents.AgentRegistry(path)
    registry.add("bot")
    data = json.loads(path.read_text())
    data["agents"][0]["hub"] = True
    path.write_text(json.dumps(data))
    # Then the registry is unreadable: every agent token is refused
    with pytest.raises(ApprovalAgentRegistryUnreadable):
        registry.records()
