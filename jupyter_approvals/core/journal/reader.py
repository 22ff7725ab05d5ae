"""Reading the journal for display: pages of entries, newest first, read from the end.

Nothing read here may be used to authorize anything: the file is as writable as anything
else the user owns.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Final

from jupyter_approvals.core.journal.files import _READ_FLAGS

__all__ = [
    "CursorInvalid",
    "JournalPage",
    "merge_pages",
    "open_for_reading",
    "parse_entry",
    "read_entries",
]

_READ_BLOCK: Final = 64 * 1024
# Any line longer than this is not ours (ours are <= MAX_LINE_BYTES); it is skipped as
# corrupt without being held in memory.
_MAX_READ_LINE: Final = 1024 * 1024


@dataclass(frozen=True)
class JournalPage:
    """One page of journal entries, newest first, for display (never for authorization).

    ``has_more`` says whether matching entries exist beyond this page. ``corrupt_lines``
    counts unreadable lines seen while reading (torn, not JSON, not an object); unless
    ``total_matching`` was requested, reading stops after the page, so lines older than
    the page are not counted. ``total_matching`` is None unless asked for.
    """

    entries: list[dict[str, Any]] = field(default_factory=list)
    has_more: bool = False
    corrupt_lines: int = 0
    total_matching: int | None = None
    #: The byte position where each entry's line starts, in the order of ``entries``.
    positions: list[int] = field(default_factory=list)
    #: Where reading began: the ``before`` given, else the file's size then.
    end: int = 0

    @property
    def next_before(self) -> int | None:
        """The ``before`` of the next (older) page, when there is one."""
        if not self.has_more:
            return None
        return self.positions[-1] if self.positions else self.end


def _iter_lines_reversed(
    f: IO[bytes],
    end: int,
    *,
    block_size: int = _READ_BLOCK,
    max_line: int = _MAX_READ_LINE,
) -> Iterator[tuple[int, bytes | None]]:
    """Lines of ``f[:end]`` from last to first, each with the byte position where it starts,
    without newlines and without blank lines.

    ``None`` stands for an unusable line: the unterminated tail (a torn or in-progress
    write) or a line longer than ``max_line`` (dropped without being held in memory).
    """
    pos = end
    carry = b""  # the known end part of the current line; its start lies further back
    dropped = False  # the current line is already over max_line
    terminated = False  # a newline follows the current line (false only for the tail)

    def finish(head: bytes, start: int) -> Iterator[tuple[int, bytes | None]]:
        if dropped or len(head) + len(carry) > max_line:
            yield start, None
            return
        line = head + carry
        if not line:
            return  # a blank line, or a file ending with "\n"
        yield start, (line if terminated else None)

    while pos > 0:
        start = max(0, pos - block_size)
        f.seek(start)
        chunk = f.read(pos - start)
        pos = start
        pieces = chunk.split(b"\n")
        head_end = len(chunk)
        for head in reversed(pieces[1:]):
            head_start = head_end - len(head)
            yield from finish(head, start + head_start)
            head_end = head_start - 1  # the newline before this piece
            carry, dropped, terminated = b"", False, True
        if not dropped:
            if len(pieces[0]) + len(carry) > max_line:
                carry, dropped = b"", True
            else:
                carry = pieces[0] + carry
    yield from finish(b"", 0)


class CursorInvalid(ValueError):
    """A ``before`` position that is not the start of a line of the journal."""


def _check_cursor(f: IO[bytes], before: int, size: int) -> None:
    if not 0 <= before <= size:
        raise CursorInvalid(f"before={before} lies outside the journal (0-{size} bytes)")
    if before > 0:
        f.seek(before - 1)
        if f.read(1) != b"\n":
            raise CursorInvalid(f"before={before} is not where a journal line starts")


@contextlib.contextmanager
def _opened(f: IO[bytes], end: int, size: int) -> Iterator[tuple[IO[bytes], int, int]]:
    with f:
        yield f, end, size


def open_for_reading(
    path: str | os.PathLike[str], before: int | None
) -> contextlib.AbstractContextManager[tuple[IO[bytes], int, int]] | None:
    """The journal at ``path`` opened for reading backwards: ``(file, end, size)`` where
    ``end`` is where reading starts (``before``, else the size now: entries appended while
    reading are left for next time). None when there is no file (and no ``before``); a
    ``before`` that is not a line's start raises :class:`CursorInvalid`; a path that is a
    link (not followed) or no regular file raises ``OSError``."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except FileNotFoundError:
        if before:
            raise CursorInvalid(
                f"before={before} lies outside the journal (it has no file)"
            ) from None
        return None
    f = os.fdopen(fd, "rb")
    try:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
        size = info.st_size
        if before is not None:
            _check_cursor(f, before, size)
    except BaseException:
        f.close()
        raise
    return _opened(f, size if before is None else before, size)


