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

from ...core.journal.reader import JournalPage, merge_pages, read_entries


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


def read_journal_view(
    journal: Path,
    elsewhere: set[str],
    *,
    limit: int,
    offset: int,
    event: str | None = None,
    action: str | None = None,
) -> JournalView:
    """Entries ``offset`` to ``offset + limit`` (newest first) of ``journal`` and of the
    files among ``elsewhere`` that keep the same project's journal, filtered by ``event``
    and ``action``. One unreadable file elsewhere is reported, not fatal; ``journal`` itself
    unreadable raises :class:`OSError`."""
    others = sorted(p for p in elsewhere if Path(p).name == journal.name)
    if not others:
        page = read_entries(journal, limit=limit, offset=offset, event=event, action=action)
        return JournalView(page.entries, page.has_more, page.corrupt_lines, others)

    # Each journal is read from its newest entry far enough for the page, then merged.
    def newest(path: str | Path) -> JournalPage:
        return read_entries(path, limit=offset + limit, event=event, action=action)

    pages = [newest(journal)]
    readable: list[str] = []
    unreadable: list[dict[str, str]] = []
    for other in others:
        try:
            pages.append(newest(other))
            readable.append(other)
        except OSError as exc:  # one unreadable file must not hide the rest
            unreadable.append({"journal": other, "error": str(exc)})
    page, sources = merge_pages(pages, limit=limit, offset=offset)
    entries = [
        entry if source == 0 else {**entry, "recorded_in": readable[source - 1]}
        for entry, source in zip(page.entries, sources, strict=True)
    ]
    return JournalView(entries, page.has_more, page.corrupt_lines, others, unreadable)
