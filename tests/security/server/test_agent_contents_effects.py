"""Agent writes judged by their effect at the contents manager, however the request is spelled.

Each attempt is made as an agent with a token of its own, over REST, against a real
jupyter_server whose root is the home directory with hidden files allowed (``allow_hidden``:
jupyter_server's own hidden-path checks are off, so only the gate stands in the way). The
gate must not read the body the way it expects jupyter_server to: whatever the spelling, what
would land on disk is held for a person or refused, and nothing is written before that.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from traitlets.config import Config

from tests.server.agent_client import approve, call, held

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:jupyter_server")

#: A module that leaves a marker when anything imports or runs it.
PAYLOAD = "open('PWNED', 'w').write('ran')\n"


@pytest.fixture
def jp_root_dir(jp_home_dir):
    return jp_home_dir


@pytest.fixture
def jp_server_config(request):
    """The hold of agents' writes (policy ``ask``, and anything ``sandbox`` does not stage);
    a test parametrized with ``"sandbox"`` gets that policy, which stages file saves."""
    return Config(
        {
            "ServerApp": {"jpserver_extensions": {"jupyter_approvals": True}},
            "ContentsManager": {"allow_hidden": True},
            "ApprovalsServer": {"agent_code": getattr(request, "param", "ask")},
        }
    )


def tree(root: Path) -> dict[str, bytes | None]:
    """Everything below ``root`` (a folder as None), but the server's own dirs."""
    skip = {".local", ".jupyter", ".cache", ".ipython", "approvals-state"}
    found: dict[str, bytes | None] = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if relative.parts[0] in skip:
            continue
        found[str(relative)] = None if path.is_dir() else path.read_bytes()
    return found


def text(content: str, **extra: Any) -> str:
    return json.dumps({"content": content, "format": "text", **extra})


#: Contents requests whose body is not what the gate used to expect; each would write
#: ``work/helpers.py`` or a file in ``work/`` if the server alone decided.
SPELLINGS = [
    pytest.param("PUT", ("work", "helpers.py"), text(PAYLOAD), id="put-without-type"),
    pytest.param("PUT", ("work", "helpers.py"), text(PAYLOAD, type="File"), id="put-type-File"),
    pytest.param("PUT", ("work", "helpers.py"), text(PAYLOAD, type="text"), id="put-type-text"),
    pytest.param("PUT", ("work", "helpers.py"), text(PAYLOAD, type=None), id="put-type-null"),
    pytest.param(
        "PUT",
        ("work", "helpers.py"),
        text(PAYLOAD, type="file", copy_from=""),
        id="put-empty-copy-from",
    ),
    pytest.param(
        "PUT",
        ("work", "helpers.py"),
        json.dumps(
            {
                "type": "file",
                "format": "base64",
                "content": base64.b64encode(PAYLOAD.encode()).decode(),
            }
        ),
        id="put-base64",
    ),
    pytest.param("POST", ("work",), json.dumps({"ext": ".py"}), id="post-ext"),
    pytest.param(
        "POST", ("work",), json.dumps({"copy_from": "", "ext": ".py"}), id="post-empty-copy-from"
    ),
    pytest.param(
        "POST", ("work",), json.dumps({"copy_from": 0, "ext": ".py"}), id="post-zero-copy-from"
    ),
    pytest.param(
        "POST",
        ("work",),
        json.dumps({"copy_from": False, "type": "File", "ext": ".py"}),
        id="post-false-copy-from",
    ),
    pytest.param("POST", ("work",), json.dumps({"type": "directory"}), id="post-folder"),
    pytest.param("PUT", ("work", "pkg"), json.dumps({"type": "directory"}), id="put-folder"),
    pytest.param("PUT", ("work",), "", id="put-empty-body"),
    pytest.param("POST", ("work",), "", id="post-empty-body"),
    pytest.param("POST", ("work",), json.dumps({"copy_from": "notes.txt"}), id="post-copy"),
    pytest.param(
        "POST", ("work",), json.dumps({"copy_from": "report.ipynb"}), id="post-copy-notebook"
    ),
    pytest.param("PATCH", ("notes.txt",), json.dumps({"path": "work/notes.py"}), id="rename"),
    pytest.param("DELETE", ("notes.txt",), "", id="delete-file"),
    pytest.param("DELETE", ("work",), "", id="delete-folder"),
    pytest.param("POST", ("notes.txt", "checkpoints"), "", id="create-checkpoint"),
]


