"""The journal check: where a project's decision journal is, and whether it can be written.

Nothing is written: writability is judged from the directory's and file's access bits, so the
doctor never adds a line to the record it inspects.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..core.errors import ApprovalJournalInsideProject, ApprovalJournalUnusable
from ..core.project import STATE_DIR_ENV, journal_location, project_root_for
from .report import Check

_POSIX = os.name == "posix"
_FIX_STATE_DIR = (
    f"set {STATE_DIR_ENV} to an absolute directory outside the project (for the kernels and "
    "the server), then restart them"
)


def _mode(st: os.stat_result) -> str:
    return f"{stat.S_IMODE(st.st_mode):04o}"


def _nearest_existing(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if os.path.lexists(candidate):
            return candidate
    return path


def _inspect_dir(
    directory: Path, info: dict[str, Any], problems: list[str], fixes: list[str]
) -> bool:
    """Record the directory's state; True if a new journal could be created in it."""
    if not os.path.lexists(directory):
        ancestor = _nearest_existing(directory)
        info["dir_mode"] = None
        can_create = ancestor.is_dir() and os.access(ancestor, os.W_OK | os.X_OK)
        if not can_create:
            problems.append(f"{directory} does not exist and cannot be created in {ancestor}")
        return can_create
    try:
        st = directory.stat()
    except OSError as exc:
        problems.append(f"cannot inspect {directory}: {exc.strerror or exc}")
        return False
    if not stat.S_ISDIR(st.st_mode):
        problems.append(f"{directory} is not a directory")
        return False
    info["dir_mode"] = _mode(st)
    if _POSIX and st.st_mode & 0o077:
        problems.append(f"{directory} has mode {_mode(st)}, expected 0700")
        fixes.append(f"chmod 700 {directory}")
    writable = os.access(directory, os.W_OK | os.X_OK)
    if not writable:
        problems.append(f"{directory} is not writable")
    return writable


def _inspect_file(path: Path, info: dict[str, Any], problems: list[str], fixes: list[str]) -> bool:
    """Record the journal file's state; True if an entry could be appended to it."""
    try:
        st = path.lstat()
    except OSError as exc:
        problems.append(f"cannot inspect {path}: {exc.strerror or exc}")
        return False
    info["file_mode"] = _mode(st)
    if stat.S_ISLNK(st.st_mode):
        problems.append(f"{path} is a symbolic link, which the journal never follows")
        return False
    if not stat.S_ISREG(st.st_mode):
        problems.append(f"{path} is not a regular file")
        return False
    info["size_bytes"] = st.st_size
    if _POSIX and st.st_mode & 0o077:
        problems.append(f"{path} has mode {_mode(st)}, expected 0600")
        fixes.append(f"chmod 600 {path}")
    writable = os.access(path, os.R_OK | os.W_OK)
    if not writable:
        problems.append(f"{path} is not readable and writable")
    return writable


def check_journal(
    project_dir: Path | None = None, environ: Mapping[str, str] = os.environ
) -> Check:
    """The project's journal is outside the project, private (0700/0600) and writable."""
    root = project_root_for(Path.cwd() if project_dir is None else project_dir)
    location = journal_location(root, environ)
    if isinstance(location.problem, ApprovalJournalUnusable):
        return Check(
            "journal",
            False,
            f"the journal location is unusable: {location.problem.message}",
            fix=_FIX_STATE_DIR,
            info={"project_root": str(root), "code": location.problem.code},
        )
    state_dir, path = location.state_dir, location.path
    info: dict[str, Any] = {
        "path": str(path),
        "state_dir": str(state_dir),
        "project_root": str(root),
        "exists": os.path.lexists(path),
        "writable": False,
        "dir_mode": None,
        "file_mode": None,
    }
    if isinstance(location.problem, ApprovalJournalInsideProject):
        info["code"] = location.problem.code
        return Check(
            "journal",
            False,
            f"the state directory {state_dir} is inside the project {root}: protected calls "
            "are refused with APPROVAL_JOURNAL_INSIDE_PROJECT",
            fix=_FIX_STATE_DIR,
            info=info,
        )
    problems: list[str] = []
    fixes: list[str] = []
    writable = _inspect_dir(path.parent, info, problems, fixes)
    if info["exists"]:
        writable = _inspect_file(path, info, problems, fixes) and writable
    info["writable"] = writable
    if problems:
        if not writable:
            fixes.append(
                f"make {path.parent} a directory you own and can write, or set {STATE_DIR_ENV}"
            )
        return Check("journal", False, "; ".join(problems), fix="; ".join(fixes), info=info)
    if info["exists"]:
        detail = f"{path} is writable and private"
    else:
        detail = f"{path} does not exist yet; it is created, private, on first use"
    return Check("journal", True, detail, info=info)
