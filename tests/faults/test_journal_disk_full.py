"""The journal's disk is full (a real EFBIG from RLIMIT_FSIZE): nothing half-written stays in
the journal, the card and ``%approvals`` say it is failing, and decisions stay what they were
(docs/security.md promise 8: a journal that cannot be written never changes a decision)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.kernel.helpers import SETUP, approve_as_person, pending_call, run, value

from .conftest import journal_files, whole_lines

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")

#: In the kernel: a file size limit just above the journal's current size, so the next line
#: cannot be written whole (the kernel ignores SIGXFSZ, as a process must to see EFBIG).
LIMIT_JOURNAL = """
import os, resource, signal
from jupyter_approvals.kernel.session import KernelSession
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
_journal = KernelSession.current().journal.path
_soft, _hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize(_journal) + 40, _hard))
"""
LIFT_LIMIT = "resource.setrlimit(resource.RLIMIT_FSIZE, (_soft, _hard))"

CHILD = textwrap.dedent(
    """
    import json, os, resource, signal, sys
    from jupyter_approvals.core.journal.writer import Journal
    journal = Journal(sys.argv[1])
    first = journal.append("requested", request_id="r1", summary="Write a.csv")
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize(sys.argv[1]) + 40, hard))
    full = journal.append("approved", request_id="r1", summary="x" * 300)
    error = journal.last_error
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    after = journal.append("executed", request_id="r1")
    print(json.dumps([first, full, error, after]))
    """
)


def test_a_line_cut_by_the_file_size_limit_is_taken_back(tmp_path: Path):
    # Given a process whose file size limit leaves room for only part of the next line
    path = tmp_path / "decisions.jsonl"
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    first, full, error, after = json.loads(done.stdout)
    # When a line is appended past the limit
    # Then the append fails with the reason, and the part that fit is gone again
    assert (first, full, after) == (True, False, True)
    assert "short write" in error or "File too large" in error
    # And once the limit is lifted the journal holds whole lines only
    assert [e["event"] for e in whole_lines(path)] == ["requested", "executed"]


def test_a_full_journal_changes_no_decision_and_leaves_no_torn_line(frontend, state_dir):
    # Given a pending call, then a file size limit that the journal's next line exceeds
    run(frontend, SETUP)
    card = pending_call(frontend, "save('new', 'data.txt')")
    assert run(frontend, LIMIT_JOURNAL).status == "ok"
    # When a person approves and the approved call runs
    decided = dict(approve_as_person(frontend, card).state)
    ran = run(frontend, "save('new', 'data.txt')")
    # Then the decision stands and the call ran once, and the card says the journal fails
    assert decided["state"] == "approved"
    assert "cannot be written" in decided["journal_error"]
    assert ran.status == "ok", ran.evalue
    assert value(frontend, "runs") == "['data.txt']"
    assert "NOT WRITABLE" in run(frontend, "%load_ext jupyter_approvals\n%approvals").stdout
    # And once there is room again, the journal holds only whole lines: the request's, none
    # of the lines that did not fit, and the next one
    assert run(frontend, LIFT_LIMIT).status == "ok"
    pending_call(frontend, "save('newer', 'data.txt')")
    [path] = journal_files(state_dir)
    events = [e["event"] for e in whole_lines(path)]
    assert events == ["requested", "requested"]
