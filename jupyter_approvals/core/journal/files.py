"""How the journal file is opened, created, locked and checked, below the level of entries.

The open flags refuse to follow a symlink or block on a FIFO planted at the journal path;
:func:`make_private_dirs` creates missing directories as 0700; :func:`_try_lock` and
:func:`_tail_is_torn` let the writer repair a torn last line without ever stalling on
another process's lock.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path
from typing import Final

if sys.platform != "win32":
    import fcntl

# Longest wait for the advisory lock that guards the torn-tail repair.
_LOCK_WAIT: Final = 0.5

_O_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_O_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
# A FIFO planted at the journal path would block a write-open forever; O_NONBLOCK makes it
# fail instead and has no effect on regular files.
_O_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)
# Windows would otherwise turn "\n" into "\r\n" inside the descriptor.
_O_BINARY: Final = getattr(os, "O_BINARY", 0)
# O_RDWR rather than O_WRONLY: append reads the last byte to repair a torn tail.
_APPEND_FLAGS: Final = (
    os.O_RDWR | os.O_APPEND | os.O_CREAT | _O_NOFOLLOW | _O_CLOEXEC | _O_NONBLOCK | _O_BINARY
)
_READ_FLAGS: Final = os.O_RDONLY | _O_NOFOLLOW | _O_CLOEXEC | _O_NONBLOCK | _O_BINARY
_POSIX: Final = os.name == "posix"


def make_private_dirs(directory: Path) -> bool:
    """Create ``directory`` and any missing ancestors with mode 0700; True if any was made."""
    missing: list[Path] = []
    current = directory
    while not os.path.lexists(current):
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    created = False
    for path in reversed(missing):
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue  # another process made it first
        if _POSIX:
            # mkdir's mode passes through the umask; say 0700 exactly.
            os.chmod(path, 0o700)
        created = True
    return created


def fsync_directory(directory: Path) -> None:
    """Best effort: make a new directory entry durable (POSIX only; some filesystems refuse).

    Used for the journal's new files and for the renames of atomic replacements (ops).
    """
    if not _POSIX:
        return
    try:
        fd = os.open(directory, os.O_RDONLY | _O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _try_lock(fd: int) -> bool:
    """Take the journal's advisory lock, waiting at most :data:`_LOCK_WAIT`; False if not.

    The lock only guards the writer's torn-tail repair: the append itself stays one
    ``O_APPEND`` write. A writer stuck holding the lock (a stopped process) must not stall
    the kernel, so after the wait the entry is written without the repair.
    """
    if sys.platform == "win32":
        return False
    deadline = time.monotonic() + _LOCK_WAIT
    pause = 0.0001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(pause)
            pause = min(pause * 2, 0.01)
        except OSError:
            return False  # a filesystem without flock
        else:
            return True


def _unlock(fd: int) -> None:
    if sys.platform != "win32":
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)


def _tail_is_torn(fd: int, size: int) -> bool:
    """Whether the file of ``size`` bytes ends inside a line (a crash or short write cut the
    last one).

    Only meaningful under the lock, with the size read under it: otherwise another writer's
    line still being copied in looks torn too.
    """
    if sys.platform == "win32":
        return False
    return size > 0 and os.pread(fd, 1, size - 1) != b"\n"
