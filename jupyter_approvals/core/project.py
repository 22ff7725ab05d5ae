"""Where the decision journal lives: the state directory, the project root, the journal path.

The journal for a project is
``<state dir>/decisions/<first 16 hex digits of sha256(project root)>.jsonl``.
The state directory is ``platformdirs.user_state_dir("jupyter-approvals")`` (which honours
``XDG_STATE_HOME`` on Linux) unless ``JUPYTER_APPROVALS_STATE_DIR`` names another one.

The journal must live outside the project it protects: anything that can write files in
the project (an agent, a sync tool, ``git checkout``) could otherwise rewrite or publish
the record of what a person approved. :func:`ensure_outside_project` is that check.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from jupyter_approvals.core.errors import (
    ApprovalError,
    ApprovalJournalInsideProject,
    ApprovalJournalUnusable,
)

__all__ = [
    "APP_NAME",
    "DECISIONS_DIRNAME",
    "STATE_DIR_ENV",
    "JournalLocation",
    "default_state_dir",
    "ensure_outside_project",
    "journal_location",
    "journal_path",
    "project_key",
    "project_root_for",
]

#: The application name given to platformdirs.
APP_NAME = "jupyter-approvals"

#: Environment variable that moves the state root; it must hold an absolute path.
STATE_DIR_ENV = "JUPYTER_APPROVALS_STATE_DIR"

#: Sub-directory of the state dir that holds one journal file per project.
DECISIONS_DIRNAME = "decisions"


def default_state_dir(environ: Mapping[str, str] = os.environ) -> Path:
    """The state root: ``$JUPYTER_APPROVALS_STATE_DIR`` if set, else the platform default.

    An empty ``JUPYTER_APPROVALS_STATE_DIR`` counts as unset. A relative value raises
    :class:`~jupyter_approvals.core.errors.ApprovalJournalUnusable` (a ValueError): it would
    silently depend on the kernel's working directory, which is usually inside the project.
    ``environ`` only governs that variable; the platform default comes from platformdirs,
    which reads the process environment (``XDG_STATE_HOME`` on Linux) on every call.
    """
    override = environ.get(STATE_DIR_ENV, "")
    if override:
        path = Path(override)
        if not path.is_absolute():
            raise ApprovalJournalUnusable(
                f"{STATE_DIR_ENV} must be an absolute path, got {override!r}; "
                "unset it to use the default state directory",
                state_dir=override,
            )
        return path
    path = Path(platformdirs.user_state_dir(APP_NAME))
    # A relative XDG_STATE_HOME is invalid per the XDG spec; refuse it for the same reason.
    if not path.is_absolute():
        raise ApprovalJournalUnusable(
            f"the platform state directory {str(path)!r} is not absolute "
            f"(check XDG_STATE_HOME); set {STATE_DIR_ENV} to an absolute path",
            state_dir=str(path),
        )
    return path


def is_git_top_level(directory: str | os.PathLike[str]) -> bool:
    """Whether ``directory`` holds a ``.git`` that git itself takes for a repository.

    A directory with ``HEAD``, ``objects/`` and ``refs/`` (a normal clone), or a file starting
    ``gitdir:`` (a worktree or a submodule). An empty ``.git`` (which anything that can create
    a folder can make) is no repository and moves no project root.
    """
    dot_git = Path(directory) / ".git"
    if dot_git.is_dir():
        return (
            (dot_git / "HEAD").is_file()
            and (dot_git / "objects").is_dir()
            and (dot_git / "refs").is_dir()
        )
    if dot_git.is_file():
        try:
            with dot_git.open("rb") as handle:
                return handle.read(7) == b"gitdir:"
        except OSError:
            return False
    return False


def make_git_top_level(directory: str | os.PathLike[str]) -> Path:
    """Make ``directory`` (created if missing) a git top level as :func:`is_git_top_level`
    sees one, without running git: an empty repository's ``HEAD``, ``objects/`` and ``refs/``.
    For tests and examples; returns ``directory``."""
    dot_git = Path(directory) / ".git"
    (dot_git / "objects").mkdir(parents=True, exist_ok=True)
    (dot_git / "refs" / "heads").mkdir(parents=True, exist_ok=True)
    head = dot_git / "HEAD"
    if not head.exists():
        head.write_text("ref: refs/heads/main\n")
    return Path(directory)


def project_root_for(directory: str | os.PathLike[str]) -> Path:
    """The project root for a notebook directory: its git top-level, else the directory.

    Walks up from ``directory`` (symlinks resolved) to the first ancestor-or-self that
    :func:`is_git_top_level`. git itself is never run: this is called on the kernel's hot path
    and must not depend on a ``git`` binary. If ``directory`` is an existing file (say the
    notebook itself), its directory is used.
    """
    start = Path(directory).resolve()
    if start.is_file():
        start = start.parent
    for candidate in (start, *start.parents):
        if is_git_top_level(candidate):
            return candidate
    return start


def project_key(project_root: str | os.PathLike[str]) -> str:
    """The first 16 hex digits of sha256 of the resolved absolute project root path text.

    The text is encoded as UTF-8; a POSIX path holding bytes that are not UTF-8 hashes its
    original bytes (``surrogateescape``), so every path has exactly one key.
    """
    text = str(Path(project_root).resolve())
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def journal_path(project_root: str | os.PathLike[str], state_dir: str | os.PathLike[str]) -> Path:
    """``<state_dir>/decisions/<project_key(project_root)>.jsonl``; nothing is created."""
    return Path(state_dir) / DECISIONS_DIRNAME / f"{project_key(project_root)}.jsonl"


def _is_same_or_below(inner: Path, outer: Path) -> bool:
    if inner == outer or outer in inner.parents:
        return True
    # Paths can differ as text yet name the same directory (a bind mount, a
    # case-insensitive filesystem), so also compare file identity for each existing
    # ancestor-or-self of ``inner``.
    try:
        outer_stat = outer.stat()
    except OSError:
        return False
    if outer_stat.st_ino == 0:
        # Some filesystems (network shares, FUSE) report no inode numbers; identity is unknown.
        return False
    for candidate in (inner, *inner.parents):
        try:
            st = candidate.stat()
        except OSError:
            continue
        if (st.st_dev, st.st_ino) == (outer_stat.st_dev, outer_stat.st_ino):
            return True
    return False


def ensure_outside_project(
    state_dir: str | os.PathLike[str],
    project_root: str | os.PathLike[str],
    home: str | os.PathLike[str] | None = None,
) -> None:
    """Raise :class:`ApprovalJournalInsideProject` if the state dir is the project or below it.

    Both paths are resolved first (symlinks followed; missing trailing parts kept), so a
    symlink pointing into the project does not hide it. ``details`` carry the resolved
    ``state_dir`` and ``project_root`` as strings.

    One case passes: a notebook straight in the home directory (``home``, default the
    user's), which is no git work tree, with the state dir in a hidden directory of it (the
    platform default ``~/.local/state/...``). The home directory is where JupyterHub and many
    people start Jupyter; it is not a project, and the contents API of jupyter_server (and the
    agent gate) do not reach hidden directories.
    """
    state = Path(state_dir).resolve()
    root = Path(project_root).resolve()
    if not _is_same_or_below(state, root) or _hidden_in_home(state, root, home):
        return
    raise ApprovalJournalInsideProject(
        f"the decision journal's state directory {str(state)!r} is inside the project "
        f"{str(root)!r}; anything that edits the project could rewrite the record of "
        f"decisions. Set {STATE_DIR_ENV} to a directory outside the project.",
        state_dir=str(state),
        project_root=str(root),
    )


def _hidden_in_home(state: Path, root: Path, home: str | os.PathLike[str] | None) -> bool:
    home_dir = Path.home() if home is None else Path(home)
    if root != home_dir.resolve() or is_git_top_level(root) or state == root:
        return False
    try:
        return state.relative_to(root).parts[0].startswith(".")
    except ValueError:  # below the home directory only by file identity: not this case
        return False


@dataclass(frozen=True)
class JournalLocation:
    """Where a project's journal is, and why protected calls must not run, if they must not.

    ``problem`` is APPROVAL_JOURNAL_UNUSABLE (the state dir setting is unusable; the state dir
    is then the fallback below) or APPROVAL_JOURNAL_INSIDE_PROJECT, else None.
    """

    state_dir: Path
    path: Path
    problem: ApprovalError | None


def journal_location(
    project_root: str | os.PathLike[str], environ: Mapping[str, str] = os.environ
) -> JournalLocation:
    """The journal of ``project_root``: the one place the kernel, the server, the CLI and the
    doctor work it out."""
    problem: ApprovalError | None = None
    try:
        state_dir = default_state_dir(environ)
    except ApprovalJournalUnusable as exc:
        problem = exc
        state_dir = _fallback_state_dir()
    if problem is None:
        try:
            ensure_outside_project(state_dir, project_root)
        except ApprovalJournalInsideProject as exc:
            problem = exc
    return JournalLocation(state_dir, journal_path(project_root, state_dir), problem)


def _fallback_state_dir() -> Path:
    # Where lines of an unusable setting go (refusals, for the record): the platform default
    # when it is usable, else the XDG default under the home directory.
    try:
        return default_state_dir({})
    except ApprovalJournalUnusable:
        return Path.home() / ".local" / "state" / APP_NAME
