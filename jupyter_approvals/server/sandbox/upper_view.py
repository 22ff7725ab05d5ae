"""Reading the project as a sandboxed kernel sees it: its upper folder over the project.

The server shows an agent what it staged (its REST reads of a file it saved, renamed or
deleted answer as its sandboxed code would read them), so it reads the upper folder that the
kernel shares. That folder may hold whatever the kernel's code left there: links to anywhere,
pipes, a folder swapped for a link between two steps. Every step is therefore taken relative
to an open folder without following a link, and only regular files and folders are read;
anything else reads as absent, never followed.

overlayfs's rules, as far as a read needs them: an entry of the upper folder hides the
project's entry of that name; a whiteout (a character device 0/0) hides it and shows nothing;
an upper folder over a project folder shows both, unless it is marked opaque, which hides the
project's side.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from .changes import is_opaque, is_whiteout

#: What the upper folder holds at a path.
UpperEntry = Literal["file", "folder", "whiteout", "other"]

_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@dataclass(frozen=True)
class Lookup:
    """What the upper folder says about one path."""

    #: What the upper folder holds at the path itself, or None.
    entry: UpperEntry | None
    #: Whether a folder above the path hides the project's entry there (a whiteout or a file
    #: in the upper folder where the project has a folder, or an opaque folder).
    hidden_above: bool
    #: Whether the upper folder's folder at the path is opaque (hides the project's entries
    #: below it).
    opaque: bool = False

    @property
    def gone(self) -> bool:
        """Whether the path reads as absent whatever the project holds."""
        return self.entry in ("whiteout", "other") or (self.entry is None and self.hidden_above)

    @property
    def hides_listing(self) -> bool:
        """Whether the project's folder at the path lists nothing through the upper folder."""
        return self.hidden_above or self.opaque


def _entry_of(info: os.stat_result) -> UpperEntry:
    if is_whiteout(info):
        return "whiteout"
    if stat.S_ISDIR(info.st_mode):
        return "folder"
    if stat.S_ISREG(info.st_mode):
        return "file"
    return "other"


def _parts(relative: str) -> tuple[str, ...]:
    parts = PurePosixPath(relative).parts
    if any(part in ("", ".", "..", "/") for part in parts):
        raise ValueError(f"{relative!r} is not a plain path below the project")
    return parts


@contextlib.contextmanager
def _folder(upper: Path, parts: tuple[str, ...]) -> Iterator[int | None]:
    """The open folder ``parts`` below ``upper`` (links never followed), or None where the
    upper folder has no folder there."""
    try:
        folder = os.open(upper, _FOLDER_FLAGS)
    except OSError:
        yield None
        return
    try:
        for part in parts:
            try:
                inner = os.open(part, _FOLDER_FLAGS, dir_fd=folder)
            except OSError:
                yield None
                return
            os.close(folder)
            folder = inner
        yield folder
    finally:
        os.close(folder)


def look_up(upper: Path, relative: str) -> Lookup:
    """What ``upper`` holds at ``relative`` (POSIX, below the project; "" is the project)."""
    parts = _parts(relative) if relative else ()
    try:
        folder = os.open(upper, _FOLDER_FLAGS)
    except OSError:
        return Lookup(None, False)
    above = False
    try:
        for index, part in enumerate(parts):
            try:
                info = os.stat(part, dir_fd=folder, follow_symlinks=False)
            except OSError:
                return Lookup(None, above)
            entry = _entry_of(info)
            last = index == len(parts) - 1
            if entry != "folder":
                return Lookup(entry, above) if last else Lookup(None, True)
            try:
                inner = os.open(part, _FOLDER_FLAGS, dir_fd=folder)
            except OSError:  # swapped for something else meanwhile
                return Lookup("other", above) if last else Lookup(None, True)
            os.close(folder)
            folder = inner
            if last:
                return Lookup("folder", above, is_opaque(folder))
            above = above or is_opaque(folder)
        return Lookup("folder", False)  # the project's own folder
    finally:
        os.close(folder)


