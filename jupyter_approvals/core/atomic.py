"""Replace a file all at once: the target holds the old content or the new, never a part.

New content goes to a temporary file next to the target, named
``.<name>.<pid>.<random>.jpa-tmp``, is flushed to disk, gets the target's permission bits (or
the umask's default for a new file), and is renamed over the target. On an error the
temporary file is removed. A process killed mid-write cannot remove it, so the next
replacement of the same target removes temporary files whose writing process no longer
exists; the target itself is never partial.

A writer whose approval named a resolved path passes it as ``expected``: if ``path`` no
longer resolves to it (a symlink was added or re-pointed after the approval), nothing is
written and APPROVAL_FINGERPRINT_MISMATCH is raised. The check is made once, when the
target is resolved; a link swapped in between that moment and the rename is not detected.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from .errors import ApprovalFingerprintMismatch
from .journal.files import fsync_directory

#: Suffix of the temporary files.
TEMP_SUFFIX = ".jpa-tmp"


@contextlib.contextmanager
def atomic_replace(
    path: str | os.PathLike[str], expected: str | None = None, mode: int | None = None
) -> Iterator[BinaryIO]:
    """Yield a binary file; on a clean exit its content replaces ``path`` in one rename.

    On an exception nothing at ``path`` changes and the temporary file is gone. Symlinks at
    ``path`` are followed: the file they point to is replaced, the link stays. With
    ``expected`` (a real path), ``path`` must still resolve to exactly that file, else
    ApprovalFingerprintMismatch is raised before anything is written. ``mode`` gives the file
    those permission bits instead of the target's (a file of secrets asks for 0600).
    """
    with atomic_path(path, expected, mode) as temp, open(temp, "r+b") as handle:
        yield handle
        handle.flush()


@contextlib.contextmanager
def atomic_path(
    path: str | os.PathLike[str], expected: str | None = None, mode: int | None = None
) -> Iterator[str]:
    """Yield the name of an empty temporary file; on a clean exit it replaces ``path``.

    For writers that are faster given a file name than a Python file object (pyarrow writes
    Parquet natively to a path). They may replace the temporary file but must keep its name.
    ``expected`` and ``mode`` work as in :func:`atomic_replace`.
    """
    resolved = os.path.realpath(path)
    if expected is not None and resolved != expected:
        raise ApprovalFingerprintMismatch(
            f"{os.fspath(path)} now resolves to {resolved}, but the approval was for "
            f"{expected} (a symlink changed after the approval). Nothing was written; "
            "call again to ask for a new approval.",
            path=os.fspath(path),
            approved=expected,
            resolved=resolved,
        )
    target = Path(resolved)
    directory = target.parent
    mode = _mode_for(target) if mode is None else mode
    _remove_abandoned(directory, target.name)
    temp = str(directory / f".{target.name}.{os.getpid()}.{secrets.token_hex(6)}{TEMP_SUFFIX}")
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    os.close(os.open(temp, flags, 0o600))
    try:
        yield temp
        fd = os.open(temp, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        try:
            os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise
    fsync_directory(directory)


def _mode_for(target: Path) -> int:
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _remove_abandoned(directory: Path, name: str) -> None:
    """Remove temporary files of ``name`` left by writers that were killed mid-write."""
    prefix = f".{name}."
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        if not (entry.name.startswith(prefix) and entry.name.endswith(TEMP_SUFFIX)):
            continue
        pid_text = entry.name[len(prefix) : -len(TEMP_SUFFIX)].split(".")[0]
        if pid_text.isdigit() and not _process_exists(int(pid_text)):
            with contextlib.suppress(OSError):
                os.unlink(entry.path)


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: not ours to judge
    return True
