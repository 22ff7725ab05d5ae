"""One approval runs once, also when cell code forks the kernel (T1/T2): a process forked from
the kernel after an approval, or during the run it allowed, holds copies of the kernel's
approvals and leases, and none of them counts there.

Each attempt runs in a real kernel and is judged by effect: the lines the protected function
appended to a file (one per run, with the process id), and the journal.
"""

from __future__ import annotations

import pytest

from jupyter_approvals.testing import KernelFrontend
from tests.kernel.helpers import run, value

from .conftest import Target, approve, journal_entries

pytestmark = pytest.mark.kernel

#: A protected function that appends the id of the process it runs in, once per run.
APPENDER = """
import os
@ja.protected("file.append", summary="Append to {path}", target="path")
def append_pid(path):
    with open(path, "a") as out:
        out.write(f"{os.getpid()}\\n")
"""


def approved_call(target: Target, path: str) -> str:
    """Ask for ``append_pid(path)``, have a person approve it; returns the request id."""
    fe = target.fe
    run(fe, APPENDER)
    result = run(fe, f"append_pid({path!r})")
    assert result.ename == "ApprovalPending", (result.ename, result.evalue)
    card = fe.cards()[-1]
    approve(fe, card)
    return str(card.state["request_id"])


def events_of(target: Target, request_id: str) -> list[tuple[str, object]]:
    return [
        (e["event"], e.get("code"))
        for e in journal_entries(target.state_dir)
        if e.get("request_id") == request_id
    ]


def kernel_pid(fe: KernelFrontend) -> str:
    return value(fe, "os.getpid()")


#: What the forked child does: make the approved call, and write down how it went.
IN_CHILD = """
def in_child():
    try:
        append_pid(RUNS)
        outcome = "ran"
    except BaseException as error:
        outcome = getattr(error, "code", type(error).__name__)
    open(CHILD, "w").write(outcome)
"""


@pytest.mark.parametrize(
    "fork",
    [
        """
pid = os.fork()
if pid == 0:
    in_child()
    os._exit(0)
os.waitpid(pid, 0)
""",
        """
import multiprocessing
child = multiprocessing.get_context("fork").Process(target=in_child)
child.start()
child.join(30)
""",
    ],
    ids=["os-fork", "multiprocessing-fork"],
)
def test_a_process_forked_after_an_approval_cannot_use_it(target: Target, fork: str) -> None:
    # Given an approved call, not yet run
    runs = target.project / f"{target.name}-runs.txt"
    child = target.project / f"{target.name}-child.txt"
    request_id = approved_call(target, str(runs))
    fe = target.fe
    # When cell code forks, and both the child and the kernel make the approved call
    run(fe, f"RUNS, CHILD = {str(runs)!r}, {str(child)!r}" + IN_CHILD + fork)
    kernel = run(fe, f"append_pid({str(runs)!r})")
    # Then the child is refused with the code, and the kernel's own call runs, once
    assert child.read_text() == "APPROVAL_FORKED_PROCESS"
    assert kernel.ename is None, kernel.evalue
    assert runs.read_text().split() == [kernel_pid(fe)]
    # And the journal shows one approval, the child's refusal, and one run
    events = events_of(target, request_id)
    assert ("refused", "APPROVAL_FORKED_PROCESS") in events
    assert [e for e, _ in events].count("executed") == 1


def test_a_fork_during_the_run_is_no_second_run(target: Target) -> None:
    # Given an approved protected function that forks while it runs, the child going on to a
    # ready operation's low-level writer (which needs the run's lease)
    fe = target.fe
    runs = target.project / f"{target.name}-runs.txt"
    child = target.project / f"{target.name}-child.txt"
    run(
        fe,
        f"""
import os
from jupyter_approvals.core.lease import require_lease
@ja.protected("file.append", summary="Append to {{path}}", target="path")
def forking_append(path):
    pid = os.fork()
    if pid == 0:
        try:
            require_lease("file.append")
            outcome = "had the lease"
        except BaseException as error:
            outcome = getattr(error, "code", type(error).__name__)
        open({str(child)!r}, "w").write(outcome)
        return  # the child's copy of the run ends here, as a run would
    os.waitpid(pid, 0)
    with open(path, "a") as out:
        out.write(f"{{os.getpid()}}\\n")
""",
    )
    result = run(fe, f"forking_append({str(runs)!r})")
    assert result.ename == "ApprovalPending"
    card = fe.cards()[-1]
    request_id = str(card.state["request_id"])
    approve(fe, card)
    # When it runs: the child returns from the run, so its copy of the gate records an end
    # (then it leaves, before its copy of the kernel could answer anyone)
    kernel = kernel_pid(fe)
    run(fe, f"forking_append({str(runs)!r})\nif os.getpid() != {kernel}: os._exit(0)")
    # Then the child's lease was void, and the kernel ran it once
    assert child.read_text() == "APPROVAL_REQUIRED"
    assert runs.read_text().split() == [kernel]
    # And the child's end of the run is journaled as refused, beside the one executed
    events = events_of(target, request_id)
    assert ("refused", "APPROVAL_FORKED_PROCESS") in events
    assert [e for e, _ in events].count("executed") == 1