def parse_entry(raw: bytes) -> dict[str, Any] | None:
    """One journal line as an entry, or None when it is not a JSON object."""
    try:
        entry = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    return entry if isinstance(entry, dict) else None


def read_entries(
    path: str | os.PathLike[str],
    *,
    limit: int = 50,
    offset: int = 0,
    event: str | None = None,
    action: str | None = None,
    count_total: bool = False,
    before: int | None = None,
) -> JournalPage:
    """Read a page of entries, newest first, for DISPLAY ONLY: never use it to authorize.

    Anything running as the user can edit the file, so an entry proves nothing.
    ``event``/``action`` keep only entries whose field equals the value; ``offset`` skips
    that many matching entries; ``before`` (a page's :attr:`JournalPage.next_before`) starts
    reading at that byte position instead of the end, so any page costs what the first
    does; a position that is not a line's start raises :class:`CursorInvalid`. The file is
    read backwards in blocks and reading stops
    once the page is full (plus one entry to set ``has_more``), so a large journal is not
    loaded; ``count_total=True`` reads the rest to fill ``total_matching``. Unreadable
    lines are skipped and counted. A missing file is an empty page; other OS errors (for
    example, the path being a symlink, which is not followed) raise ``OSError``.
    """
    if limit < 0 or offset < 0:
        raise ValueError(f"limit and offset must be >= 0, got limit={limit}, offset={offset}")
    opened = open_for_reading(path, before)
    if opened is None:
        return JournalPage(total_matching=0 if count_total else None)
    with opened as (f, end, _):
        entries: list[dict[str, Any]] = []
        positions: list[int] = []
        matched = 0
        corrupt = 0
        has_more = False
        for start, raw in _iter_lines_reversed(f, end):
            entry = None if raw is None else parse_entry(raw)
            if entry is None:
                corrupt += 1
                continue
            if event is not None and entry.get("event") != event:
                continue
            if action is not None and entry.get("action") != action:
                continue
            matched += 1
            if matched <= offset:
                continue
            if len(entries) < limit:
                entries.append(entry)
                positions.append(start)
                continue
            has_more = True
            if not count_total:
                break
    return JournalPage(
        entries=entries,
        has_more=has_more,
        corrupt_lines=corrupt,
        total_matching=matched if count_total else None,
        positions=positions,
        end=end,
    )


def merge_pages(
    pages: Sequence[JournalPage], *, limit: int, offset: int
) -> tuple[JournalPage, list[int], list[int]]:
    """One page, newest first, from pages of several journals; the index of the page each
    entry came from; and, per journal, the ``before`` of the next merged page.

    Each page must have been read (from its journal's newest entry, or from a ``before`` of
    a previous merged page) with room for at least ``offset + limit`` entries: the next
    ``offset + limit`` of all journals are then among them. Entries are ordered by their
    ``time`` (ISO 8601 in UTC, so text order is time order).
    """
    tagged = [
        (entry, index, position)
        for index, page in enumerate(pages)
        for entry, position in zip(page.entries, page.positions, strict=True)
    ]
    tagged.sort(key=lambda item: str(item[0].get("time", "")), reverse=True)
    window = tagged[offset : offset + limit]
    # A journal's next page starts at the oldest of its entries consumed up to the window's
    # end; one with none consumed starts where it was read from.
    cursors = [page.end for page in pages]
    for _, index, position in tagged[: offset + limit]:
        cursors[index] = position
    merged = JournalPage(
        entries=[entry for entry, _, _ in window],
        has_more=len(tagged) > offset + limit or any(page.has_more for page in pages),
        corrupt_lines=sum(page.corrupt_lines for page in pages),
        positions=[position for _, _, position in window],
    )
    return merged, [index for _, index, _ in window], cursors
