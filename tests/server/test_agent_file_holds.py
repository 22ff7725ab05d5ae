"""Agent writes through the contents API are held with a diff, carried out once after a
person's approval, and refused when the target changed in between."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from tests.conftest import journal_lines

from .agent_client import add_agent, approve, call, held
from .conftest import approvals_config


@pytest.fixture
def jp_server_config():
    """Agents' writes held one by one (policy ``ask``); policy ``sandbox`` stages them
    instead (test_sandbox_staged_writes.py)."""
    return approvals_config(agent_code="ask")


@pytest.fixture
def agent_token(state_dir) -> str:
    return add_agent(state_dir, "bot")


def text_file(content: str) -> str:
    return json.dumps({"type": "file", "format": "text", "content": content})


async def test_an_overwrite_is_held_with_a_diff_and_written_once_after_approval(
    jp_fetch, jp_root_dir, agent_token
):
    # Given data.csv, and an agent that overwrites one of its lines
    data = Path(jp_root_dir) / "data.csv"
    data.write_text("region,units\nnorth,120\nsouth,80\n")
    new = "region,units\nnorth,120\nsouth,95\n"
    # When the agent PUTs it
    status, _, reply = await call(
        jp_fetch,
        "api",
        "contents",
        "data.csv",
        token=agent_token,
        method="PUT",
        body=text_file(new),
    )
    # Then nothing was written; the agent is told why, with the request id
    assert (status, reply["code"]) == (409, "APPROVAL_PENDING")
    assert "nothing was written" in reply["message"]
    assert data.read_text() == "region,units\nnorth,120\nsouth,80\n"
    [item] = await held(jp_fetch)
    assert item["id"] == reply["request_id"]
    assert item["action"] == "file.write"
    # And the person sees the change as a diff
    assert "-south,80" in item["preview"]
    assert "+south,95" in item["preview"]
    assert item["summary"].startswith("Agent bot: Replace data.csv")
    # When the person approves and the agent sends the same request again
    await approve(jp_fetch, item)
    status, _, _ = await call(
        jp_fetch,
        "api",
        "contents",
        "data.csv",
        token=agent_token,
        method="PUT",
        body=text_file(new),
    )
    # Then it is written, once
    assert status == 200
    assert data.read_text() == new
    status, _, reply = await call(
        jp_fetch,
        "api",
        "contents",
        "data.csv",
        token=agent_token,
        method="PUT",
        body=text_file(new + "west,1\n"),
    )
    assert reply["code"] == "APPROVAL_PENDING"


async def test_a_target_changed_after_the_approval_refuses_the_write(
    jp_fetch, jp_root_dir, agent_token, state_dir
):
    # Given an agent's write, approved
    data = Path(jp_root_dir) / "data.csv"
    data.write_text("a\n1\n")
    body = text_file("a\n2\n")
    await call(jp_fetch, "api", "contents", "data.csv", token=agent_token, method="PUT", body=body)
    [item] = await held(jp_fetch)
    await approve(jp_fetch, item)
    # When the file changes before the agent sends the request again
    data.write_text("a\n1\n3\n")
    status, _, reply = await call(
        jp_fetch, "api", "contents", "data.csv", token=agent_token, method="PUT", body=body
    )
    # Then the write is refused and the person's change is kept
    assert (status, reply["code"]) == (409, "APPROVAL_FINGERPRINT_MISMATCH")
    assert data.read_text() == "a\n1\n3\n"
    # And the journal says so, with the refusal's own code
    lines = [line for line in journal_lines(state_dir) if line.get("request_id") == item["id"]]
    assert [line["event"] for line in lines] == ["requested", "approved", "refused"]
    assert lines[-1]["code"] == "APPROVAL_FINGERPRINT_MISMATCH"


async def test_a_folder_deletion_is_held_with_what_it_holds(jp_fetch, jp_root_dir, agent_token):
    folder = Path(jp_root_dir) / "data"
    folder.mkdir()
    (folder / "sales.csv").write_text("x\n" * 100)
    status, _, reply = await call(
        jp_fetch, "api", "contents", "data", token=agent_token, method="DELETE"
    )
    assert (status, reply["code"]) == (409, "APPROVAL_PENDING")
    assert (folder / "sales.csv").exists()
    [item] = await held(jp_fetch)
    assert item["action"] == "file.delete"
    assert "sales.csv" in item["preview"]
    await approve(jp_fetch, item)
    status, _, _ = await call(
        jp_fetch, "api", "contents", "data", token=agent_token, method="DELETE"
    )
    assert status == 204
    assert not folder.exists()


async def test_renames_copies_and_binary_writes_are_held_too(jp_fetch, jp_root_dir, agent_token):
    root = Path(jp_root_dir)
    (root / "report.ipynb").write_text(
        json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )
    (root / "dest").mkdir()
    requests = [
        ("PATCH", ("report.ipynb",), json.dumps({"path": "old-report.ipynb"}), "file.move"),
        ("POST", ("dest",), json.dumps({"copy_from": "report.ipynb"}), "file.copy"),
        (
            "PUT",
            ("blob.bin",),
            json.dumps(
                {
                    "type": "file",
                    "format": "base64",
                    "content": base64.b64encode(b"\0\1\2").decode(),
                }
            ),
            "file.write",
        ),
    ]
    for method, parts, body, action in requests:
        status, _, reply = await call(
            jp_fetch, "api", "contents", *parts, token=agent_token, method=method, body=body
        )
        assert (status, reply["code"]) == (409, "APPROVAL_PENDING"), (action, reply)
    actions = sorted(item["action"] for item in await held(jp_fetch))
    assert actions == ["file.copy", "file.move", "file.write"]
    assert sorted(p.name for p in root.iterdir()) == ["dest", "report.ipynb"]


async def test_creating_and_saving_notebooks_stays_open_to_agents(
    jp_fetch, jp_root_dir, agent_token
):
    nb = {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    status, _, _ = await call(
        jp_fetch,
        "api",
        "contents",
        "new.ipynb",
        token=agent_token,
        method="PUT",
        body=json.dumps({"type": "notebook", "format": "json", "content": nb}),
    )
    assert status == 201
    assert await held(jp_fetch) == []


async def test_the_person_writes_as_before(jp_fetch, jp_root_dir, agent_token):
    status, _, _ = await call(
        jp_fetch, "api", "contents", "mine.csv", method="PUT", body=text_file("x\n")
    )
    assert status == 201
    assert (Path(jp_root_dir) / "mine.csv").read_text() == "x\n"


@pytest.mark.parametrize(
    ("method", "parts", "raw"),
    [
        ("PUT", ("data.csv",), b'\x0c{"type": "file", "format": "text", "content": "PWNED"}'),
        ("PUT", ("new.csv",), b'\x0b{"type": "file", "format": "text", "content": "PWNED"}'),
        ("POST", ("sub",), b'\x0c{"copy_from": "data.csv"}'),
        ("PATCH", ("data.csv",), b'\x0c{"path": "sub/other.csv"}'),
    ],
)
async def test_a_body_the_gate_would_read_otherwise_than_the_server_is_refused(
    jp_fetch, jp_root_dir, agent_token, method, parts, raw
):
    # Given a body that only parses after bytes.strip() (as jupyter_server reads bodies)
    root = Path(jp_root_dir)
    (root / "data.csv").write_text("a\n")
    (root / "sub").mkdir()
    status, _, reply = await call(
        jp_fetch, "api", "contents", *parts, token=agent_token, method=method, body=raw
    )
    # Then it is either refused or held, and nothing was written
    assert status in (403, 409), reply
    assert reply["code"] in ("APPROVAL_AGENT_FORBIDDEN", "APPROVAL_PENDING")
    assert (root / "data.csv").read_text() == "a\n"
    assert sorted(p.name for p in root.rglob("*")) == ["data.csv", "sub"]


async def test_base64_with_stray_characters_is_held(jp_fetch, jp_root_dir, agent_token):
    # "UFdO\nRUQK" is "PWNED\n": jupyter_server decodes it, skipping the newline
    body = json.dumps({"type": "file", "format": "base64", "content": "UFdO\nRUQK"})
    status, _, reply = await call(
        jp_fetch, "api", "contents", "data.csv", token=agent_token, method="PUT", body=body
    )
    assert (status, reply["code"]) == (409, "APPROVAL_PENDING")
    assert not (Path(jp_root_dir) / "data.csv").exists()
    [item] = await held(jp_fetch)
    assert "+PWNED" in item["preview"]


@pytest.mark.parametrize(
    ("path", "body"),
    [
        (
            "package.json",
            {
                "type": "notebook",
                "content": {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5},
            },
        ),
        ("data.csv", {"type": "file", "format": "text", "content": "x", "chunk": 2}),
    ],
)
async def test_notebook_saves_off_ipynb_paths_and_chunked_uploads_are_refused(
    jp_fetch, jp_root_dir, agent_token, path, body
):
    target = Path(jp_root_dir) / path
    target.write_text("original\n")
    status, _, reply = await call(
        jp_fetch, "api", "contents", path, token=agent_token, method="PUT", body=json.dumps(body)
    )
    assert (status, reply["code"]) == (403, "APPROVAL_AGENT_FORBIDDEN")
    assert target.read_text() == "original\n"


async def test_creating_a_checkpoint_is_held_it_replaces_the_persons_restore_point(
    jp_fetch, jp_root_dir, agent_token
):
    (Path(jp_root_dir) / "c.txt").write_text("v1\n")
    status, _, reply = await call(
        jp_fetch,
        "api",
        "contents",
        "c.txt",
        "checkpoints",
        token=agent_token,
        method="POST",
        body="",
    )
    assert (status, reply["code"]) == (409, "APPROVAL_PENDING")
    [item] = await held(jp_fetch)
    assert item["action"] == "file.checkpoint"
