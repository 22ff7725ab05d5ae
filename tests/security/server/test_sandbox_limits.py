"""A sandboxed kernel's bounds, tried as a hostile agent's code would: a fork bomb, one huge
file, and many files that together fill the disk. Each is judged on the host: how many
processes the sandbox ran, what its overlay holds, whether the server stopped the kernel."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jupyter_approvals.core.journal.reader import read_entries
from jupyter_approvals.core.project import journal_path
from jupyter_approvals.server.sandbox.command import ProcessLimits, limited_argv
from jupyter_approvals.server.sandbox.overlay_bound import upper_bytes
from tests.server.agent_client import APPROVALS_API, call, decide_changes
from tests.server.conftest import approvals_config, printed

pytestmark = pytest.mark.timeout(180)

PROCESSES = 40
OVERLAY_BYTES = 8 << 20


@pytest.fixture
def jp_server_config():
    return approvals_config(sandbox_processes=PROCESSES, sandbox_overlay_bytes=OVERLAY_BYTES)


def traceback_of(result: dict) -> str:
    return "\n".join(
        line
        for message in result["outputs"]
        if message["msg_type"] == "error"
        for line in message["content"]["traceback"]
    )


async def test_a_fork_bomb_stops_at_the_process_bound(sandboxed_kernels):
    # Given a sandboxed kernel bounded to 40 processes
    kernel = await sandboxed_kernels()
    # When its code forks children that wait, as many as it can (up to 400)
    counted = await kernel.run(
        "import os, time\n"
        "children = []\n"
        "try:\n"
        "    for _ in range(400):\n"
        "        pid = os.fork()\n"
        "        if pid == 0:\n"
        "            time.sleep(60)\n"
        "            os._exit(0)\n"
        "        children.append(pid)\n"
        "except BlockingIOError as error:\n"
        "    print(len(children), error.errno)\n"
    )
    # Then forking fails (EAGAIN) before the bound, the kernel's own threads counted
    forked, code = printed(counted).split()
    assert code == "11"
    assert 0 < int(forked) < PROCESSES
    # When a cell forks once more, without catching the error
    unguarded = await kernel.run("os.fork()")
    # Then its traceback says which bound, with the code
    assert unguarded["ename"] in ("BlockingIOError", "RuntimeError"), unguarded
    assert "[APPROVAL_SANDBOX_LIMIT]" in traceback_of(unguarded), traceback_of(unguarded)
    assert f"at most {PROCESSES:,} processes" in traceback_of(unguarded)
    # And the host still starts processes
    assert subprocess.run(["true"], check=False).returncode == 0
    await kernel.run("import signal\nfor pid in children:\n    os.kill(pid, signal.SIGKILL)")


async def test_one_huge_file_stops_at_the_overlay_bound(sandboxed_kernels, jp_root_dir):
    # Given a sandboxed kernel whose overlay is bounded to 8 MiB
    kernel = await sandboxed_kernels()
    # When its code writes a 64 MiB file in the project
    result = await kernel.run(
        "with open('huge.bin', 'wb') as out:\n"
        "    for _ in range(64):\n"
        "        out.write(b'0' * (1 << 20))\n"
    )
    # Then the write fails at the bound with the code, and the overlay holds no more than it
    assert result["ename"] == "OSError"
    assert "File too large" in result["evalue"]
    assert "[APPROVAL_SANDBOX_LIMIT]" in traceback_of(result)
    upper = kernel_upper(jp_root_dir, kernel.id)
    assert (upper / "huge.bin").stat().st_size <= OVERLAY_BYTES
    assert not (Path(jp_root_dir) / "huge.bin").exists()


def kernel_upper(root: str, kernel_id: str) -> Path:
    state = Path(os.environ["JUPYTER_APPROVALS_STATE_DIR"])
    return state / "sandbox" / kernel_id / "upper"


async def test_many_files_past_the_bound_stop_the_kernel_and_wait_for_a_person(
    sandboxed_kernels, jp_serverapp, jp_fetch, jp_root_dir, state_dir
):
    # Given a sandboxed kernel whose overlay is bounded to 8 MiB
    kernel = await sandboxed_kernels()
    # When its code writes 4 files of 3 MiB each (each under the bound, 12 MiB in all)
    await kernel.run("for n in range(4):\n    open(f'part{n}.bin', 'wb').write(b'1' * (3 << 20))\n")
    # Then within a few seconds the server stops the kernel
    for _ in range(100):
        if kernel.id not in jp_serverapp.kernel_manager.list_kernel_ids():
            break
        await asyncio.sleep(0.1)
    assert kernel.id not in jp_serverapp.kernel_manager.list_kernel_ids()
    # And journals why, with the code
    [stopped] = [
        entry
        for entry in read_entries(journal_path(Path(jp_root_dir), state_dir), limit=200).entries
        if entry.get("action") == "sandbox.limit"
    ]
    assert (stopped["event"], stopped["code"], stopped["kernel_id"]) == (
        "refused",
        "APPROVAL_SANDBOX_LIMIT",
        kernel.id,
    )
    # And what it staged still waits for a person, listed though the kernel ended
    _, _, body = await call(jp_fetch, APPROVALS_API, "changes")
    [change_set] = body["change_sets"]
    assert change_set["kernel_id"] == kernel.id
    assert change_set["counts"] == {"created": 4}
    # When the person applies one file of it
    await asyncio.sleep(1.1)  # a person reads it
    status, _, decided = await decide_changes(
        jp_fetch,
        kernel.id,
        {"decision": "apply", "fingerprint": change_set["fingerprint"], "paths": ["part0.bin"]},
    )
    # Then it is in the project, though the kernel that wrote it is gone
    assert status == 200, decided
    assert decided["done"] == ["part0.bin"]
    assert (Path(jp_root_dir) / "part0.bin").stat().st_size == 3 << 20


def test_the_process_bound_holds_for_an_ordinary_user():
    # Given the limits wrapper every sandboxed kernel starts under, bounding to 20 processes
    # (for root the kernel gets a pids cgroup instead: Linux does not bound root's processes)
    as_ordinary_user: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        assert setpriv, "setpriv (util-linux) makes the root test user an ordinary one"
        as_ordinary_user = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
    bomb = (
        "import os, time\n"
        "n = 0\n"
        "try:\n"
        "    for _ in range(200):\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(5)\n"
        "            os._exit(0)\n"
        "        n += 1\n"
        "except BlockingIOError:\n"
        "    pass\n"
        "print(n)\n"
    )
    # (the system's Python: an ordinary user may not run the one in the test's folder)
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    argv = limited_argv(ProcessLimits(python, 20, 1 << 20), [python, "-c", bomb])
    # When an ordinary user (nobody, where the tests run as root) runs a fork bomb under it
    done = subprocess.run(
        [*as_ordinary_user, *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    # Then it stops below the bound
    assert done.returncode == 0, done.stderr
    assert 0 < int(done.stdout) < 20


def test_the_overlay_is_added_up_by_what_it_holds_on_disk(tmp_path):
    # Given an upper folder with a file and a folder holding another
    (tmp_path / "a.bin").write_bytes(b"x" * 10_000)
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "b.bin").write_bytes(b"y" * 5_000)
    # Then its bytes count both files, as allocated on disk (at least their sizes)
    assert 15_000 <= upper_bytes(tmp_path, 1 << 30) <= 15_000 + 4 * 65_536