@pytest.mark.parametrize("jp_server_config", ["ask", "sandbox"], indirect=True)
@pytest.mark.parametrize(("method", "parts", "body"), SPELLINGS)
async def test_every_spelling_of_a_contents_change_waits_for_a_person(
    jp_fetch, jp_root_dir, agent_token, method, parts, body, jp_server_config
):
    # Given a project with a folder, a text file and a notebook
    root = Path(jp_root_dir)
    (root / "work").mkdir()
    (root / "notes.txt").write_text("hello\n")
    (root / "report.ipynb").write_text(
        json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )
    before = tree(root)
    # When the agent sends the change, spelled its way
    kwargs = {"body": body} if method != "DELETE" else {}
    if method in ("POST", "PUT") and body == "":
        kwargs = {"body": ""}
    status, _, reply = await call(
        jp_fetch, "api", "contents", *parts, token=agent_token, method=method, **kwargs
    )
    # Then nothing changed on disk: it waits for a person, or it is refused with a code, or
    # (policy sandbox, a file save, copy, rename or deletion) it is staged in the agent's
    # change set
    assert tree(root) == before, (status, reply)
    if status in (200, 201, 204):
        assert jp_server_config.ApprovalsServer.agent_code == "sandbox", reply
        _, _, listing = await call(jp_fetch, "jupyter-approvals/api", "changes")
        [change_set] = listing["change_sets"]
        assert change_set["kernel_id"] == "agent-bot"
        changed = parts[0] if method == "DELETE" else reply["path"]
        assert [c["path"] for c in change_set["changes"]] == [changed]
        if method in ("POST", "PUT"):
            assert reply["jupyter_approvals_staged_in"] == "agent-bot"
        return
    assert status in (403, 409), reply
    assert reply["code"] in ("APPROVAL_PENDING", "APPROVAL_AGENT_FORBIDDEN")
    if reply["code"] == "APPROVAL_PENDING":
        [item] = await held(jp_fetch)
        assert item["id"] == reply["request_id"]


