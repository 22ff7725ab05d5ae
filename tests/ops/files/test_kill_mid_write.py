"""A process killed in the middle of an approved write_file leaves the old file untouched."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from jupyter_approvals.core.atomic import TEMP_SUFFIX
from jupyter_approvals.ops import write_file

from ..conftest import approve

#: The child: approves a 256 MiB write over ``target`` and stops inside it, half written.
CHILD = r"""
import contextlib, sys
from pathlib import Path

import jupyter_approvals as ja
from jupyter_approvals.core.policy import ManualClock
from jupyter_approvals.kernel.session import KernelSession
from jupyter_approvals.ops import write_file
from jupyter_approvals.ops.files import operations as files

target = Path(sys.argv[1])
clock = ManualClock()
session = KernelSession.install(KernelSession(None, clock=clock, cwd=target.parent))
session.store.decision_guard = None  # no frontend in this process: decide directly

payload = b"new content\n" * (256 * 1024 * 1024 // 12)
try:
    write_file(target, payload)
    raise SystemExit("the write ran without an approval")
except ja.ApprovalPending as pending:
    clock.advance(2)
    details = pending.details
    session.store.decide(details["request_id"], "approve", details["fingerprint"])

real_replace = files.atomic_replace


@contextlib.contextmanager
def paused_halfway(path, expected=None):
    # The real atomic replacement, whose writes stop once half the payload is on disk: the
    # parent kills this process there, so the kill always lands mid-write.
    with real_replace(path, expected) as handle:

        class Handle:
            written = 0

            def write(self, chunk):
                count = handle.write(chunk)
                Handle.written += count
                if Handle.written >= len(payload) // 2:
                    handle.flush()
                    print("WRITING", Handle.written, flush=True)
                    sys.stdin.readline()  # blocks until killed
                return count

        yield Handle()


files.atomic_replace = paused_halfway
write_file(target, payload)
print("FINISHED", flush=True)
"""


def test_a_kill_mid_write_leaves_the_old_content_and_mode(session, tmp_path: Path):
    # Given a file with known content and mode
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)  # the session fixture made it already
    target = work / "data.bin"
    old = b"the old content\n" * 1000
    target.write_bytes(old)
    target.chmod(0o640)
    environment = {**os.environ, "JUPYTER_APPROVALS_STATE_DIR": str(tmp_path / "state")}
    # And a process that approved a 256 MiB write over it and is halfway through writing
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(target)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=work,
        env=environment,
        text=True,
    )
    try:
        line = child.stdout.readline()
        assert line.startswith("WRITING"), line + child.stderr.read()
        written = int(line.split()[1])
        # The half-written temporary file is open in the child, next to the target
        open_sizes = [
            os.stat(f"/proc/{child.pid}/fd/{fd}").st_size
            for fd in os.listdir(f"/proc/{child.pid}/fd")
            if os.readlink(f"/proc/{child.pid}/fd/{fd}").startswith(str(work))
        ]
        assert written in open_sizes
        # When it is killed there
        child.send_signal(signal.SIGKILL)
        child.wait()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()
        child.stderr.close()
        child.stdin.close()
    # Then the target has exactly its old content and mode
    assert child.returncode == -signal.SIGKILL
    assert target.read_bytes() == old
    assert target.stat().st_mode & 0o777 == 0o640
    # And the only other file is the dead writer's temporary file (a killed process cannot
    # remove it; see ops/_atomic.py), which the next write of the target removes
    [leftover] = [name for name in os.listdir(work) if name != "data.bin"]
    assert leftover.startswith(f".data.bin.{child.pid}.")
    assert leftover.endswith(TEMP_SUFFIX)
    approve(session, lambda: write_file(target, b"next\n"))
    write_file(target, b"next\n")
    assert sorted(os.listdir(work)) == ["data.bin"]
    assert target.read_bytes() == b"next\n"
    assert target.stat().st_mode & 0o777 == 0o640
