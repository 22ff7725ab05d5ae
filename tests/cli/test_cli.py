"""``jupyter approvals doctor`` and ``jupyter approvals journal``, run as a user runs them.

Each test starts the real console script through ``jupyter`` (its subcommand lookup finds
``jupyter-approvals``) in a subprocess with its own IPython dir, Jupyter paths and state dir.
Journals are written with the same ``Journal`` a kernel uses.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jupyter_approvals import __version__
from jupyter_approvals.cli import main
from jupyter_approvals.core.journal.writer import Journal
from jupyter_approvals.core.project import journal_path

JUPYTER = Path(sys.executable).with_name("jupyter")
REPO = Path(__file__).resolve().parents[2]
SHIPPED_SERVER_CONFIG = REPO / "jupyter-config" / "server-config" / "jupyter_approvals.json"
START = 1_800_000_000.0  # 2027-01-15T08:00:00Z


@pytest.fixture
def env(tmp_path: Path, state_dir: Path) -> dict[str, str]:
    """A process environment isolated from this machine's Jupyter and IPython setup."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER_APPROVALS_")}
    for name in ("jupyter-config", "jupyter-data", "ipython"):
        (tmp_path / name).mkdir()
    base.update(
        JUPYTER_APPROVALS_STATE_DIR=str(state_dir),
        IPYTHONDIR=str(tmp_path / "ipython"),
        JUPYTER_CONFIG_PATH=str(tmp_path / "jupyter-config"),
        JUPYTER_CONFIG_DIR=str(tmp_path / "user-config"),
        JUPYTER_PATH=str(tmp_path / "jupyter-data"),
        JUPYTER_DATA_DIR=str(tmp_path / "user-data"),
        COLUMNS="1000",  # wide enough for any temporary path, under xdist too
    )
    return base


