"""Moving the decision journal (T1/T2): JUPYTER_APPROVALS_STATE_DIR and XDG_STATE_HOME set by
cell code, into the project, relative, through a symlink, or after approvals started.

A journal inside the project could be rewritten by anything that edits the project, so
protected calls refuse to run while it would be there; once a kernel's approvals started, its
journal stays where it was.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_approvals.testing import KernelFrontend
from tests.kernel.helpers import run, value

from .conftest import PRELUDE, WRITER, journal_entries

pytestmark = pytest.mark.kernel

Fresh = tuple[KernelFrontend, Path, Path]


def refused_before_asking(fe: KernelFrontend, project: Path, setup: str) -> str:
    """Run ``setup`` before approvals start, then a protected call; return its error code."""
    assert run(fe, setup).status == "ok"
    run(fe, PRELUDE + WRITER.format(name="w_moved"))
    result = run(fe, "w_moved('x', 'out.txt')")
    assert result.ename is not None
    assert not (project / "out.txt").exists()
    assert value(fe, "len(ja.pending())") == "0"
    return value(fe, "session.journal.path")


def test_a_state_dir_inside_the_project_refuses_protected_calls(fresh_kernel: Fresh) -> None:
    fe, project, _ = fresh_kernel
    # When a cell points the state dir into the project before approvals start
    setup = f"import os; os.environ['JUPYTER_APPROVALS_STATE_DIR'] = {str(project / '.j')!r}"
    refused_before_asking(fe, project, setup)
    # Then protected calls refuse, saying why
    result = run(fe, "w_moved('x', 'out.txt')")
    assert result.ename == "ApprovalJournalInsideProject"
    assert not (project / "out.txt").exists()


def test_a_relative_state_dir_refuses_protected_calls(fresh_kernel: Fresh) -> None:
    fe, project, _ = fresh_kernel
    refused_before_asking(
        fe, project, "import os; os.environ['JUPYTER_APPROVALS_STATE_DIR'] = 'journal-here'"
    )
    assert run(fe, "w_moved('x', 'out.txt')").ename == "ApprovalJournalUnusable"
    assert not (project / "journal-here").exists()


def test_a_state_dir_linked_into_the_project_refuses_protected_calls(
    fresh_kernel: Fresh, tmp_path: Path
) -> None:
    fe, project, _ = fresh_kernel
    # Given a symlink outside the project that points into it
    (project / "records").mkdir()
    link = tmp_path / "innocent-state"
    link.symlink_to(project / "records")
    # When a cell names the link as the state dir
    refused_before_asking(
        fe, project, f"import os; os.environ['JUPYTER_APPROVALS_STATE_DIR'] = {str(link)!r}"
    )
    # Then the link is followed and the calls refuse
    assert run(fe, "w_moved('x', 'out.txt')").ename == "ApprovalJournalInsideProject"


def test_an_xdg_state_home_inside_the_project_refuses_protected_calls(fresh_kernel: Fresh) -> None:
    fe, project, _ = fresh_kernel
    # When a cell removes the state dir setting and points XDG_STATE_HOME into the project
    refused_before_asking(
        fe,
        project,
        "import os; os.environ.pop('JUPYTER_APPROVALS_STATE_DIR', None); "
        f"os.environ['XDG_STATE_HOME'] = {str(project / 'state')!r}",
    )
    assert run(fe, "w_moved('x', 'out.txt')").ename == "ApprovalJournalInsideProject"


def test_moving_the_state_dir_after_approvals_started_moves_nothing(
    fresh_kernel: Fresh, tmp_path: Path
) -> None:
    # Given a kernel whose approvals started with its journal in the state dir
    fe, _, state = fresh_kernel
    run(fe, PRELUDE + WRITER.format(name="w_stays"))
    before = value(fe, "str(session.journal.path)")
    # When a cell then points the state dir somewhere else and makes a call
    elsewhere = tmp_path / "out-of-sight"
    run(fe, f"import os; os.environ['JUPYTER_APPROVALS_STATE_DIR'] = {str(elsewhere)!r}")
    assert run(fe, "w_stays('x', 'out.txt')").ename == "ApprovalPending"
    # Then the request is journaled where the journal was, and nothing went elsewhere
    assert value(fe, "str(session.journal.path)") == before
    assert [e["event"] for e in journal_entries(state)] == ["requested"]
    assert not elsewhere.exists()
