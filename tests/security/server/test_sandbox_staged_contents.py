"""A hostile agent uses its sandboxed code and its REST token together: the code plants links,
pipes and swapped folders in the overlay it shares with the server, the token asks the server
to read, rename or delete through them. The server's staged view must never follow one, and
never read or remove anything outside the upper folder.

Judged on the host by effect: files outside unchanged, secrets never in an answer.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.server.agent_client import KernelSocket, add_agent, call, change_sets, rename
from tests.server.conftest import approvals_config
from tests.server.test_sandbox_staged_writes import agents_kernel, run, save

pytestmark = [pytest.mark.timeout(150), pytest.mark.kernel]

SECRET = "the person's secret\n"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder of the person's outside the project (the server can read it; the sandbox
    cannot), with a secret in it."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text(SECRET)
    (folder / "keep").mkdir()
    (folder / "keep" / "notes.txt").write_text("keep me\n")
    return folder


async def planted(jp_fetch, jp_http_port, jp_base_url, token: str, code: str) -> str:
    """The agent's sandboxed kernel, after running ``code`` in it."""
    kernel_id = await agents_kernel(jp_fetch, token)
    socket = await KernelSocket.open(jp_http_port, jp_base_url, kernel_id, token, v1=False)
    try:
        await run(socket, code)
    finally:
        socket.close()
    return kernel_id


async def test_reads_never_follow_a_link_the_code_planted(
    sandboxed_kernelspec, jp_fetch, jp_http_port, jp_base_url, jp_root_dir, state_dir, outside
):
    # Given sandboxed code that linked a file and a folder of the person's into its overlay
    # (it cannot read them itself), and a pipe
    token = add_agent(state_dir, "bot")
    await planted(
        jp_fetch,
        jp_http_port,
        jp_base_url,
        token,
        f"import os\nos.symlink({str(outside / 'secret.txt')!r}, 'leak.txt')\n"
        f"os.symlink({str(outside)!r}, 'leakdir')\nos.mkfifo('pipe.txt')",
    )
    # When the agent asks the server for them over REST, also as listings and as copies
    answers = []
    for path in ("leak.txt", "leakdir", "leakdir/secret.txt", "pipe.txt"):
        answers.append(await call(jp_fetch, "api", "contents", path, token=token))
    copy = await call(
        jp_fetch,
        "api",
        "contents",
        method="POST",
        body=json.dumps({"copy_from": "leak.txt"}),
        token=token,
    )
    _, _, root = await call(jp_fetch, "api", "contents", token=token)
    # Then each read is not found, the listing does not show them, and no secret is answered
    assert [status for status, _, _ in answers] == [404, 404, 404, 404]
    assert copy[0] == 404
    assert not {"leak.txt", "leakdir", "pipe.txt"} & {e["name"] for e in root["content"]}
    everything = json.dumps([answers, copy, root], default=str)
    assert "secret" not in everything.replace("secret.txt", "")


async def test_deletes_and_renames_never_reach_through_a_planted_link(
    sandboxed_kernelspec, jp_fetch, jp_http_port, jp_base_url, jp_root_dir, state_dir, outside
):
    # Given sandboxed code that made a folder holding a link to a folder of the person's and
    # one to a file, and a top-level link to the folder
    token = add_agent(state_dir, "bot")
    await planted(
        jp_fetch,
        jp_http_port,
        jp_base_url,
        token,
        "import os\nos.makedirs('work', exist_ok=True)\n"
        f"os.symlink({str(outside / 'keep')!r}, 'work/keep')\n"
        f"os.symlink({str(outside / 'secret.txt')!r}, 'work/secret.txt')\n"
        "open('work/real.txt', 'w').write('mine')\n"
        f"os.symlink({str(outside)!r}, 'away')",
    )

    async def patch(old: str, new: str) -> int:
        return (await rename(jp_fetch, token, old, new))[0]

    async def delete(path: str) -> int:
        status, _, _ = await call(jp_fetch, "api", "contents", path, method="DELETE", token=token)
        return status

    # When the agent renames the folder, deletes it, deletes through the top-level link,
    # and renames into it
    statuses = [
        await patch("work", "moved"),
        await delete("away/keep"),
        await patch("moved/real.txt", "away/real.txt"),
        await delete("moved"),
        await delete("away"),
    ]
    # Then what goes through a link is not found, and the folder's own moves are done
    assert statuses == [200, 404, 404, 204, 404]
    # And nothing outside the project changed
    assert (outside / "secret.txt").read_text() == SECRET
    assert (outside / "keep" / "notes.txt").read_text() == "keep me\n"
    assert sorted(p.name for p in outside.iterdir()) == ["keep", "secret.txt"]
    # And the renamed link was not turned into a copy of the secret
    for change_set in await change_sets(jp_fetch):
        for change in change_set["changes"]:
            assert change["path"] != "moved/secret.txt", change


async def test_a_rename_larger_than_the_overlay_bound_is_refused_with_the_code(
    sandboxed_kernelspec, jp_fetch, jp_root_dir, state_dir
):
    # Given a project folder larger than sandbox_overlay_bytes (set to 1 MiB below)
    folder = Path(jp_root_dir) / "big"
    folder.mkdir()
    (folder / "a.bin").write_bytes(b"x" * (1 << 20))
    (folder / "b.bin").write_bytes(b"y" * 1024)
    token = add_agent(state_dir, "bot")
    # When the agent renames it
    status, _, answer = await rename(jp_fetch, token, "big", "bigger")
    # Then it is refused with the code, and nothing was staged
    assert status >= 400
    assert "APPROVAL_SANDBOX_LIMIT" in json.dumps(answer)
    assert await change_sets(jp_fetch) == []


@pytest.fixture
def jp_server_config():
    return approvals_config(sandbox_overlay_bytes=1 << 20)


async def test_a_staged_file_the_code_swaps_for_a_link_reads_as_not_found(
    sandboxed_kernelspec, jp_fetch, jp_http_port, jp_base_url, jp_root_dir, state_dir, outside
):
    # Given an agent that saved a file, read it back, and whose code then swapped it for a
    # link to the person's secret
    token = add_agent(state_dir, "bot")
    kernel_id = await agents_kernel(jp_fetch, token)
    await save(jp_fetch, token, "notes.txt", "mine\n")
    status, _, model = await call(jp_fetch, "api", "contents", "notes.txt", token=token)
    assert (status, model["content"]) == (200, "mine\n")
    socket = await KernelSocket.open(jp_http_port, jp_base_url, kernel_id, token, v1=False)
    try:
        await run(
            socket,
            f"import os\nos.remove('notes.txt')\nos.symlink({str(outside / 'secret.txt')!r}, "
            "'notes.txt')",
        )
    finally:
        socket.close()
    # When the agent reads it again
    status, _, model = await call(jp_fetch, "api", "contents", "notes.txt", token=token)
    # Then it is not found, and the secret is not in the answer
    assert status == 404
    assert SECRET.strip() not in json.dumps(model)