def read_staged(upper: Path, relative: str) -> tuple[bytes, os.stat_result]:
    """The bytes and status of the regular file at ``relative`` in ``upper``.
    ``FileNotFoundError`` where there is none (a link or a special file is none)."""
    parts = _parts(relative)
    with _folder(upper, parts[:-1]) as folder:
        if folder is None:
            raise FileNotFoundError(relative)
        try:
            handle = os.open(parts[-1], _READ_FLAGS, dir_fd=folder)
        except OSError as exc:
            raise FileNotFoundError(relative) from exc
        with os.fdopen(handle, "rb") as file:
            info = os.fstat(file.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise FileNotFoundError(relative)
            os.set_blocking(file.fileno(), True)
            return file.read(), info


def list_staged(upper: Path, relative: str) -> dict[str, tuple[UpperEntry, os.stat_result]]:
    """The entries of the folder ``relative`` in ``upper``, by name; empty where it has none."""
    parts = _parts(relative) if relative else ()
    found: dict[str, tuple[UpperEntry, os.stat_result]] = {}
    with _folder(upper, parts) as folder:
        if folder is None:
            return found
        for name in os.listdir(folder):
            with contextlib.suppress(OSError):
                info = os.stat(name, dir_fd=folder, follow_symlinks=False)
                found[name] = (_entry_of(info), info)
    return found


_CHUNK = 1 << 20


@dataclass(frozen=True)
class Source:
    """A regular file of the project as a sandboxed kernel sees it: staged in the upper
    folder, or the project's own."""

    folder: Path
    relative: str
    size: int
    mode: int

    @contextlib.contextmanager
    def open(self) -> Iterator[Iterator[bytes]]:
        """The file's bytes in chunks, from a handle opened without following a link."""
        parts = _parts(self.relative)
        with _folder(self.folder, parts[:-1]) as folder:
            if folder is None:
                raise FileNotFoundError(self.relative)
            handle = os.open(parts[-1], _READ_FLAGS, dir_fd=folder)
        with os.fdopen(handle, "rb") as file:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                raise FileNotFoundError(self.relative)
            os.set_blocking(file.fileno(), True)
            yield iter(lambda: file.read(_CHUNK), b"")


def merged_files(project: Path, upper: Path, relative: str) -> Iterator[tuple[str, Source]]:
    """Every regular file at or below ``relative`` as the kernel sees the project through
    ``upper``, with where its bytes are; links, pipes and devices are passed over."""
    found = look_up(upper, relative)
    if found.gone:
        return
    if found.entry == "file":
        with contextlib.suppress(OSError):
            staged = _status(upper, relative)
            yield relative, Source(upper, relative, staged.st_size, stat.S_IMODE(staged.st_mode))
        return
    names: set[str] = set()
    if not found.hidden_above:
        try:
            own = os.lstat(project / relative)
        except OSError:
            own = None
        if own is not None and stat.S_ISREG(own.st_mode) and found.entry is None:
            yield relative, Source(project, relative, own.st_size, stat.S_IMODE(own.st_mode))
            return
        if own is not None and stat.S_ISDIR(own.st_mode) and not found.opaque:
            names.update(os.listdir(project / relative))
    if found.entry == "folder":
        names.update(list_staged(upper, relative))
    for name in sorted(names):
        yield from merged_files(project, upper, f"{relative}/{name}")


def _status(folder: Path, relative: str) -> os.stat_result:
    parts = _parts(relative)
    with _folder(folder, parts[:-1]) as opened:
        if opened is None:
            raise FileNotFoundError(relative)
        info = os.stat(parts[-1], dir_fd=opened, follow_symlinks=False)
    if not stat.S_ISREG(info.st_mode):
        raise FileNotFoundError(relative)
    return info