def run(env: dict[str, str], *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(JUPYTER), "approvals", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def install_everything(tmp_path: Path) -> None:
    """Enable the server extension and install the three frontends, as the wheel would."""
    config_d = tmp_path / "jupyter-config" / "jupyter_server_config.d"
    config_d.mkdir()
    (config_d / "jupyter_approvals.json").write_bytes(SHIPPED_SERVER_CONFIG.read_bytes())
    for name in ("jupyter-approvals", "@jupyter-widgets/jupyterlab-manager", "anywidget"):
        directory = tmp_path / "jupyter-data" / "labextensions" / name
        directory.mkdir(parents=True)
        (directory / "package.json").write_text(json.dumps({"name": name, "version": "1.0.0"}))


class Clock:
    """A journal clock that advances one second per entry."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        self.now += 1
        return self.now


def write_journal(project: Path, state_dir: Path) -> Journal:
    """Three requests' worth of entries, oldest first."""
    journal = Journal.for_project(project, state_dir, clock=Clock())
    entries = [
        ("requested", {"request_id": "aaaa000000000001", "action": "table.write"}),
        (
            "approved",
            {
                "request_id": "aaaa000000000001",
                "action": "table.write",
                "channel": "card",
                "latency_ms": 2412,
                "summary": "Write sales.csv",
            },
        ),
        (
            "executed",
            {
                "request_id": "aaaa000000000001",
                "action": "table.write",
                "summary": "Write sales.csv",
            },
        ),
        (
            "rejected",
            {
                "request_id": "bbbb000000000002",
                "action": "git.push",
                "channel": "sidebar",
                "latency_ms": 5100,
                "reason": "not on main",
                "code": "APPROVAL_REJECTED",  # as the kernel records a rejection
                "summary": "Push to origin/main",
            },
        ),
        (
            "refused",
            {
                "request_id": "cccc000000000003",
                "action": "file.delete",
                "code": "APPROVAL_NOT_FROM_FRONTEND",
                "summary": "Delete data/",
            },
        ),
    ]
    for event, fields in entries:
        assert journal.append(event, **fields)
    return journal


# -- doctor ---------------------------------------------------------------------------------


def test_doctor_json_reports_a_looser_setting_and_exits_1(
    env: dict[str, str], tmp_path: Path, project: Path
) -> None:
    # Given a complete install and a profile that tries to lengthen the approval lifetime
    install_everything(tmp_path)
    profile = tmp_path / "ipython" / "profile_default"
    profile.mkdir()
    (profile / "ipython_kernel_config.py").write_text("c.ApprovalsConfig.approval_ttl = 86400\n")

    # When the doctor runs with --json
    result = run(env, "doctor", "--json", "--path", str(project))

    # Then the JSON lists the ignored setting, the limits check fails, and the exit code is 1
    assert result.returncode == 1, result.stderr
    data = json.loads(result.stdout)
    checks = {c["name"]: c for c in data["checks"]}
    assert checks["limits"]["ok"] is False
    assert [c for c in checks if not checks[c]["ok"]] == ["limits"]
    assert data["ok"] is False
    assert data["limits"]["approval_ttl_s"] == 600
    assert data["ignored_settings"] == [
        {
            "name": "ApprovalsConfig.approval_ttl",
            "why": "would loosen a promised limit; kept at the bound",
            "source": str(profile / "ipython_kernel_config.py"),
            "requested": 86400,
            "applied": 600.0,
        }
    ]
    assert data["not_guaranteed"]
    assert data["version"] == __version__


def test_doctor_passes_on_a_complete_install_and_exits_0(
    env: dict[str, str], tmp_path: Path, project: Path
) -> None:
    # Given the server extension enabled, every frontend installed, no configuration
    install_everything(tmp_path)

    # When the doctor runs in the project
    result = run(env, "doctor", cwd=project)

    # Then every check line says OK, and the exit code is 0
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    for name in ("server_extension", "labextension", "widgets", "journal", "limits", "sandbox"):
        assert any(line.startswith("OK") and f"  {name}  " in line for line in lines), name
    assert f"project {project}" in lines[0]
    assert "Ignored settings: none" in lines
    assert "Not guaranteed:" in lines
    assert lines[-1] == "All checks passed."


def test_doctor_table_shows_failures_with_fixes(
    env: dict[str, str], tmp_path: Path, project: Path
) -> None:
    # Given nothing installed in the isolated paths and the state dir inside the project
    env["JUPYTER_APPROVALS_STATE_DIR"] = str(project / ".state")
    env["JUPYTER_APPROVALS_TRUST_ME"] = "yes"

    # When the doctor runs
    result = run(env, "doctor", "--path", str(project))

    # Then the journal check fails with its fix, the stray variable is listed, exit code 1
    assert result.returncode == 1
    out = result.stdout
    journal_line = next(line for line in out.splitlines() if "  journal  " in line)
    assert journal_line.startswith("FAIL")
    assert "APPROVAL_JOURNAL_INSIDE_PROJECT" in journal_line
    assert "fix: set JUPYTER_APPROVALS_STATE_DIR" in out
    assert "JUPYTER_APPROVALS_TRUST_ME (environment)" in out
    assert "yes" not in out.split("Ignored settings:")[1].split("Not guaranteed:")[0]
    assert "checks failed." in out.splitlines()[-1]


def test_doctor_with_a_missing_path_exits_2(env: dict[str, str], tmp_path: Path) -> None:
    # Given a path that does not exist
    missing = tmp_path / "nope"

    # When the doctor is pointed at it
    result = run(env, "doctor", "--path", str(missing))

    # Then it says so on stderr and exits 2
    assert result.returncode == 2
    assert result.stderr.strip() == f"jupyter approvals doctor: no such directory: {missing}"
    assert result.stdout == ""


# -- journal --------------------------------------------------------------------------------


def test_journal_table_lists_entries_newest_first(
    env: dict[str, str], project: Path, state_dir: Path
) -> None:
    # Given a journal with five entries
    journal = write_journal(project, state_dir)

    # When the journal is shown from a subdirectory of the project
    sub = project / "notebooks"
    sub.mkdir()
    result = run(env, "journal", "--path", str(sub))

    # Then the header names the project and file, then one line per entry, newest first
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"Journal of {project}: {journal.path} (newest first)"
    header = lines[1].split()
    assert header[:3] == ["TIME", "(UTC)", "EVENT"]
    assert header[-1] == "SUMMARY"
    rows = lines[2:]
    assert [row.split()[2] for row in rows] == [
        "refused",
        "rejected",
        "executed",
        "approved",
        "requested",
    ]
    assert rows[0].startswith("2027-01-15 08:00:05  refused")
    assert "APPROVAL_NOT_FROM_FRONTEND" in rows[0]
    assert rows[0].endswith("Delete data/")
    rejected = rows[1].split()
    assert rejected[3:11] == [
        "git.push",
        "bbbb000000000002",
        "sidebar",
        "5100",
        "ms",
        "not",
        "on",
        "main",
    ]
    assert "2412 ms" in rows[3]
    assert "card" in rows[3]


def test_journal_table_fits_the_terminal_width(
    env: dict[str, str], project: Path, state_dir: Path
) -> None:
    # Given a journal, and a terminal 60 columns wide
    write_journal(project, state_dir)
    env["COLUMNS"] = "60"

    # When the journal is shown
    result = run(env, "journal", "--path", str(project))

    # Then no line is wider than the terminal; cut lines end with "..."
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert all(len(line) <= 60 for line in lines)
    assert any(line.endswith("...") for line in lines)


def test_journal_table_spells_out_control_characters(
    env: dict[str, str], project: Path, state_dir: Path
) -> None:
    # Given an entry whose summary carries terminal escapes and a line break
    journal = Journal.for_project(project, state_dir, clock=Clock())
    assert journal.append("requested", request_id="r1", summary="ok\x1b[2J\nAPPROVED")

    # When the journal is shown
    result = run(env, "journal", "--path", str(project))

    # Then the escape reaches the terminal as text, and the entry stays on one line
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout
    assert result.stdout.splitlines()[-1].endswith("ok⟦U+001B⟧[2J⟦U+000A⟧APPROVED")


def test_journal_json_with_filters_and_paging(
    env: dict[str, str], project: Path, state_dir: Path
) -> None:
    # Given a journal with five entries, three of them for table.write
    journal = write_journal(project, state_dir)

    # When it is read as JSON: everything, one event, one action paged
    everything = json.loads(run(env, "journal", "--json", "--path", str(project)).stdout)
    approved = run(env, "journal", "--json", "--path", str(project), "--outcome", "approved")
    paged = run(
        env,
        "journal",
        "--json",
        "--path",
        str(project),
        "--action",
        "table.write",
        "--limit",
        "1",
        "--offset",
        "1",
    )

    # Then entries come newest first, and filters and paging select as asked
    assert [e["event"] for e in everything["entries"]] == [
        "refused",
        "rejected",
        "executed",
        "approved",
        "requested",
    ]
    assert everything["journal"] == str(journal.path)
    assert everything["project_root"] == str(project)
    assert everything["has_more"] is False
    assert everything["exists"] is True
    assert [e["event"] for e in json.loads(approved.stdout)["entries"]] == ["approved"]
    page = json.loads(paged.stdout)
    assert [e["event"] for e in page["entries"]] == ["approved"]
    assert page["has_more"] is True
    assert (page["limit"], page["offset"]) == (1, 1)


def test_journal_limit_says_how_to_see_more(
    env: dict[str, str], project: Path, state_dir: Path
) -> None:
    # Given a journal with five entries
    write_journal(project, state_dir)

    # When two are shown in the table
    result = run(env, "journal", "--path", str(project), "--limit", "2")

    # Then two rows are shown and the next offset is given
    lines = result.stdout.splitlines()
    assert len(lines) == 2 + 2 + 1
    assert lines[-1] == "more entries: --offset 2"


def test_journal_not_written_yet(env: dict[str, str], project: Path, state_dir: Path) -> None:
    # Given a project whose journal does not exist
    expected = journal_path(project, state_dir)

    # When the journal is shown, as a table and as JSON
    table = run(env, "journal", cwd=project)
    as_json = run(env, "journal", "--json", cwd=project)

    # Then it says there is none yet, and JSON has no entries
    assert table.returncode == 0
    assert table.stdout.strip() == f"no journal yet for {project} (it would be {expected})"
    data = json.loads(as_json.stdout)
    assert data["entries"] == []
    assert data["exists"] is False


def test_journal_with_a_missing_path_exits_2(env: dict[str, str], tmp_path: Path) -> None:
    # Given a path that does not exist
    missing = tmp_path / "nope"

    # When the journal is asked for it
    result = run(env, "journal", "--path", str(missing))

    # Then the error is stable and the exit code 2
    assert result.returncode == 2
    assert result.stderr.strip() == f"jupyter approvals journal: no such directory: {missing}"


@pytest.mark.skipif(os.name != "posix", reason="O_NOFOLLOW")
def test_journal_unreadable_exits_2(
    env: dict[str, str], project: Path, state_dir: Path, tmp_path: Path
) -> None:
    # Given a symlink where the journal should be (the journal never follows one)
    path = journal_path(project, state_dir)
    path.parent.mkdir(parents=True)
    target = tmp_path / "planted.jsonl"
    target.write_text('{"v":1,"event":"approved"}\n')
    path.symlink_to(target)

    # When the journal is shown
    result = run(env, "journal", "--path", str(project))

    # Then it refuses with a clear message and exit code 2
    assert result.returncode == 2
    assert result.stderr.startswith(f"jupyter approvals journal: cannot read the journal {path}: ")
    assert result.stdout == ""


def test_journal_unknown_outcome_is_a_usage_error(env: dict[str, str], project: Path) -> None:
    # Given an event name the journal never writes
    # When it is used as a filter
    result = run(env, "journal", "--path", str(project), "--outcome", "aproved")

    # Then argparse refuses it with exit code 2, listing the valid choices
    assert result.returncode == 2
    assert "invalid choice: 'aproved'" in result.stderr
    assert "approved" in result.stderr


def test_version(env: dict[str, str]) -> None:
    # Given the installed console script
    # When asked for its version
    result = run(env, "--version")

    # Then it prints the package version
    assert result.returncode == 0
    assert result.stdout.strip() == f"jupyter-approvals {__version__}"


def test_main_without_a_command_prints_usage_and_returns_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given no arguments
    # When main runs in process
    code = main([])

    # Then it shows usage on stderr and returns 2
    assert code == 2
    assert "doctor" in capsys.readouterr().err


def test_journal_says_where_the_kernels_and_the_servers_records_disagree(
    env: dict[str, str], project: Path, state_dir: Path
) -> None:
    # Given a journal where the server relayed a rejection and the kernel recorded an approval
    journal = Journal.for_project(project, state_dir, clock=Clock())
    fingerprint = "sha256:" + "a" * 64
    kernel = {"request_id": "r1", "kernel_id": "k1"}
    journal.append("requested", **kernel, summary="Drop prod", fingerprint=fingerprint)
    journal.append(
        "relayed",
        **kernel,
        decision="reject",
        recorded_by="server",
        shown_summary="Drop prod",
        shown_fingerprint=fingerprint,
    )
    journal.append("approved", **kernel, summary="Drop prod", fingerprint=fingerprint)
    journal.append("executed", **kernel)

    # When the journal is shown, as a table and as JSON
    table = run(env, "journal", "--path", str(project))
    as_json = run(env, "journal", "--path", str(project), "--json")

    # Then both say the approval was never relayed and the answer was turned around
    assert table.returncode == 0, table.stderr
    assert "Where the kernels' record and the server's disagree (2):" in table.stdout
    assert "r1  turned_around: the server relayed reject; the kernel recorded approved" in (
        table.stdout
    )
    kinds = [d["kind"] for d in json.loads(as_json.stdout)["disagreements"]]
    assert kinds == ["not_relayed", "turned_around"]
