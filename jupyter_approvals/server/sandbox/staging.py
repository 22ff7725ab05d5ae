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

A deletion is staged the way overlayfs stages one: what the upper folder holds at the path is
removed (through open folders: a link on the way is removed, never followed) and, where the
project has an entry there, a whiteout (a character device 0/0, which Linux 5.8 and later
lets any user make) hides it.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path, PurePosixPath

from ...core import errors
from .changes import is_whiteout
from .command import KernelFolders

#: The prefix of an agent's own staging folder among the kernels' folders.
AGENT_FOLDER_PREFIX = "agent-"

_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def _refused(relative: str, why: str) -> errors.ApprovalChangeUnsupported:
    return errors.ApprovalChangeUnsupported(
        f"{relative} cannot be staged: {why}. Nothing was written.", path=relative
    )


@contextlib.contextmanager
def _parent_folder(upper: str, relative: str) -> Iterator[tuple[int, str]]:
    """The open folder that holds ``relative`` in ``upper`` (created where missing, links
    never followed) and the entry's name in it."""
    parts = PurePosixPath(relative).parts
    if not parts or any(part in ("", ".", "..", "/") for part in parts):
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
        yield folder, parts[-1]
    finally:
        os.close(folder)


def stage_bytes(upper: str, relative: str, data: bytes) -> int:
    """Write ``data`` at ``relative`` (POSIX, below the project) in the upper folder ``upper``;
    returns the file's permission bits. Refused (``APPROVAL_CHANGE_UNSUPPORTED``) where a link,
    a special file or a file where a folder should be stands in the way."""
    return stage_stream(upper, relative, [data])


def stage_stream(
    upper: str, relative: str, chunks: Iterable[bytes], mode: int | None = None
) -> int:
    """Write the bytes of ``chunks`` at ``relative`` in ``upper`` as :func:`stage_bytes` does,
    with the permission bits ``mode`` if given; returns the file's permission bits."""
    with _parent_folder(upper, relative) as (folder, name):
        with contextlib.suppress(FileNotFoundError):
            found = os.stat(name, dir_fd=folder, follow_symlinks=False)
            if is_whiteout(found):
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
            for chunk in chunks:
                view = memoryview(chunk)
                while view:
                    view = view[os.write(handle, view) :]
            if mode is not None:
                os.fchmod(handle, mode & 0o777)
            os.fsync(handle)
            return stat.S_IMODE(os.fstat(handle).st_mode)
        finally:
            os.close(handle)


def _remove_tree(parent: int, name: str) -> None:
    """Remove the folder ``name`` of the open folder ``parent`` and all below it, through
    open folders: a link met on the way is removed, never followed."""
    try:
        folder = os.open(name, _FOLDER_FLAGS, dir_fd=parent)
    except OSError:  # swapped for a link or a file meanwhile: removed as one
        os.unlink(name, dir_fd=parent)
        return
    try:
        for entry in os.listdir(folder):
            info = os.stat(entry, dir_fd=folder, follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                _remove_tree(folder, entry)
            else:
                os.unlink(entry, dir_fd=folder)
    finally:
        os.close(folder)
    os.rmdir(name, dir_fd=parent)


def stage_removal(upper: str, relative: str, *, in_project: bool) -> None:
    """Stage the deletion of the file or folder at ``relative``: whatever the upper folder
    holds there is removed (a folder with all below it, links never followed) and, where the
    project has an entry there (``in_project``), a whiteout hides it. Refused
    (``APPROVAL_CHANGE_UNSUPPORTED``) where this kernel cannot make a whiteout."""
    with _parent_folder(upper, relative) as (folder, name):
        try:
            found = os.stat(name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            found = None
        if found is not None and stat.S_ISDIR(found.st_mode):
            _remove_tree(folder, name)
        elif found is not None:
            os.unlink(name, dir_fd=folder)
        if in_project:
            try:
                os.mknod(name, stat.S_IFCHR | 0o600, os.makedev(0, 0), dir_fd=folder)
            except OSError as exc:  # Linux before 5.8 lets only root make one
                raise _refused(
                    relative, f"this system does not let the server mark a deletion ({exc})"
                ) from exc


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
