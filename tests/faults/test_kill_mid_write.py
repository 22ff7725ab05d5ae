"""``kill -9`` of a kernel in the middle of an approved table write: the target holds its old
content whole, and the journal's lines are whole (the run has no ``executed`` line)."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from jupyter_approvals.core.atomic import TEMP_SUFFIX
from tests.kernel.helpers import approve_as_person, pending_call, run

from .conftest import journal_files, whole_lines

pytest.importorskip("pandas")
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")

#: A table large enough that writing it as CSV takes a few seconds.
SETUP = """
import numpy as np, pandas as pd
from jupyter_approvals.ops import write_table
rows = 3_000_000
df = pd.DataFrame({"id": np.arange(rows), "a": np.linspace(0, 1, rows), "b": np.arange(rows) * 0.5})
"""


def test_a_kernel_killed_mid_write_leaves_the_old_table_whole(frontend, project, state_dir):
    # Given a small table on disk, and an approved write of a large one over it
    target = project / "sales.csv"
    old = b"id,a,b\n1,0.5,2.0\n"
    target.write_bytes(old)
    assert run(frontend, SETUP).status == "ok"
    card = pending_call(frontend, "write_table(df, 'sales.csv')")
    assert approve_as_person(frontend, card).state["state"] == "approved"
    # When the approved write has put a few MiB of the new table on disk and the kernel is
    # killed with SIGKILL
    frontend.submit("write_table(df, 'sales.csv')")
    partial = _wait_for_partial_write(project, at_least=4 << 20)
    os.kill(frontend.manager.provisioner.pid, signal.SIGKILL)
    _wait_until_dead(frontend)
    # Then the target is the old table, byte for byte; only the temporary file is partial
    assert target.read_bytes() == old
    assert partial.stat().st_size < 100 << 20
    # And the journal holds whole lines: the request and its approval, no run that ended
    [path] = journal_files(state_dir)
    events = [e["event"] for e in whole_lines(path)]
    assert events == ["requested", "approved"]


def _wait_for_partial_write(directory: Path, at_least: int, timeout: float = 60) -> Path:
    """The temporary file of the atomic replacement, once it holds ``at_least`` bytes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for temp in directory.glob(f".sales.csv.*{TEMP_SUFFIX}"):
            try:
                if temp.stat().st_size >= at_least:
                    return temp
            except FileNotFoundError:
                continue
        time.sleep(0.005)
    raise AssertionError("the approved write never started")


def _wait_until_dead(frontend, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while frontend.manager.is_alive():
        assert time.monotonic() < deadline, "the kernel survived SIGKILL"
        time.sleep(0.05)
