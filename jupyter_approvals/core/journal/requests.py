"""The journal read as requests: one row per request, its events under it, newest first.

A request's lines are written by several writers at different moments (the kernel's
``requested``, the server's ``relayed``, the kernel's ``approved`` and ``executed``), with
other requests' lines between them. A row is placed by its newest line, and gathers the
request's older lines while reading backwards, until it has seen its opening line
(``requested``, or ``staged`` in a sandboxed kernel) or reading passed :data:`REQUEST_SPAN_S`
before its newest line. A line with no ``request_id`` (an agent paused) is a row of its own.

Pages are read by cursor: a page's ``next_before`` is the position of the newest line of its
oldest row, and the next page, read backwards from there, leaves out every request that has a
line at or after it within the span (it was on an earlier page, or filtered out there).

For display only, like :mod:`.reader`: nothing read here authorizes anything.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import IO, Any, Final

from jupyter_approvals.core.journal.reader import (
    _iter_lines_reversed,
    open_for_reading,
    parse_entry,
)

__all__ = ["REQUEST_OUTCOMES", "RequestFilter", "RequestPage", "read_requests"]

#: A request's lines lie within this many seconds of each other (10 minutes to decide, 10 to
#: use an approval, with room for a long run): reading stops gathering a row's lines this far
#: before its newest one. A request whose lines lie further apart shows as two rows.
REQUEST_SPAN_S: Final = 45 * 60

#: Lines that open a request: once read, the row has all its lines.
_OPENING: Final = frozenset({"requested", "staged"})
#: Lines that end a request, newest wins; before any, the last decision or ``pending``.
_ENDINGS: Final = frozenset(
    {
        "executed",
        "failed",
        "rejected",
        "expired",
        "timed_out",
        "withdrawn",
        "dismissed",
        "lost",
        "auto_answered",
        "refused",
    }
)
#: What a row's ``outcome`` can be, for a filter.
REQUEST_OUTCOMES: Final = (
    "pending",
    "approved",
    "staged",
    *sorted(_ENDINGS),
    "agent_paused",
    "agent_resumed",
)
#: Keys of a row taken from the newest of its lines that has them.
_DESCRIBED_BY: Final = (
    "action",
    "summary",
    "notebook_path",
    "agent",
    "kernel_id",
    "held_at",
    "project_root",
)


@dataclass(frozen=True)
class RequestFilter:
    """Which rows a page keeps (each test passes when its value is None)."""

    outcome: str | None = None
    #: The notebook's absolute path, as lines record it.
    notebook_path: str | None = None
    agent: str | None = None
    #: Case-insensitive text found in the summary, action, notebook, agent, id, decider or
    #: reason of any of the row's lines.
    search: str | None = None
    #: Only the requests of these ids (a reopened notebook asks how its cards ended).
    request_ids: frozenset[str] | None = None

    def keeps(self, row: dict[str, Any]) -> bool:
        """Whether ``row`` (:meth:`_Row.as_dict`) passes every test."""
        if self.request_ids is not None and row["request_id"] not in self.request_ids:
            return False
        if self.outcome is not None and row["outcome"] != self.outcome:
            return False
        if self.notebook_path is not None and row.get("notebook_path") != self.notebook_path:
            return False
        if self.agent is not None and row.get("agent") != self.agent:
            return False
        if self.search:
            needle = self.search.casefold()
            return any(needle in text.casefold() for text in _searchable(row))
        return True


def _searchable(row: dict[str, Any]) -> Iterator[str]:
    for entry in row["events"]:
        for key in (
            "summary",
            "shown_summary",
            "action",
            "notebook_path",
            "agent",
            "request_id",
            "decided_by",
            "reason",
        ):
            value = entry.get(key)
            if isinstance(value, str):
                yield value


@dataclass(frozen=True)
class RequestPage:
    """One page of request rows, newest first (for display only)."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    has_more: bool = False
    #: The ``before`` of the next (older) page, when there is one.
    next_before: int | None = None
    corrupt_lines: int = 0


class _Row:
    """One request's lines as read so far, newest first."""

    def __init__(self, key: str, position: int, entry: dict[str, Any]) -> None:
        self.key = key
        self.position = position
        self.newest = _seconds(entry.get("time"))
        self.events: list[dict[str, Any]] = [entry]
        self.final = not entry.get("request_id") or entry.get("event") in _OPENING

    def add(self, entry: dict[str, Any]) -> None:
        self.events.append(entry)
        if entry.get("event") in _OPENING:
            self.final = True

    def as_dict(self) -> dict[str, Any]:
        events = self.events
        newest = events[0]
        row: dict[str, Any] = {
            "request_id": newest.get("request_id"),
            "outcome": _outcome(events),
            "started": events[-1].get("time"),
            "ended": newest.get("time"),
            "complete": any(e.get("event") in _OPENING for e in events)
            or not newest.get("request_id"),
            "events": events,
        }
        for key in _DESCRIBED_BY:
            value = next((e[key] for e in events if e.get(key) not in (None, "")), None)
            if value is not None:
                row[key] = value
        if "summary" not in row:
            shown = next((e["shown_summary"] for e in events if e.get("shown_summary")), None)
            if shown is not None:
                row["summary"] = shown
        decision = next((e for e in events if e.get("event") in ("approved", "rejected")), None)
        if decision is not None:
            for key in ("decided_by", "channel", "latency_ms", "reason"):
                if decision.get(key) not in (None, ""):
                    row[key] = decision[key]
            row["decision"] = decision["event"]
        return row


