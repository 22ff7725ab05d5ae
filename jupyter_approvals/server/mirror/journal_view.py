"""What the History tab reads (``GET journal``): one project's journal, merged with what
kernels of this server wrote about the same project in journals elsewhere.

A kernel whose cell moved its state directory before approvals started journals outside the
server's state directory; the journal's file name is the project's key, so a file of the same
name elsewhere is the same project's journal. Each such entry names the file it came from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core.journal.reader import CursorInvalid, JournalPage, merge_pages, read_entries


@dataclass(frozen=True)
class JournalView:
    """One page of a project's journal and of the journals elsewhere about it."""

    entries: list[dict[str, Any]]
    has_more: bool
    corrupt_lines: int
    #: The journals elsewhere that were read.
    others: list[str]
    #: The journals elsewhere that could not be read, each with its error.
    unreadable: list[dict[str, str]] = field(default_factory=list)
    #: The ``before`` of the next (older) page, one position per journal, else None.
    next_before: list[int] | None = None


def read_journal_view(
    journal: Path,
    elsewhere: set[str],
    *,
    limit: int,
    offset: int,
    event: str | None = None,
    action: str | None = None,
    before: list[int] | None = None,
) -> JournalView:
    """Entries ``offset`` to ``offset + limit`` (newest first) of ``journal`` and of the
    files among ``elsewhere`` that keep the same project's journal, filtered by ``event``
    and ``action``; with ``before`` (a previous view's :attr:`JournalView.next_before`),
    the entries older than that page. One unreadable file elsewhere is reported, not fatal;
    ``journal`` itself unreadable raises :class:`OSError`, a ``before`` that does not fit
    these journals :class:`CursorInvalid`."""
    others = sorted(p for p in elsewhere if Path(p).name == journal.name)
    paths = [str(journal), *others]
    if before is not None and len(before) != len(paths):
        raise CursorInvalid(
            f"before has {len(before)} positions for {len(paths)} journals (the journals "
            "elsewhere changed): read from the newest page again"
        )
    starts: list[int | None] = list(before) if before is not None else [None] * len(paths)
    if not others:
        page = read_entries(
            journal, limit=limit, offset=offset, event=event, action=action, before=starts[0]
        )
        cursor = page.next_before
        return JournalView(
            page.entries, page.has_more, page.corrupt_lines, others, [], _cursor(cursor)
        )

    # Each journal is read from its cursor far enough for the page, then merged.
    def newest(index: int) -> JournalPage:
        return read_entries(
            paths[index], limit=offset + limit, event=event, action=action, before=starts[index]
        )

    pages = [newest(0)]
    readable: list[str] = []
    unreadable: list[dict[str, str]] = []
    for index, other in enumerate(others, start=1):
        try:
            pages.append(newest(index))
            readable.append(other)
        except OSError as exc:  # one unreadable file must not hide the rest
            unreadable.append({"journal": other, "error": str(exc)})
            pages.append(JournalPage(end=starts[index] or 0))
    page, sources, cursors = merge_pages(pages, limit=limit, offset=offset)
    entries = [
        entry if source == 0 else {**entry, "recorded_in": paths[source]}
        for entry, source in zip(page.entries, sources, strict=True)
    ]
    return JournalView(
        entries,
        page.has_more,
        page.corrupt_lines,
        others,
        unreadable,
        cursors if page.has_more else None,
    )


def _cursor(position: int | None) -> list[int] | None:
    return None if position is None else [position]
