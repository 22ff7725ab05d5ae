"""Staging a file an agent saves over the contents API, beside what its sandboxed code wrote.

Under the ``sandbox`` policy an agent's file save does not reach the project: the server writes
the bytes into an overlay upper folder, where they join a change set that a person applies or
discards like any other (:mod:`.change_sets`). The folder is the upper folder of the agent's
most recent running sandboxed kernel, so that its code reads what the agent saved, or, without
one, a staging folder of the agent's own in the state folder (listed the same way).

The upper folder belongs to a kernel that may be running hostile code at the same moment: it can
swap any folder on the way for a symbolic link, or leave a pipe where the file goes. So every
step is taken relative to an open folder, never following a link: the folders on the way are
opened one by one (``O_NOFOLLOW``), created where missing, and the file is opened without
following a link and written only if it is a regular file. An existing file is rewritten in
place (same inode): a running kernel that already read it sees the new bytes. A new file is
seen by the kernel unless it looked that name up since it started (overlayfs keeps what it
found then; it sees the file after a restart). A whiteout (the kernel deleted the project's
file) is replaced by the new file.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath

from ...core import errors
from .command import KernelFolders

#: The prefix of an agent's own staging folder among the kernels' folders.
AGENT_FOLDER_PREFIX = "agent-"

_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def _refused(relative: str, why: str) -> errors.ApprovalChangeUnsupported:
    return errors.ApprovalChangeUnsupported(
        f"{relative} cannot be staged: {why}. Nothing was written.", path=relative
    )


def stage_bytes(upper: str, relative: str, data: bytes) -> int:
    """Write ``data`` at ``relative`` (POSIX, below the project) in the upper folder ``upper``;
    returns the file's permission bits. Refused (``APPROVAL_CHANGE_UNSUPPORTED``) where a link,
    a special file or a file where a folder should be stands in the way."""
    parts = PurePosixPath(relative).parts
    if not parts or any(part in ("", ".", "..") for part in parts):
        raise _refused(relative, "the path is not a plain path below the project")
    folder = os.open(upper, _FOLDER_FLAGS)
    try:
        for part in parts[:-1]:
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o755, dir_fd=folder)
            try:
                inner = os.open(part, _FOLDER_FLAGS, dir_fd=folder)
            except OSError as exc:  # a link (ELOOP) or a file (ENOTDIR) in the way
                raise _refused(relative, f"{part} is not a folder there") from exc
            os.close(folder)
            folder = inner
        name = parts[-1]
        with contextlib.suppress(FileNotFoundError):
            found = os.stat(name, dir_fd=folder, follow_symlinks=False)
            if stat.S_ISCHR(found.st_mode) and found.st_rdev == 0:
                os.unlink(name, dir_fd=folder)  # a whiteout: the new file takes its place
        try:
            handle = os.open(name, _FILE_FLAGS, 0o644, dir_fd=folder)
        except OSError as exc:
            raise _refused(relative, "a link or a special file is in its place") from exc
        try:
            opened = os.fstat(handle)
            if not stat.S_ISREG(opened.st_mode):
                raise _refused(relative, "a special file is in its place")
            os.set_blocking(handle, True)
            os.ftruncate(handle, 0)
            view = memoryview(data)
            while view:
                view = view[os.write(handle, view) :]
            os.fsync(handle)
            return stat.S_IMODE(opened.st_mode)
        finally:
            os.close(handle)
    finally:
        os.close(folder)


def agent_upper(
    kernels_root: Path,
    agent: str,
    agents_kernels: Sequence[str],
    folders_of: Callable[[str], KernelFolders | None],
) -> tuple[str, Path]:
    """Where ``agent``'s saves are staged: the upper folder of the last of the kernels it
    started (``agents_kernels``, oldest first) that runs sandboxed now, else a staging folder
    of its own."""
    for kernel_id in reversed(agents_kernels):
        folders = folders_of(kernel_id)
        if folders is not None:
            return kernel_id, folders.upper
    own = KernelFolders(kernels_root / f"{AGENT_FOLDER_PREFIX}{agent}", kernels_root)
    own.upper.mkdir(mode=0o700, parents=True, exist_ok=True)
    return own.root.name, own.upper
