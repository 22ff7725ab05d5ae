"""Where the journal lives: state dir, project root, journal path, the inside-project check."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import platformdirs
import pytest

from jupyter_approvals.core.errors import ApprovalJournalInsideProject, ApprovalJournalUnusable
from jupyter_approvals.core.project import (
    STATE_DIR_ENV,
    default_state_dir,
    ensure_outside_project,
    journal_location,
    journal_path,
    make_git_top_level,
    project_key,
    project_root_for,
)


def _sha16(path: Path) -> str:
    return hashlib.sha256(str(path.resolve()).encode("utf-8")).hexdigest()[:16]


@pytest.fixture
def base(tmp_path: Path) -> Path:
    """A resolved scratch dir with no git repository above it."""
    root = tmp_path.resolve()
    assert not any((p / ".git").exists() for p in (root, *root.parents))
    return root


# -- journal path ----------------------------------------------------------------------


def test_journal_path_is_16_hex_of_sha256_of_the_resolved_root(base: Path) -> None:
    # Given a project reached through a symlink
    real = base / "real-project"
    real.mkdir()
    alias = base / "alias"
    alias.symlink_to(real, target_is_directory=True)
    state = base / "state"

    # When the journal path is computed from the alias
    path = journal_path(alias, state)

    # Then it is keyed by the real path: 16 hex digits of its sha256
    expected = _sha16(real)
    assert path == state / "decisions" / f"{expected}.jsonl"
    assert len(expected) == 16
    assert int(expected, 16) >= 0
    assert project_key(alias) == project_key(real) == expected


def test_journal_path_creates_nothing(base: Path) -> None:
    # Given a state dir that does not exist
    state = base / "state"

    # When a journal path is computed
    journal_path(base, state)

    # Then nothing was created
    assert not state.exists()


def test_project_key_of_non_utf8_path_hashes_its_bytes(base: Path) -> None:
    # Given a directory whose name is not valid UTF-8 (surrogateescape'd by Python)
    odd = base / "caf\udce9"
    try:
        odd.mkdir()
    except (OSError, UnicodeEncodeError):
        pytest.skip("the filesystem does not accept non-UTF-8 names")

    # When its key is computed
    key = project_key(odd)

    # Then it is the hash of the raw path bytes
    raw = str(odd.resolve()).encode("utf-8", "surrogateescape")
    assert key == hashlib.sha256(raw).hexdigest()[:16]


# -- project root ----------------------------------------------------------------------


def test_git_top_level_is_found_from_a_nested_directory(base: Path) -> None:
    # Given a repository with a .git directory and a notebook dir three levels down
    repo = make_git_top_level(base / "repo")
    nested = repo / "a" / "b" / "notebooks"
    nested.mkdir(parents=True)

    # When the project root is looked up from the nested dir
    root = project_root_for(nested)

    # Then it is the repository top level
    assert root == repo


def test_worktree_git_file_marks_the_top_level(base: Path) -> None:
    # Given a worktree whose .git is a file pointing elsewhere
    worktree = base / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text("gitdir: /somewhere/.git/worktrees/wt\n")
    nested = worktree / "src"
    nested.mkdir()

    # When the project root is looked up
    root = project_root_for(nested)

    # Then the worktree is the root
    assert root == worktree


def test_nearest_repository_wins_for_a_submodule(base: Path) -> None:
    # Given a submodule (.git file) inside a repository (.git dir)
    outer = make_git_top_level(base / "outer")
    sub = outer / "vendor" / "lib"
    sub.mkdir(parents=True)
    (sub / ".git").write_text("gitdir: ../../.git/modules/lib\n")

    # When the root is looked up from inside the submodule
    root = project_root_for(sub / ".")

    # Then the submodule is the project
    assert root == sub


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda dot_git: dot_git.mkdir(), id="empty-folder"),
        pytest.param(lambda dot_git: dot_git.write_text(""), id="empty-file"),
        pytest.param(
            lambda dot_git: (dot_git / "objects").mkdir(parents=True), id="folder-without-head"
        ),
        pytest.param(lambda dot_git: dot_git.write_text("not a gitdir line"), id="other-file"),
    ],
)
def test_a_git_entry_that_is_no_repository_moves_no_project_root(base: Path, make) -> None:
    # Given a home-rooted server's home with a notebook folder, and an empty .git at the home
    # (what anything that can create a folder or file could leave there)
    home = base / "home"
    work = home / "work"
    work.mkdir(parents=True)
    make(home / ".git")
    # When the root is looked up from the notebook folder
    root = project_root_for(work)
    # Then the notebook folder is the project, and the default state dir in the home is fine
    assert root == work
    assert project_root_for(home) == home
    ensure_outside_project(home / ".local" / "state" / "jupyter-approvals", home, home=home)


def test_without_git_the_directory_itself_is_the_root(base: Path) -> None:
    # Given a plain directory with no repository above it
    plain = base / "plain" / "dir"
    plain.mkdir(parents=True)

    # When the root is looked up
    root = project_root_for(plain)

    # Then it is the directory itself
    assert root == plain


def test_project_root_resolves_symlinks(base: Path) -> None:
    # Given a symlink outside a repository that points into it
    repo = make_git_top_level(base / "repo")
    (repo / "nb").mkdir()
    link = base / "link-to-nb"
    link.symlink_to(repo / "nb", target_is_directory=True)

    # When the root is looked up through the link
    root = project_root_for(link)

    # Then the link is resolved and the real repository found
    assert root == repo


def test_a_notebook_file_uses_its_directory(base: Path) -> None:
    # Given a notebook file in a plain directory
    folder = base / "work"
    folder.mkdir()
    notebook = folder / "analysis.ipynb"
    notebook.write_text("{}")

    # When the root is looked up from the file
    root = project_root_for(notebook)

    # Then its directory is the root
    assert root == folder


# -- state dir -------------------------------------------------------------------------


def test_env_var_moves_the_state_root(base: Path) -> None:
    # Given the override set to an absolute path
    environ = {STATE_DIR_ENV: str(base / "elsewhere")}

    # When the state dir is computed
    state = default_state_dir(environ)

    # Then it is that path
    assert state == base / "elsewhere"


def test_relative_env_var_is_an_error(base: Path) -> None:
    # Given a relative override
    environ = {STATE_DIR_ENV: "relative/state"}

    # When / Then computing the state dir fails, naming the variable
    with pytest.raises(ValueError, match=STATE_DIR_ENV):
        default_state_dir(environ)


def test_empty_env_var_means_the_platform_default() -> None:
    # Given an empty override
    environ = {STATE_DIR_ENV: ""}

    # When the state dir is computed
    state = default_state_dir(environ)

    # Then it is platformdirs' choice
    assert state == Path(platformdirs.user_state_dir("jupyter-approvals"))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG applies on Linux")
def test_xdg_state_home_is_honoured(base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given XDG_STATE_HOME pointing at a scratch dir and no override
    monkeypatch.setenv("XDG_STATE_HOME", str(base / "xdg"))
    monkeypatch.delenv(STATE_DIR_ENV, raising=False)

    # When the state dir and a journal path are computed
    state = default_state_dir()
    path = journal_path(base, state)

    # Then both live under XDG_STATE_HOME
    assert state == base / "xdg" / "jupyter-approvals"
    assert path.parent == base / "xdg" / "jupyter-approvals" / "decisions"


def test_override_wins_over_xdg(base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given both XDG_STATE_HOME and the override
    monkeypatch.setenv("XDG_STATE_HOME", str(base / "xdg"))
    monkeypatch.setenv(STATE_DIR_ENV, str(base / "mine"))

    # When the state dir is computed from the process environment
    state = default_state_dir()

    # Then the override wins
    assert state == base / "mine"


# -- inside-project check --------------------------------------------------------------


def test_state_dir_equal_to_project_is_refused(base: Path) -> None:
    # Given a state dir that is the project itself
    project = base / "proj"
    project.mkdir()

    # When / Then the check refuses, with the resolved paths in details
    with pytest.raises(ApprovalJournalInsideProject) as caught:
        ensure_outside_project(project, project)
    assert caught.value.code == "APPROVAL_JOURNAL_INSIDE_PROJECT"
    assert caught.value.details == {"state_dir": str(project), "project_root": str(project)}


def test_state_dir_below_project_is_refused_even_before_it_exists(base: Path) -> None:
    # Given a state dir nested (and not yet created) below the project
    project = base / "proj"
    project.mkdir()
    state = project / ".cache" / "approvals"

    # When / Then the check refuses
    with pytest.raises(ApprovalJournalInsideProject) as caught:
        ensure_outside_project(state, project)
    assert caught.value.details["state_dir"] == str(state)


@pytest.mark.parametrize("name", ["proj-state", "proj2", "other"])
def test_sibling_state_dir_passes(base: Path, name: str) -> None:
    # Given a state dir next to the project (including names sharing its prefix)
    project = base / "proj"
    project.mkdir()
    state = base / name
    state.mkdir()

    # When / Then the check passes
    ensure_outside_project(state, project)


def test_state_dir_above_project_passes(base: Path) -> None:
    # Given a project that lives inside the state dir's parent tree, not the reverse
    state = base / "state"
    project = state / "nested-project"
    project.mkdir(parents=True)

    # When / Then the check passes: only a journal inside the project is a problem
    ensure_outside_project(state, project)


def test_symlink_into_the_project_is_resolved(base: Path) -> None:
    # Given a state dir path outside the project that is a symlink into it
    project = base / "proj"
    (project / "hidden").mkdir(parents=True)
    sneaky = base / "state-link"
    sneaky.symlink_to(project / "hidden", target_is_directory=True)

    # When / Then the check sees through it
    with pytest.raises(ApprovalJournalInsideProject) as caught:
        ensure_outside_project(sneaky / "jupyter-approvals", project)
    assert caught.value.details["state_dir"] == str(project / "hidden" / "jupyter-approvals")


def test_project_given_through_a_symlink_is_resolved(base: Path) -> None:
    # Given a project named through a symlink and a state dir inside the real project
    project = base / "proj"
    project.mkdir()
    alias = base / "alias"
    alias.symlink_to(project, target_is_directory=True)

    # When / Then the check refuses
    with pytest.raises(ApprovalJournalInsideProject):
        ensure_outside_project(project / "state", alias)


def test_one_place_says_where_the_journal_is_and_why_it_cannot_be_used(base: Path) -> None:
    # Given a relative override
    environ = {STATE_DIR_ENV: "relative/state"}
    # When the journal of a project is located
    location = journal_location(base / "project", environ)
    # Then the problem has its own code, and the fallback is an absolute directory
    assert isinstance(location.problem, ApprovalJournalUnusable)
    assert location.problem.code == "APPROVAL_JOURNAL_UNUSABLE"
    assert location.state_dir.is_absolute()
    assert location.path == journal_path(base / "project", location.state_dir)
    # And a state dir inside the project is the other problem
    inside = journal_location(base, {STATE_DIR_ENV: str(base / "state")})
    assert isinstance(inside.problem, ApprovalJournalInsideProject)
    # And a usable one is none
    fine = journal_location(base / "project", {STATE_DIR_ENV: str(base / "state")})
    assert fine.problem is None
    assert fine.state_dir == base / "state"


def test_a_notebook_in_the_home_directory_works_with_the_default_state_dir(base: Path) -> None:
    # Given a home directory that is no git work tree, and the platform default state dir in it
    home = base / "home"
    home.mkdir()
    state = home / ".local" / "state" / "jupyter-approvals"
    # When / Then a notebook straight in the home directory may use it
    ensure_outside_project(state, home, home=home)
    # But a visible folder of the home directory is refused, like any folder of a project
    with pytest.raises(ApprovalJournalInsideProject):
        ensure_outside_project(home / "approvals-state", home, home=home)
    # And so is the home directory itself
    with pytest.raises(ApprovalJournalInsideProject):
        ensure_outside_project(home, home, home=home)


def test_a_home_directory_that_is_a_git_work_tree_is_a_project(base: Path) -> None:
    # Given a home directory kept in git (dotfiles), and the default state dir in it
    home = make_git_top_level(base / "home")
    # When / Then the journal may not live there: git could commit or check it out
    with pytest.raises(ApprovalJournalInsideProject):
        ensure_outside_project(home / ".local" / "state" / "jupyter-approvals", home, home=home)


def test_a_folder_of_the_home_directory_is_a_project_of_its_own(base: Path) -> None:
    # Given a notebook folder below the home directory and a hidden state dir inside that folder
    home = base / "home"
    work = home / "work"
    work.mkdir(parents=True)
    # When / Then the exception is for the home directory only
    with pytest.raises(ApprovalJournalInsideProject):
        ensure_outside_project(work / ".state", work, home=home)