@pytest.mark.parametrize(
    ("method", "parts", "body"),
    [
        pytest.param("POST", ("",), {"ext": "/../.git"}, id="ext-names-git"),
        pytest.param("POST", ("work",), {"ext": "/../../.bashrc"}, id="ext-climbs-to-bashrc"),
        pytest.param("POST", ("",), {"type": "file", "ext": "x/../.git"}, id="ext-git-file"),
        pytest.param("POST", ("",), {"ext": "/../.ssh/authorized_keys"}, id="ext-ssh"),
        pytest.param(
            "POST", ("",), {"ext": "/../.jupyter/jupyter_server_config.py"}, id="ext-config"
        ),
        pytest.param("POST", ("",), {"ext": "/../work/../evil.py"}, id="ext-dot-dot"),
        pytest.param("PUT", (".git",), {"type": "directory"}, id="put-git-folder"),
        pytest.param(
            "PUT",
            ("work", ".env"),
            {"type": "file", "format": "text", "content": "A=1"},
            id="put-dotenv",
        ),
        pytest.param("PATCH", ("notes.txt",), {"path": "work/../.bashrc"}, id="rename-dot-dot"),
        pytest.param("POST", ("work",), {"copy_from": ".ssh/id_rsa"}, id="copy-key-out"),
        pytest.param("POST", (".ssh",), {"copy_from": "notes.txt"}, id="copy-into-ssh"),
        pytest.param("POST", ("",), {"copy_from": "work"}, id="copy-folder"),
        pytest.param(
            "PUT",
            ("notes.txt",),
            {
                "type": "notebook",
                "content": {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5},
            },
            id="notebook-over-text",
        ),
        pytest.param(
            "PUT",
            ("notes.txt",),
            {"type": "file", "format": "text", "content": "x", "chunk": 1},
            id="chunk",
        ),
        pytest.param(
            "PUT",
            ("notes.txt",),
            {"type": "file", "format": "hex", "content": "00"},
            id="unknown-format",
        ),
        pytest.param(
            "PUT",
            ("notes.txt",),
            {"type": "file", "format": "text", "content": None},
            id="content-null",
        ),
    ],
)
async def test_hidden_places_and_what_cannot_be_shown_are_refused_whatever_names_them(
    jp_fetch, jp_root_dir, agent_token, method, parts, body
):
    # Given a home-rooted server with a project, a key and no git repository
    root = Path(jp_root_dir)
    (root / "work").mkdir()
    (root / "notes.txt").write_text("hello\n")
    (root / ".ssh").mkdir()
    (root / ".ssh" / "id_rsa").write_text("KEY")
    before = tree(root)
    # When the agent names a hidden place through a field jupyter_server turns into a path
    status, _, reply = await call(
        jp_fetch,
        "api",
        "contents",
        *[p for p in parts if p],
        token=agent_token,
        method=method,
        body=json.dumps(body),
    )
    # Then it is refused with a code, and nothing was created, copied or moved
    assert (status, reply["code"]) == (403, "APPROVAL_AGENT_FORBIDDEN"), reply
    assert tree(root) == before
    assert not (root / ".git").exists()
    assert await held(jp_fetch) == []


async def test_a_write_held_from_any_spelling_lands_once_after_approval(
    jp_fetch, jp_root_dir, agent_token
):
    # Given an agent whose file write, spelled without a type, waits for a person
    root = Path(jp_root_dir)
    body = text("print('hi')\n")
    status, _, reply = await call(
        jp_fetch, "api", "contents", "hello.py", token=agent_token, method="PUT", body=body
    )
    assert (status, reply["code"]) == (409, "APPROVAL_PENDING")
    [item] = await held(jp_fetch)
    # Then the person sees the bytes that would land, at the path they would land at
    assert item["action"] == "file.write"
    assert "+print('hi')" in item["preview"]
    assert "hello.py" in item["summary"]
    # When the person approves and the agent sends it again
    await approve(jp_fetch, item)
    status, _, _ = await call(
        jp_fetch, "api", "contents", "hello.py", token=agent_token, method="PUT", body=body
    )
    # Then it is written once
    assert status == 201
    assert (root / "hello.py").read_text() == "print('hi')\n"


async def test_a_copy_is_held_as_the_file_it_creates_and_names_its_source(
    jp_fetch, jp_root_dir, agent_token
):
    root = Path(jp_root_dir)
    (root / "work").mkdir()
    (root / "notes.txt").write_text("hello\n")
    status, _, reply = await call(
        jp_fetch,
        "api",
        "contents",
        "work",
        token=agent_token,
        method="POST",
        body=json.dumps({"copy_from": "notes.txt"}),
    )
    assert (status, reply["code"]) == (409, "APPROVAL_PENDING")
    [item] = await held(jp_fetch)
    assert item["action"] == "file.copy"
    assert "work/notes.txt" in item["summary"]
    assert "a copy of notes.txt" in item["summary"]
    assert "+hello" in item["preview"]
    await approve(jp_fetch, item)
    status, _, _ = await call(
        jp_fetch,
        "api",
        "contents",
        "work",
        token=agent_token,
        method="POST",
        body=json.dumps({"copy_from": "notes.txt"}),
    )
    assert status == 201
    assert (root / "work" / "notes.txt").read_text() == "hello\n"


