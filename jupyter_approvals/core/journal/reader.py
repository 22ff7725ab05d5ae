"""Reading the journal for display: pages of entries, newest first, read from the end.

Nothing read here may be used to authorize anything: the file is as writable as anything
else the user owns.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Final

from jupyter_approvals.core.journal.files import _READ_FLAGS

__all__ = ["JournalPage", "merge_pages", "read_entries"]

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


def _iter_lines_reversed(
    f: IO[bytes],
    end: int,
    *,
    block_size: int = _READ_BLOCK,
    max_line: int = _MAX_READ_LINE,
) -> Iterator[bytes | None]:
    """Lines of ``f[:end]`` from last to first, without newlines and without blank lines.

    ``None`` stands for an unusable line: the unterminated tail (a torn or in-progress
    write) or a line longer than ``max_line`` (dropped without being held in memory).
    """
    pos = end
    carry = b""  # the known end part of the current line; its start lies further back
    dropped = False  # the current line is already over max_line
    terminated = False  # a newline follows the current line (false only for the tail)

    def finish(head: bytes) -> Iterator[bytes | None]:
        if dropped or len(head) + len(carry) > max_line:
            yield None
            return
        line = head + carry
        if not line:
            return  # a blank line, or a file ending with "\n"
        yield line if terminated else None

    while pos > 0:
        start = max(0, pos - block_size)
        f.seek(start)
        chunk = f.read(pos - start)
        pos = start
        pieces = chunk.split(b"\n")
        for head in reversed(pieces[1:]):
            yield from finish(head)
            carry, dropped, terminated = b"", False, True
        if not dropped:
            if len(pieces[0]) + len(carry) > max_line:
                carry, dropped = b"", True
            else:
                carry = pieces[0] + carry
    yield from finish(b"")


def read_entries(
    path: str | os.PathLike[str],
    *,
    limit: int = 50,
    offset: int = 0,
    event: str | None = None,
    action: str | None = None,
    count_total: bool = False,
) -> JournalPage:
    """Read a page of entries, newest first, for DISPLAY ONLY: never use it to authorize.

    Anything running as the user can edit the file, so an entry proves nothing.
    ``event``/``action`` keep only entries whose field equals the value; ``offset`` skips
    that many matching entries. The file is read backwards in blocks and reading stops
    once the page is full (plus one entry to set ``has_more``), so a large journal is not
    loaded; ``count_total=True`` reads the rest to fill ``total_matching``. Unreadable
    lines are skipped and counted. A missing file is an empty page; other OS errors (for
    example, the path being a symlink, which is not followed) raise ``OSError``.
    """
    if limit < 0 or offset < 0:
        raise ValueError(f"limit and offset must be >= 0, got limit={limit}, offset={offset}")
    try:
        fd = os.open(path, _READ_FLAGS)
    except FileNotFoundError:
        return JournalPage(total_matching=0 if count_total else None)
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
        entries: list[dict[str, Any]] = []
        matched = 0
        corrupt = 0
        has_more = False
        # st_size fixes the snapshot: entries appended while reading are left for next time.
        for raw in _iter_lines_reversed(f, st.st_size):
            if raw is None:
                corrupt += 1
                continue
            try:
                entry = json.loads(raw.decode("utf-8"))
            except (ValueError, RecursionError):
                corrupt += 1
                continue
            if not isinstance(entry, dict):
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
                continue
            has_more = True
            if not count_total:
                break
    return JournalPage(
        entries=entries,
        has_more=has_more,
        corrupt_lines=corrupt,
        total_matching=matched if count_total else None,
    )


def merge_pages(
    pages: Sequence[JournalPage], *, limit: int, offset: int
) -> tuple[JournalPage, list[int]]:
    """One page, newest first, from pages of several journals, and the index of the page each
    entry came from.

    Each page must have been read from its journal's newest entry with room for at least
    ``offset + limit`` entries: the newest ``offset + limit`` of all journals are then among
    them. Entries are ordered by their ``time`` (ISO 8601 in UTC, so text order is time order).
    """
    tagged = [(entry, index) for index, page in enumerate(pages) for entry in page.entries]
    tagged.sort(key=lambda pair: str(pair[0].get("time", "")), reverse=True)
    window = tagged[offset : offset + limit]
    merged = JournalPage(
        entries=[entry for entry, _ in window],
        has_more=len(tagged) > offset + limit or any(page.has_more for page in pages),
        corrupt_lines=sum(page.corrupt_lines for page in pages),
    )
    return merged, [index for _, index in window]
