"""Under the sandbox policy an agent's file saves over the contents API are staged in its
change set: never in the project until a person applies them, visible to its sandboxed code,
and never written through a link or into a pipe its code left in the way."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from jupyter_approvals.core.journal.reader import read_entries
from jupyter_approvals.core.project import journal_path

from .agent_client import APPROVALS_API, KernelSocket, add_agent, call, decide_changes

pytestmark = [pytest.mark.timeout(120), pytest.mark.kernel]


async def save(jp_fetch, token: str, path: str, text: str) -> tuple[int, dict]:
    body = json.dumps({"type": "file", "format": "text", "content": text})
    status, _, model = await call(
        jp_fetch, "api", "contents", path, method="PUT", body=body, token=token
    )
    return status, model


async def agents_kernel(jp_fetch, token: str) -> str:
    status, _, model = await call(jp_fetch, "api", "kernels", method="POST", body="{}", token=token)
    assert status == 201, model
    return model["id"]


async def run(socket: KernelSocket, code: str) -> str:
    msg_id = await socket.send("execute_request", {"code": code, "silent": False})
    replies = await socket.replies_to(msg_id)
    return "".join(m["content"].get("text", "") for m in replies if m["msg_type"] == "stream")


async def test_a_save_lands_in_the_agents_kernels_change_set_and_its_code_reads_it(
    sandboxed_kernelspec, jp_fetch, jp_http_port, jp_base_url, jp_root_dir, state_dir
):
    # Given an agent with a sandboxed kernel (it started it, under the sandbox policy)
    token = add_agent(state_dir, "bot")
    kernel_id = await agents_kernel(jp_fetch, token)
    # When the agent saves a file over the contents API
    status, model = await save(jp_fetch, token, "report.md", "# findings\n")
    # Then the save answers at once, staged in the kernel's change set, not in the project
    assert status in (200, 201), model
    assert model["jupyter_approvals_staged_in"] == kernel_id
    assert not (Path(jp_root_dir) / "report.md").exists()
    _, _, listing = await call(jp_fetch, APPROVALS_API, "changes")
    [change_set] = listing["change_sets"]
    assert (change_set["kernel_id"], [c["path"] for c in change_set["changes"]]) == (
        kernel_id,
        ["report.md"],
    )
    # And nothing is held for a person one by one
    _, _, pending = await call(jp_fetch, APPROVALS_API, "pending")
    assert pending["pending"] == []
    # And the agent's sandboxed code reads what it saved
    socket = await KernelSocket.open(jp_http_port, jp_base_url, kernel_id, token, v1=False)
    try:
        assert await run(socket, "print(open('report.md').read(), end='')") == "# findings\n"
        # When it saves over a file its code already wrote and read
        await run(socket, "open('data.txt', 'w').write('old')\nprint(open('data.txt').read())")
        await save(jp_fetch, token, "data.txt", "new")
        # Then its code reads the new bytes at once (rewritten in place)
        assert await run(socket, "print(open('data.txt').read(), end='')") == "new"
    finally:
        socket.close()
    # And the server's journal records the saves as staged
    entries = read_entries(journal_path(Path(jp_root_dir), state_dir), limit=200).entries
    staged = [(e["path"], e["agent"]) for e in entries if e["event"] == "staged"]
    assert sorted(staged) == [("data.txt", "bot"), ("report.md", "bot")]


async def test_without_a_kernel_a_save_waits_in_the_agents_own_change_set(
    sandboxed_kernelspec, jp_fetch, jp_root_dir, state_dir
):
    # Given an agent with no kernel
    token = add_agent(state_dir, "bot")
    # When it saves a file
    status, model = await save(jp_fetch, token, "notes/plan.txt", "step 1\n")
    # Then it waits in a change set of the agent's own
    assert status in (200, 201), model
    assert model["jupyter_approvals_staged_in"] == "agent-bot"
    _, _, listing = await call(jp_fetch, APPROVALS_API, "changes")
    [change_set] = listing["change_sets"]
    assert change_set["kernel_id"] == "agent-bot"
    # When the person applies it, after reading it
    await asyncio.sleep(1.1)
    status, _, decided = await decide_changes(
        jp_fetch, "agent-bot", {"decision": "apply", "fingerprint": change_set["fingerprint"]}
    )
    # Then the file is in the project
    assert status == 200, decided
    assert (Path(jp_root_dir) / "notes" / "plan.txt").read_text() == "step 1\n"


async def test_a_save_never_goes_through_a_link_or_into_a_pipe_its_code_left(
    sandboxed_kernelspec, jp_fetch, jp_http_port, jp_base_url, jp_root_dir, state_dir, tmp_path
):
    # Given an agent whose sandboxed code left a link to a folder outside the project, a link
    # to a file outside it and a named pipe, in its overlay
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "bashrc").write_text("the person's\n")
    token = add_agent(state_dir, "bot")
    kernel_id = await agents_kernel(jp_fetch, token)
    socket = await KernelSocket.open(jp_http_port, jp_base_url, kernel_id, token, v1=False)
    try:
        await run(
            socket,
            f"import os\nos.symlink({str(outside)!r}, 'away')\n"
            f"os.symlink({str(outside / 'bashrc')!r}, 'rc')\nos.mkfifo('pipe')",
        )
    finally:
        socket.close()
    # When the agent saves through the folder link, onto the file link and onto the pipe
    results = [
        await save(jp_fetch, token, "away/evil.txt", "x"),
        await save(jp_fetch, token, "rc", "x"),
        await save(jp_fetch, token, "pipe", "x"),
    ]
    # Then each is refused with the code, at once, and nothing outside changed
    for status, model in results:
        assert status >= 400, model
        assert "APPROVAL_CHANGE_UNSUPPORTED" in json.dumps(model)
    assert sorted(os.listdir(outside)) == ["bashrc"]
    assert (outside / "bashrc").read_text() == "the person's\n"


async def test_a_source_whose_cookie_hides_code_is_refused_not_staged(
    sandboxed_kernelspec, jp_fetch, jp_root_dir, state_dir
):
    # Given an agent saving Python whose coding line makes Python read other text than shown
    token = add_agent(state_dir, "bot")
    hidden = "# -*- coding: utf-7 -*-\nx = 1 +AAo-import os\n"
    # When it saves it
    status, model = await save(jp_fetch, token, "helpers.py", hidden)
    # Then it is refused with the code, and nothing is staged
    assert status >= 400
    assert "APPROVAL_SOURCE_ENCODING" in json.dumps(model)
    _, _, listing = await call(jp_fetch, APPROVALS_API, "changes")
    assert listing["change_sets"] == []
