"""The notice under a cell whose execution changed files in a sandboxed kernel: sent by the
server before the kernel's idle, naming what that execution (and only it) changed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from jupyter_approvals.server.sandbox.cell_changes import CHANGES_MIME

from .agent_client import APPROVALS_API, KernelSocket, add_agent, call, decide_changes

pytestmark = [pytest.mark.timeout(120), pytest.mark.kernel]


async def run(socket: KernelSocket, code: str) -> list[dict]:
    """Every message answering ``code``'s execution, up to the kernel's idle."""
    msg_id = await socket.send(
        "execute_request", {"code": code, "silent": False, "store_history": True}
    )
    return await socket.replies_to(msg_id)


def notices(messages: list[dict]) -> list[dict]:
    return [
        message["content"]["data"]
        for message in messages
        if message["msg_type"] == "display_data"
        and CHANGES_MIME in message["content"].get("data", {})
    ]


@pytest.mark.parametrize("v1", [True, False], ids=["v1", "legacy-json"])
async def test_a_cell_that_changes_files_gets_the_servers_notice_before_idle(
    sandboxed_kernels, jp_serverapp, jp_fetch, jp_http_port, jp_base_url, jp_root_dir, v1
):
    # Given a person's sandboxed kernel, with a project file
    (Path(jp_root_dir) / "sales.csv").write_text("id\n1\n")
    kernel = await sandboxed_kernels()
    token = jp_serverapp.identity_provider.token
    socket = await KernelSocket.open(jp_http_port, jp_base_url, kernel.id, token, v1=v1)
    try:
        # When a cell writes one file and deletes another
        wrote = await run(
            socket,
            "import os\nopen('clean.csv', 'w').write('id\\n1\\n')\nos.remove('sales.csv')",
        )
        # And the next cell only reads
        read = await run(socket, "print(len(open('clean.csv').read()))")
    finally:
        socket.close()
    # Then the first cell got one notice, naming both paths, before the kernel's idle
    [notice] = notices(wrote)
    assert notice[CHANGES_MIME] == {
        "version": 1,
        "kernel_id": kernel.id,
        "paths": ["clean.csv", "sales.csv"],
        "count": 2,
        "deleted": 1,
    }
    assert "changed 2 files in its sandbox, not in the project" in notice["text/plain"]
    kinds = [m["msg_type"] for m in wrote if m["channel"] == "iopub"]
    assert kinds[-2:] == ["display_data", "status"]
    assert wrote[[m["msg_type"] for m in wrote].index("display_data") + 1]["content"] == {
        "execution_state": "idle"
    }
    # And the reading cell got none
    assert notices(read) == []


async def test_an_agents_cell_gets_the_notice_and_only_its_own_changes(
    sandboxed_kernelspec, jp_fetch, jp_http_port, jp_base_url, jp_root_dir, state_dir
):
    # Given an agent's kernel (sandboxed under the policy) that already changed a file
    token = add_agent(state_dir, "bot")
    status, _, model = await call(jp_fetch, "api", "kernels", method="POST", body="{}", token=token)
    assert status == 201, model
    agent = await KernelSocket.open(jp_http_port, jp_base_url, model["id"], token, v1=False)
    try:
        first = await run(agent, "open('a.txt', 'w').write('a')")
        # When its next cell changes another file
        second = await run(agent, "open('b.txt', 'w').write('b')")
    finally:
        agent.close()
    # Then each cell's notice names what that cell changed
    assert [n[CHANGES_MIME]["paths"] for n in notices(first)] == [["a.txt"]]
    assert [n[CHANGES_MIME]["paths"] for n in notices(second)] == [["b.txt"]]
    # And both wait in the kernel's one change set
    _, _, changes = await call(jp_fetch, APPROVALS_API, "changes")
    [change_set] = changes["change_sets"]
    assert change_set["counts"] == {"created": 2}


async def test_a_decision_is_not_claimed_by_the_next_cell(
    sandboxed_kernels, jp_serverapp, jp_fetch, jp_http_port, jp_base_url, jp_root_dir
):
    # Given a sandboxed kernel whose cell rewrote a project file, which a person discarded
    # (discarding gives the overlay's copy the project's bytes again, in place)
    (Path(jp_root_dir) / "notes.txt").write_text("the person's notes\n")
    kernel = await sandboxed_kernels()
    token = jp_serverapp.identity_provider.token
    socket = await KernelSocket.open(jp_http_port, jp_base_url, kernel.id, token)
    try:
        await run(socket, "open('notes.txt', 'w').write('overwritten')")
        _, _, changes = await call(jp_fetch, APPROVALS_API, "changes")
        [change_set] = changes["change_sets"]
        await asyncio.sleep(1.1)  # a person reads it
        status, _, body = await decide_changes(
            jp_fetch,
            kernel.id,
            {"decision": "discard", "fingerprint": change_set["fingerprint"]},
        )
        assert (status, body["done"]) == (200, ["notes.txt"]), body
        # When the next cell changes nothing
        after = await run(socket, "x = open('notes.txt').read()")
    finally:
        socket.close()
    # Then it gets no notice: what the decision rewrote in the overlay is not the cell's
    assert notices(after) == []
