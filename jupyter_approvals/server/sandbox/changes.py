"""A sandboxed kernel's change set, computed by the server from the bytes of its overlay.

The kernel's project is an overlayfs mount: the project is the lower layer, the kernel's
upper folder holds what it changed. Reading the upper folder (never anything the kernel
says) gives every change, and only those, so the work is proportional to what changed, not
to the size of the project:

- a regular file in the upper folder is a file the kernel wrote: *created* when the project
  has none there, *modified* when it has one with other bytes or another mode (a file opened
  for writing and left with the same bytes and mode is no change);
- a character device 0/0 is a *whiteout*: the project's file or folder there is *deleted*
  (for a folder, each file below it is listed);
- a folder marked opaque (the ``overlay.opaque`` extended attribute) hides the project's
  folder of that name: what the project has below it and the upper folder does not is
  *deleted*;
- a symbolic link, a named pipe, a socket or another device is listed as *unsupported*: it is
  shown and never applied.

A file deleted in one place and created with the same bytes in another is listed once, as
*renamed* (overlayfs copies a renamed file: this finds the move again).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ...core.fingerprint import fingerprint

ChangeKind = Literal["created", "modified", "deleted", "renamed", "unsupported"]
#: Extended attributes that mark an opaque folder (unprivileged overlays use ``user.``).
_OPAQUE_XATTRS = ("user.overlay.opaque", "trusted.overlay.opaque")
_CHUNK = 1 << 20


@dataclass(frozen=True)
class FileState:
    """A file's bytes as a size and a sha256 digest, and its permission bits."""

    size: int
    sha256: str
    mode: int


@dataclass(frozen=True)
class FileChange:
    """One changed path of the project (POSIX, relative to the project root)."""

    path: str
    kind: ChangeKind
    before: FileState | None = None
    after: FileState | None = None
    #: For ``renamed``: where the file was; for ``unsupported``: what the entry is.
    detail: str = ""

    def subject(self) -> dict[str, object]:
        """What of this change a fingerprint covers."""
        return {
            "path": self.path,
            "kind": self.kind,
            "before": _state_subject(self.before),
            "after": _state_subject(self.after),
            "detail": self.detail,
        }


def _state_subject(state: FileState | None) -> object:
    if state is None:
        return None
    return {"size": state.size, "sha256": state.sha256, "mode": state.mode}


@dataclass(frozen=True)
class ChangeSet:
    """Every change one sandboxed kernel made to the project, in path order."""

    changes: tuple[FileChange, ...] = ()
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def fingerprint(self) -> str:
        """The sha256 fingerprint of the whole change set: every path, kind and the digests
        of the bytes before and after; a person's approval is bound to it."""
        return fingerprint(
            {"action": "sandbox.changes", "changes": [c.subject() for c in self.changes]}
        )

    def __bool__(self) -> bool:
        return bool(self.changes)


#: Digests already computed, by what identifies a file's content to the kernel: device,
#: inode, size, and the modification and change times (the change time moves on every write
#: and cannot be set by a process). A listing polled every few seconds then hashes only what
#: changed. A stale entry can at most list old bytes: applying re-hashes what it copies, and a
#: preview re-hashes what it shows, and both refuse bytes other than the listed ones.
_DIGESTS: OrderedDict[tuple[int, int, int, int, int], str] = OrderedDict()
_DIGESTS_KEPT = 200_000


def file_state(path: Path) -> FileState:
    """The size, sha256 and permission bits of the regular file at ``path`` (not followed
    if it is a symbolic link: the caller checked it is a regular file)."""
    info = path.lstat()
    key = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    known = _DIGESTS.get(key)
    if known is not None:
        _DIGESTS.move_to_end(key)
        return FileState(info.st_size, known, stat.S_IMODE(info.st_mode))
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
            size += len(chunk)
    if size == info.st_size:  # not written to while it was read
        _DIGESTS[key] = digest.hexdigest()
        if len(_DIGESTS) > _DIGESTS_KEPT:
            _DIGESTS.popitem(last=False)
    return FileState(size, digest.hexdigest(), stat.S_IMODE(info.st_mode))


def is_whiteout(info: os.stat_result) -> bool:
    """Whether an upper-folder entry is overlayfs's mark of a deletion."""
    return stat.S_ISCHR(info.st_mode) and info.st_rdev == 0