def _outcome(events: list[dict[str, Any]]) -> str:
    kinds = [str(e.get("event")) for e in events]
    if not events[0].get("request_id"):
        return kinds[0]
    ending = next((kind for kind in kinds if kind in _ENDINGS), None)
    if ending is not None:
        return ending
    for kind in ("approved", "staged"):
        if kind in kinds:
            return kind
    return "pending"


def _seconds(value: object) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value).timestamp()
    except ValueError:
        return None


def read_requests(
    path: str | os.PathLike[str],
    *,
    limit: int = 50,
    before: int | None = None,
    keep: RequestFilter | None = None,
    span_s: float = REQUEST_SPAN_S,
) -> RequestPage:
    """Up to ``limit`` request rows, newest first, from the end of the journal at ``path``
    (or from ``before``, a previous page's ``next_before``), kept by ``keep``.

    Reading stops once the page's rows are whole; a filter that keeps few rows reads on
    until it has the page or the file's start. A missing file is an empty page; a ``before``
    that is not a line's start raises :class:`CursorInvalid`, other OS errors ``OSError``.
    """
    if limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    keep = keep or RequestFilter()
    opened = open_for_reading(path, before)
    if opened is None:
        return RequestPage()
    with opened as (f, end, size):
        lines = _entries_reversed(f, end)
        first = next(lines, None)
        shown_before: set[str] = set()
        if before is not None and first is not None and first[1] is not None:
            shown_before = _requests_after(f, before, size, first[1], span_s)
        return _gather(_chain(first, lines), limit, keep, shown_before, span_s)


def _chain(
    first: tuple[int, dict[str, Any] | None] | None,
    rest: Iterator[tuple[int, dict[str, Any] | None]],
) -> Iterator[tuple[int, dict[str, Any] | None]]:
    if first is not None:
        yield first
    yield from rest


def _entries_reversed(f: IO[bytes], end: int) -> Iterator[tuple[int, dict[str, Any] | None]]:
    for position, raw in _iter_lines_reversed(f, end):
        yield position, (None if raw is None else parse_entry(raw))


def _requests_after(
    f: IO[bytes], start: int, size: int, newest_before: dict[str, Any], span_s: float
) -> set[str]:
    """Ids of requests with a line at or after ``start`` (read forwards, until the lines are
    ``span_s`` newer than the newest line before ``start``)."""
    limit_time = _seconds(newest_before.get("time"))
    found: set[str] = set()
    f.seek(start)
    tail = b""
    position = start
    while position < size:
        block = f.read(min(64 * 1024, size - position))
        if not block:
            break
        position += len(block)
        lines = (tail + block).split(b"\n")
        tail = lines.pop()
        for raw in lines:
            entry = parse_entry(raw) if raw else None
            if entry is None:
                continue
            moment = _seconds(entry.get("time"))
            if limit_time is not None and moment is not None and moment > limit_time + span_s:
                return found
            request_id = entry.get("request_id")
            if isinstance(request_id, str):
                found.add(request_id)
    return found


def _gather(
    lines: Iterator[tuple[int, dict[str, Any] | None]],
    limit: int,
    keep: RequestFilter,
    shown_before: set[str],
    span_s: float,
) -> RequestPage:
    rows: dict[str, _Row] = {}  # in the order they were placed: newest line first
    kept: dict[str, bool] = {}  # the whole rows, and whether the filter keeps them
    # Rows closed because reading went a span past them, and which row a request's next
    # (older) line belongs to when its first row was closed that way.
    aged: set[str] = set()
    current: dict[str, str] = {}
    corrupt = 0
    # Once one request had no room, no later (older) one is placed: the rows stay in order.
    closed = False
    reached_start = True
    for position, entry in lines:
        if entry is None:
            corrupt += 1
            continue
        request_id = entry.get("request_id")
        if isinstance(request_id, str) and request_id in shown_before:
            continue
        moment = _seconds(entry.get("time"))
        key = current.get(request_id, request_id) if isinstance(request_id, str) else None
        key = key or f"@{position}"
        row = rows.get(key)
        if row is not None and key in aged:
            # Its row was closed a span after this line: this line starts a row of its own.
            key = current[str(request_id)] = f"{request_id}@{position}"
            row = None
        if row is not None and key not in kept:
            row.add(entry)
        # Rows this line is far older than, or that have seen their opening line, are whole.
        for open_key, open_row in rows.items():
            if open_key in kept:
                continue
            too_old = (
                moment is not None
                and open_row.newest is not None
                and moment < open_row.newest - span_s
            )
            if open_row.final or too_old:
                kept[open_key] = keep.keeps(open_row.as_dict())
                if not open_row.final:
                    aged.add(open_key)
        if row is None:
            still_open = sum(1 for k in rows if k not in kept)
            if not closed and sum(kept.values()) + still_open < limit:
                placed = rows[key] = _Row(key, position, entry)
                if placed.final:
                    kept[key] = keep.keeps(placed.as_dict())
            else:
                closed = True
        if closed and all(k in kept for k in rows):
            reached_start = False  # an older request exists beyond the page
            break
    for key, row in rows.items():
        if key not in kept:
            kept[key] = keep.keeps(row.as_dict())
    page = [rows[key] for key in rows if kept[key]][:limit]
    has_more = not reached_start
    # The next page starts before the oldest row placed here, kept or not: the rows the
    # filter left out here are not read again there.
    last_placed = next(reversed(rows.values()), None)
    return RequestPage(
        rows=[row.as_dict() for row in page],
        has_more=has_more,
        next_before=last_placed.position if has_more and last_placed is not None else None,
        corrupt_lines=corrupt,
    )
