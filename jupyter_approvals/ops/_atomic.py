"""Replace a file all at once: the target holds the old content or the new, never a part.

New content goes to a temporary file in the target's directory, is flushed to disk, gets the
target's permission bits (or the umask's default for a new file), and is renamed over the
target. On Linux the temporary file is first created without a name (``O_TMPFILE``), so a
process killed mid-write leaves nothing behind; it is given a name only once complete.
Elsewhere a named ``.<name>.<random>.jpa-tmp`` file is used and removed on any error.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

#: Suffix of the named temporary files (a leftover one is always a complete, unused write).
TEMP_SUFFIX = ".jpa-tmp"


@contextlib.contextmanager
def atomic_replace(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """Yield a binary file; on a clean exit its content replaces ``path`` in one rename.

    On an exception nothing at ``path`` changes and the temporary file is gone. Symlinks at
    ``path`` are followed: the file they point to is replaced, the link stays.
    """
    target = Path(os.path.realpath(path))
    directory = target.parent
    mode = _mode_for(target)
    fd, temp_name = _open_temp(directory, target.name)
    handle = os.fdopen(fd, "w+b")
    try:
        with handle:
            yield handle
            handle.flush()
            os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
            if temp_name is None:
                temp_name = _link_unnamed(handle.fileno(), directory, target.name)
        os.replace(temp_name, target)
    except BaseException:
        if temp_name is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp_name)
        raise
    _fsync_directory(directory)


def _mode_for(target: Path) -> int:
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _open_temp(directory: Path, name: str) -> tuple[int, str | None]:
    """An open temporary file in ``directory``: unnamed where the system allows it."""
    unnamed = getattr(os, "O_TMPFILE", None)
    if unnamed is not None:
        try:
            return os.open(directory, unnamed | os.O_RDWR, 0o600), None
        except OSError:
            pass  # file system without O_TMPFILE support: fall back to a named file
    temp_name = str(directory / f".{name}.{secrets.token_hex(6)}{TEMP_SUFFIX}")
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    return os.open(temp_name, flags, 0o600), temp_name


def _link_unnamed(fd: int, directory: Path, name: str) -> str:
    """Give the complete unnamed file a temporary name next to the target."""
    temp_name = str(directory / f".{name}.{secrets.token_hex(6)}{TEMP_SUFFIX}")
    os.link(f"/proc/self/fd/{fd}", temp_name, follow_symlinks=True)
    return temp_name


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable (ignored where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