def upper_stats(upper: Path) -> Iterator[tuple[str, os.stat_result]]:
    """Every entry below the upper folder ``upper`` (folders too), as its POSIX path relative
    to ``upper`` and its own status (links not followed), in no set order. Entries that vanish
    while the folder is walked are passed over."""
    stack = [""]
    while stack:
        relative = stack.pop()
        try:
            with os.scandir(upper / relative) as entries:
                for entry in entries:
                    path = f"{relative}/{entry.name}" if relative else entry.name
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if stat.S_ISDIR(info.st_mode):
                        stack.append(path)
                    yield path, info
        except OSError:
            continue


def is_opaque(folder: Path | int) -> bool:
    """Whether an upper folder (a path, not followed if a link, or an open folder) hides the
    project's folder of the same name."""
    for name in _OPAQUE_XATTRS:
        try:
            if isinstance(folder, int):
                value = os.getxattr(folder, name)
            else:
                value = os.getxattr(folder, name, follow_symlinks=False)
        except OSError:
            continue
        if value == b"y":
            return True
    return False


def compute_change_set(project: Path, upper: Path) -> ChangeSet:
    """The change set of the overlay of ``project`` whose upper folder is ``upper``."""
    changes = sorted(_changes(project, upper, Path()), key=lambda change: change.path)
    changes = _find_renames(changes)
    counts: dict[str, int] = {}
    for change in changes:
        counts[change.kind] = counts.get(change.kind, 0) + 1
    return ChangeSet(tuple(changes), counts)


def _changes(project: Path, upper: Path, relative: Path) -> Iterator[FileChange]:
    try:
        entries = sorted(os.scandir(upper / relative), key=lambda entry: entry.name)
    except FileNotFoundError:
        return
    for entry in entries:
        path = relative / entry.name
        info = entry.stat(follow_symlinks=False)
        lower = project / path
        if is_whiteout(info):
            yield from _deleted(project, path)
        elif stat.S_ISDIR(info.st_mode):
            if not _is_real_dir(lower):
                yield from _deleted(project, path)  # a file there became a folder
            elif is_opaque(Path(entry.path)):
                yield from _hidden_below(project, upper, path)
            yield from _changes(project, upper, path)
        elif stat.S_ISREG(info.st_mode):
            after = file_state(Path(entry.path))
            if _is_real_dir(lower):
                yield from _deleted(project, path)  # a folder there became a file
                yield FileChange(path.as_posix(), "created", after=after)
            elif _is_real_file(lower):
                before = file_state(lower)
                if before != after:
                    yield FileChange(path.as_posix(), "modified", before, after)
            else:
                yield FileChange(path.as_posix(), "created", after=after)
        else:
            yield FileChange(path.as_posix(), "unsupported", detail=_kind_of(info, entry.path))


def _deleted(project: Path, path: Path) -> Iterator[FileChange]:
    lower = project / path
    if _is_real_file(lower):
        yield FileChange(path.as_posix(), "deleted", before=file_state(lower))
    elif _is_real_dir(lower):
        for folder, _dirs, files in os.walk(lower):
            for name in files:
                below = Path(folder, name)
                if _is_real_file(below):
                    relative = below.relative_to(project).as_posix()
                    yield FileChange(relative, "deleted", before=file_state(below))


def _hidden_below(project: Path, upper: Path, path: Path) -> Iterator[FileChange]:
    """Files of the project below an opaque folder that the upper folder does not have."""
    for change in _deleted(project, path):
        if not os.path.lexists(upper / change.path):
            yield change


def _find_renames(changes: list[FileChange]) -> list[FileChange]:
    deleted: dict[tuple[str, int], list[FileChange]] = {}
    for change in changes:
        if change.kind == "deleted" and change.before is not None:
            deleted.setdefault((change.before.sha256, change.before.size), []).append(change)
    moved_from: set[str] = set()
    result: list[FileChange] = []
    for change in changes:
        if change.kind == "created" and change.after is not None:
            key = (change.after.sha256, change.after.size)
            candidates = [c for c in deleted.get(key, []) if c.path not in moved_from]
            if candidates:
                source = candidates[0]
                moved_from.add(source.path)
                result.append(
                    FileChange(change.path, "renamed", source.before, change.after, source.path)
                )
                continue
        result.append(change)
    return [c for c in result if not (c.kind == "deleted" and c.path in moved_from)]


def _is_real_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def _is_real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(path.lstat().st_mode)
    except OSError:
        return False


def _kind_of(info: os.stat_result, path: str) -> str:
    if stat.S_ISLNK(info.st_mode):
        return f"symbolic link to {os.readlink(path)!r}"
    if stat.S_ISFIFO(info.st_mode):
        return "named pipe"
    if stat.S_ISSOCK(info.st_mode):
        return "socket"
    if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode):
        return "device"
    return "special file"
