"""Agents never read Jupyter's own secrets through the contents API, however the server is set up.

The server root is the home directory and hidden files are allowed (``allow_hidden=True``):
the setting under which a person's token files and configuration are closest to an agent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from traitlets.config import Config

from .agent_client import add_agent, call


@pytest.fixture
def jp_root_dir(jp_home_dir):
    return jp_home_dir


@pytest.fixture
def jp_server_config():
    return Config(
        {
            "ServerApp": {"jpserver_extensions": {"jupyter_approvals": True}},
            "ContentsManager": {"allow_hidden": True},
            # The hold of agents' writes; policy sandbox stages them (test_sandbox_staged_writes).
            "ApprovalsServer": {"agent_code": "ask"},
        }
    )


@pytest.fixture
def agent_token(state_dir) -> str:
    return add_agent(state_dir, "bot")


async def test_the_runtime_dir_token_file_is_out_of_reach(
    jp_fetch, jp_serverapp, jp_home_dir, agent_token
):
    # Given the server's runtime dir, with its jpserver-*.json (the person's token), reachable
    # from the root through a link with an ordinary name
    runtime = Path(jp_serverapp.runtime_dir)
    runtime.mkdir(parents=True, exist_ok=True)
    (runtime / "jpserver-1.json").write_text(json.dumps({"token": "the-persons-token"}))
    (Path(jp_home_dir) / "runtime-link").symlink_to(runtime)
    # When the agent reads it through the contents API
    status, _, reply = await call(
        jp_fetch, "api", "contents", "runtime-link", "jpserver-1.json", token=agent_token
    )
    # Then it is refused with a code
    assert status == 403
    assert reply["code"] == "APPROVAL_AGENT_FORBIDDEN"
    # While the person, with allow_hidden, still reads it
    status, _, _ = await call(jp_fetch, "api", "contents", "runtime-link", "jpserver-1.json")
    assert status == 200


@pytest.mark.parametrize(
    "path",
    [
        ".jupyter/jupyter_server_config.json",
        ".local/share/jupyter/runtime/jpserver-1.json",
        ".ssh/id_ed25519",
        "project/.env",
    ],
)
async def test_hidden_paths_are_refused_for_every_verb(jp_fetch, jp_home_dir, agent_token, path):
    # Given a hidden file under the root
    target = Path(jp_home_dir) / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text('{"secret": 1}')
    body = json.dumps({"type": "file", "format": "text", "content": "x"})
    for method, kwargs in (("GET", {}), ("PUT", {"body": body}), ("DELETE", {})):
        # When the agent reads, overwrites or deletes it
        status, _, reply = await call(
            jp_fetch,
            "api",
            "contents",
            *path.split("/"),
            token=agent_token,
            method=method,
            **kwargs,
        )
        # Then each is refused and the file is untouched
        assert status == 403, (method, reply)
        assert reply["code"] == "APPROVAL_AGENT_FORBIDDEN"
    assert target.read_text() == '{"secret": 1}'


async def test_renames_and_copies_into_or_out_of_hidden_places_are_refused(
    jp_fetch, jp_home_dir, agent_token
):
    # Given an ordinary file the agent may read
    (Path(jp_home_dir) / "notes.txt").write_text("hello")
    (Path(jp_home_dir) / ".jupyter").mkdir(exist_ok=True)
    status, _, _ = await call(jp_fetch, "api", "contents", "notes.txt", token=agent_token)
    assert status == 200
    # When it renames it into the config dir, or copies a hidden file out
    status, _, reply = await call(
        jp_fetch,
        "api",
        "contents",
        "notes.txt",
        token=agent_token,
        method="PATCH",
        body=json.dumps({"path": ".jupyter/jupyter_server_config.py"}),
    )
    assert (status, reply["code"]) == (403, "APPROVAL_AGENT_FORBIDDEN")
    status, _, reply = await call(
        jp_fetch,
        "api",
        "contents",
        token=agent_token,
        method="POST",
        body=json.dumps({"copy_from": ".jupyter/anything.json"}),
    )
    # Then both are refused and nothing moved
    assert (status, reply["code"]) == (403, "APPROVAL_AGENT_FORBIDDEN")
    assert (Path(jp_home_dir) / "notes.txt").read_text() == "hello"


@pytest.mark.parametrize(
    ("method", "parts", "body"),
    [
        (
            "PUT",
            ("work", "ipykernel_launcher.py"),
            {"type": "file", "format": "text", "content": "x"},
        ),
        ("PUT", ("helpers.py",), {"type": "file", "format": "text", "content": "import os"}),
        ("PUT", ("ext.so",), {"type": "file", "format": "base64", "content": "AA=="}),
        (
            "PUT",
            ("jupyter_server_config.json",),
            {"type": "file", "format": "text", "content": "{}"},
        ),
        ("PATCH", ("notes.txt",), {"path": "sitecustomize.py"}),
        ("POST", ("work",), {"copy_from": "module.py"}),
    ],
)
async def test_files_that_python_or_jupyter_run_are_held_not_written(
    jp_fetch, jp_home_dir, agent_token, method, parts, body
):
    # Given a directory where kernels start, and files the agent could copy or rename
    home = Path(jp_home_dir)
    (home / "work").mkdir(exist_ok=True)
    (home / "notes.txt").write_text("hello")
    (home / "module.py").write_text("print('x')")
    before = sorted(p.name for p in home.rglob("*"))
    # When the agent writes a module, a launcher, an extension or a config file
    status, _, reply = await call(
        jp_fetch,
        "api",
        "contents",
        *parts,
        token=agent_token,
        method=method,
        body=json.dumps(body),
    )
    # Then it waits for a person and nothing was written
    assert (status, reply["code"]) == (409, "APPROVAL_PENDING"), reply
    assert sorted(p.name for p in home.rglob("*")) == before


async def test_kernels_and_sessions_may_not_start_in_or_move_to_hidden_places(
    jp_fetch, jp_home_dir, agent_token
):
    (Path(jp_home_dir) / ".ssh").mkdir(exist_ok=True)
    status, _, reply = await call(
        jp_fetch,
        "api",
        "kernels",
        token=agent_token,
        method="POST",
        body=json.dumps({"name": "python3", "path": ".ssh"}),
    )
    assert (status, reply["code"]) == (403, "APPROVAL_AGENT_FORBIDDEN")
    status, _, own = await call(
        jp_fetch,
        "api",
        "sessions",
        token=agent_token,
        method="POST",
        body=json.dumps({"path": "a.ipynb", "type": "notebook", "kernel": {"name": "python3"}}),
    )
    assert status == 201
    try:
        status, _, reply = await call(
            jp_fetch,
            "api",
            "sessions",
            own["id"],
            token=agent_token,
            method="PATCH",
            body=json.dumps({"path": ".ssh/hidden.ipynb"}),
        )
        assert (status, reply["code"]) == (403, "APPROVAL_AGENT_FORBIDDEN")
    finally:
        await call(jp_fetch, "api", "sessions", own["id"], token=agent_token, method="DELETE")


@pytest.mark.parametrize("path", ["proc/self/environ", "proc/1/cmdline", "sys/kernel", "dev/shm"])
def test_a_server_rooted_at_slash_never_shows_processes_tokens(path):
    # Given a server whose root is "/" (a process's environment holds JUPYTER_TOKEN)
    from jupyter_approvals.server.gate.routes import secret_path_reason

    # Then /proc, /sys and /dev are out of reach for agents
    assert secret_path_reason(path, Path("/"), []) is not None
    assert secret_path_reason("etc/hostname", Path("/"), []) is None