@pytest.mark.parametrize(
    "spelling",
    [
        pytest.param({"type": "File", "format": "text"}, id="type-File"),
        pytest.param({"format": "text"}, id="no-type"),
        pytest.param({"type": "blob", "format": "text"}, id="type-blob"),
    ],
)
async def test_a_kernel_an_agent_starts_never_runs_a_launcher_it_tried_to_plant(
    jp_fetch, jp_serverapp, jp_root_dir, agent_token, spelling
):
    # Given an agent that plants ipykernel_launcher.py (and sitecustomize.py) in a folder,
    # spelled so that the old gate let it through
    root = Path(jp_root_dir)
    (root / "work").mkdir()
    for name in ("ipykernel_launcher.py", "sitecustomize.py"):
        body = json.dumps({**spelling, "content": PAYLOAD})
        status, _, reply = await call(
            jp_fetch, "api", "contents", "work", name, token=agent_token, method="PUT", body=body
        )
        assert status in (403, 409), reply
    # When it starts a kernel in that folder
    status, _, kernel = await call(
        jp_fetch,
        "api",
        "kernels",
        token=agent_token,
        method="POST",
        body=json.dumps({"name": "python3", "path": "work"}),
    )
    assert status == 201, kernel
    try:
        client = jp_serverapp.kernel_manager.get_kernel(kernel["id"]).client()
        client.start_channels()
        await client.wait_for_ready(timeout=60)
        client.stop_channels()
    finally:
        await call(jp_fetch, "api", "kernels", kernel["id"], token=agent_token, method="DELETE")
    # Then the kernel started as ipykernel, and nothing the agent sent ran
    assert sorted(p.name for p in (root / "work").iterdir()) == []
    assert not (root / "work" / "PWNED").exists()


@pytest.mark.parametrize(
    ("content", "encoding"),
    [
        pytest.param(
            "# -*- coding: utf-7 -*-\n# +AAo-import os+ADs- os.system('echo pwned')\n",
            "utf-7",
            id="utf-7-cookie",
        ),
        pytest.param(
            "#!/usr/bin/env python\n# vim: set fileencoding=utf-7 :\n# +AAo-print(1)\n",
            "utf-7",
            id="utf-7-second-line",
        ),
    ],
)
async def test_a_source_whose_cookie_hides_code_from_the_preview_is_refused(
    jp_fetch, jp_root_dir, agent_token, content, encoding
):
    # Given text that reads as comments in UTF-8 and as code under its coding cookie
    body = text(content, type="file")
    # When the agent writes it as a module
    status, _, reply = await call(
        jp_fetch, "api", "contents", "helpers.py", token=agent_token, method="PUT", body=body
    )
    # Then it is refused with a code that names the encoding; nothing waits, nothing is written
    assert (status, reply["code"]) == (409, "APPROVAL_SOURCE_ENCODING")
    assert reply["encoding"] == encoding
    assert not (Path(jp_root_dir) / "helpers.py").exists()
    assert await held(jp_fetch) == []


@pytest.mark.parametrize(
    "content",
    [
        pytest.param("# -*- coding: utf-8 -*-\nprint(1)\n", id="utf-8-cookie"),
        pytest.param("# coding: latin-1\nprint(1)\n", id="latin-1-ascii-only"),
        pytest.param("\ufeffprint(1)\n", id="bom"),
    ],
)
async def test_a_source_that_reads_the_same_either_way_is_held_as_usual(
    jp_fetch, jp_root_dir, agent_token, content
):
    status, _, reply = await call(
        jp_fetch,
        "api",
        "contents",
        "helpers.py",
        token=agent_token,
        method="PUT",
        body=text(content, type="file"),
    )
    assert (status, reply["code"]) == (409, "APPROVAL_PENDING")
    [item] = await held(jp_fetch)
    assert "print(1)" in item["preview"]
