"""What is at a path, for deleting and moving: a file, a symlink, or a directory tree.

A tree is listed without following symlinks (a link is shown and fingerprinted as its link
text, never as what it points to), in sorted order so the listing and the fingerprint are
the same on every run. :func:`tree_state` is what an approval of a delete or a move covers:
every entry's relative path and kind, with each regular file's content (size and sha256).
:func:`add_listing` lists a tree as the ``paths`` block of a structured preview (the text
preview is rendered from it); :func:`add_tree_counts` gives that preview's headline counts.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import Any

from ..core.fingerprint import FileContent
from .structured import StructuredPreview
from .text import plural, size_text


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
    except (FileNotFoundError, NotADirectoryError):  # (a path below a file: nothing there)
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


def tree_counts(entries: list[Entry]) -> tuple[int, int, int]:
    """``(files, folders, bytes)`` of a scan: the root itself if it is no directory, else what
    is inside it (links and special files count as files, as :func:`describe` counts them)."""
    if not entries:
        return 0, 0, 0
    if entries[0].kind != "dir":
        return 1, 0, entries[0].size
    folders = sum(1 for entry in entries[1:] if entry.kind == "dir")
    return len(entries) - 1 - folders, folders, sum(entry.size for entry in entries)


def add_tree_counts(
    structured: StructuredPreview, entries: list[Entry], tone: str = "neutral", verb: str = ""
) -> None:
    """The headline counts of a tree: files, folders (only for a directory, the directory
    itself counted) and bytes, each label followed by ``verb`` (``files to delete``)."""
    files, folders, size = tree_counts(entries)
    after = f" {verb}" if verb else ""
    structured.count(f"files{after}", files, tone)
    if entries and entries[0].kind == "dir":
        structured.count(f"folders{after}", folders + 1, tone)
    structured.count(f"bytes{after}", size, tone)


def _detail(entry: Entry) -> str:
    if entry.kind == "file":
        return size_text(entry.size)
    if entry.kind == "link":
        return f"symlink -> {entry.link}"
    if entry.kind == "dir":
        return "directory"
    return "special file"


def add_listing(structured: StructuredPreview, entries: list[Entry], title: str) -> None:
    """The entries below the root as a ``paths`` block titled ``title``, while the budget
    lasts (the rest counted); a root without entries below adds no block."""
    below = entries[1:]
    if not below:
        return
    block = structured.paths(title)
    for index, entry in enumerate(below):
        if block is None or structured.full:
            structured.left_out(len(below) - index, "paths")
            return
        name = f"{entry.relative}/" if entry.kind == "dir" else entry.relative
        block.add(name, _detail(entry))  # counted by the builder when it does not fit
