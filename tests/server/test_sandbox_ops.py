"""The ready operations in a sandboxed kernel: a file effect runs at once and waits in the
kernel's change set (one approval, not two); an operation that needs the network is refused
with its code; the person's own protected functions still ask."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_approvals.core.journal.reader import read_entries
from jupyter_approvals.core.project import journal_path
from jupyter_approvals.kernel import sandbox
from jupyter_approvals.kernel.sandbox import in_sandbox, sandbox_effect

from .agent_client import APPROVALS_API, call
from .conftest import printed

pytestmark = pytest.mark.timeout(120)


def kernel_journal(root: str, state_dir: Path, kernel_id: str) -> list[dict]:
    """The sandboxed kernel's own journal (in its folder of the server's state folder)."""
    state = state_dir / "sandbox" / kernel_id / "state"
    path = journal_path(Path(root), state)
    return list(reversed(read_entries(path, limit=200).entries))


@pytest.mark.kernel
async def test_a_file_operation_runs_at_once_and_waits_in_the_change_set(
    sandboxed_kernels, jp_fetch, jp_root_dir, state_dir
):
    # Given a sandboxed kernel
    kernel = await sandboxed_kernels()
    # When its code writes a file with the ready operation
    result = await kernel.run(
        "from jupyter_approvals import ops\nprint(ops.write_file('out.txt', 'hello'))"
    )
    # Then it ran at once, with no card and nothing pending
    assert printed(result).strip() == "5"
    _, _, listing = await call(jp_fetch, APPROVALS_API, "pending")
    assert listing["pending"] == []
    # And its effect waits in the kernel's change set, not in the project
    assert not (Path(jp_root_dir) / "out.txt").exists()
    _, _, changes = await call(jp_fetch, APPROVALS_API, "changes")
    [change_set] = changes["change_sets"]
    assert [c["path"] for c in change_set["changes"]] == ["out.txt"]
    # And the kernel journaled it staged, then executed
    events = [
        (e["event"], e["action"])
        for e in kernel_journal(jp_root_dir, state_dir, kernel.id)
        if e.get("action") == "file.write"
    ]
    assert events == [("staged", "file.write"), ("executed", "file.write")]


@pytest.mark.kernel
async def test_an_operation_that_needs_the_network_is_refused_with_its_code(
    sandboxed_kernels, jp_root_dir, state_dir
):
    # Given a sandboxed kernel
    kernel = await sandboxed_kernels()
    # When its code sends an HTTP request, and pushes with git
    http = await kernel.run(
        "from jupyter_approvals import ops\nops.http_request('GET', 'https://example.org/')"
    )
    push = await kernel.run("ops.git_push('origin', 'main')")
    # Then both are refused with the code, saying what to do, and nothing was asked
    for result in (http, push):
        assert result["ename"] == "ApprovalSandboxNoNetwork", result
        assert result["evalue"].startswith("[APPROVAL_SANDBOX_NO_NETWORK]")
        assert "run it in a kernel of their own" in result["evalue"]
    refusals = [
        e
        for e in kernel_journal(jp_root_dir, state_dir, kernel.id)
        if e["event"] == "refused" and e.get("code") == "APPROVAL_SANDBOX_NO_NETWORK"
    ]
    assert {e["action"] for e in refusals} == {"http.request", "git.push"}


@pytest.mark.kernel
async def test_the_persons_own_protected_function_still_asks(sandboxed_kernels):
    # Given a sandboxed kernel with a protected function of the person's own
    kernel = await sandboxed_kernels()
    result = await kernel.run(
        "import jupyter_approvals as ja\n"
        "@ja.protected('report.publish')\n"
        "def publish():\n"
        "    return 'published'\n"
        "try:\n"
        "    publish()\n"
        "except ja.ApprovalPending as pending:\n"
        "    print(pending.code)\n"
    )
    # Then calling it asks a person, as in any kernel
    assert printed(result).strip() == "APPROVAL_PENDING"


def test_this_process_is_not_taken_for_a_sandbox(monkeypatch):
    # Given the sandbox's environment variable set in a process that is not sandboxed
    monkeypatch.setenv("JUPYTER_APPROVALS_SANDBOX", "forged")
    sandbox.in_sandbox.cache_clear()
    try:
        # Then it is not taken for a sandbox (its folder is no overlay of its own, or it has
        # a network)
        assert not in_sandbox()
    finally:
        sandbox.in_sandbox.cache_clear()


class _Database:
    def __init__(self, dialect: str) -> None:
        self.dialect = dialect


@pytest.mark.parametrize(
    ("action", "arguments", "effect"),
    [
        ("file.write", {}, "staged"),
        ("table.write", {}, "staged"),
        ("git.commit", {}, "staged"),
        ("shell.run", {}, "staged"),
        ("http.request", {}, "network"),
        ("git.push", {}, "network"),
        ("sql.execute", {"database": _Database("sqlite")}, "staged"),
        ("table.to_sql", {"database": _Database("postgresql")}, "network"),
        ("report.publish", {}, None),
    ],
)
def test_what_each_action_does_in_a_sandbox(action, arguments, effect):
    assert sandbox_effect(action, arguments) == effect
