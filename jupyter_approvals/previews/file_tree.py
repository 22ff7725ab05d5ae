"""What is at a path, for deleting and moving: a file, a symlink, or a directory tree.

A tree is listed without following symlinks (a link is shown and fingerprinted as its link
text, never as what it points to), in sorted order so the listing and the fingerprint are
the same on every run. :func:`tree_state` is what an approval of a delete or a move covers:
every entry's relative path and kind, with each regular file's content (size and sha256).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import Any

from ..core.fingerprint import FileContent
from .text import PreviewText, plural, size_text


@dataclass(frozen=True)
class Entry:
    """One thing in a tree: ``relative`` is ``"."`` for the root itself."""

    relative: str
    kind: str  # "file", "dir", "link" or "other" (FIFO, socket, device)
    size: int  # bytes of a regular file; 0 for the rest
    link: str | None = None  # the link text of a symlink


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    return "other"


def scan(path: str) -> list[Entry]:
    """Every entry at and below ``path`` (root first, then sorted); [] if nothing is there."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return []
    root = _entry(path, ".", mode)
    entries = [root]
    if root.kind != "dir":
        return entries
    pending = ["."]
    while pending:
        relative = pending.pop()
        directory = os.path.join(path, relative) if relative != "." else path
        with os.scandir(directory) as listing:
            children = sorted(listing, key=lambda child: child.name)
        found: list[Entry] = []
        for child in children:
            child_relative = child.name if relative == "." else f"{relative}/{child.name}"
            entry = _entry(child.path, child_relative, child.stat(follow_symlinks=False).st_mode)
            found.append(entry)
            if entry.kind == "dir":
                pending.append(child_relative)
        entries.extend(found)
    entries[1:] = sorted(entries[1:], key=lambda entry: entry.relative.split("/"))
    return entries


def _entry(full: str, relative: str, mode: int) -> Entry:
    kind = _kind(mode)
    if kind == "file":
        return Entry(relative, kind, os.lstat(full).st_size)
    if kind == "link":
        return Entry(relative, kind, 0, os.readlink(full))
    return Entry(relative, kind, 0)


def tree_state(path: str, entries: list[Entry] | None = None) -> list[Any] | None:
    """What an approval covers of ``path``: None if absent, else one item per entry.

    Items: ``["file", rel, FileContent]``, ``["link", rel, link text]``, ``["dir", rel]``,
    ``["other", rel]``. A file's content is read when the state is fingerprinted.
    ``entries`` is a :func:`scan` of ``path`` already made (scanned anew when None).
    """
    if entries is None:
        entries = scan(path)
    if not entries:
        return None
    state: list[Any] = []
    for entry in entries:
        full = path if entry.relative == "." else os.path.join(path, entry.relative)
        if entry.kind == "file":
            state.append(["file", entry.relative, FileContent(full)])
        elif entry.kind == "link":
            state.append(["link", entry.relative, entry.link])
        else:
            state.append([entry.kind, entry.relative])
    return state


def describe(entries: list[Entry]) -> str:
    """``file, 1,234 bytes`` / ``directory: 3 files, 1 directory, 4,567 bytes`` / a link."""
    if not entries:
        return "nothing there"
    root = entries[0]
    if root.kind == "file":
        return f"file, {size_text(root.size)}"
    if root.kind == "link":
        return f"symlink to {root.link!r} (the link itself, not what it points to)"
    if root.kind == "other":
        return "special file (FIFO, socket or device)"
    files = sum(1 for entry in entries[1:] if entry.kind != "dir")
    directories = sum(1 for entry in entries[1:] if entry.kind == "dir")
    total = sum(entry.size for entry in entries)
    subdirectories = "1 directory" if directories == 1 else f"{directories:,} directories"
    return (
        f"directory with {plural(files, 'file')} and {subdirectories} inside, "
        f"{size_text(total)} in total"
    )


def add_listing(preview: PreviewText, entries: list[Entry], indent: str = "  ") -> None:
    """One line per entry below the root, while the preview has room."""
    for entry in entries[1:]:
        if preview.full:
            preview.left_out(1, "paths")
            continue
        if entry.kind == "file":
            detail = size_text(entry.size)
        elif entry.kind == "link":
            detail = f"symlink -> {entry.link}"
        elif entry.kind == "dir":
            detail = "directory"
        else:
            detail = "special file"
        name = f"{entry.relative}/" if entry.kind == "dir" else entry.relative
        preview.add(f"{indent}{name}  {detail}", "paths")
