"""``GET journal`` (docs/protocol.md 6.3): recent entries of a project's journal, for display.

The project's journal is the one in the server's state directory, with what kernels of this
server wrote about the same project elsewhere (:mod:`..mirror.journal_view`), and where the
kernels' records and the server's record of the decisions it relayed disagree
(:mod:`...core.journal.disagreements`), over the journal's newest lines.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jupyter_server.auth.decorator import authorized
from tornado import web

from ...core import errors
from ...core.journal.disagreements import DISAGREEMENT_WINDOW, find_disagreements
from ...core.journal.reader import CursorInvalid, read_entries
from ...core.journal.requests import REQUEST_OUTCOMES, RequestFilter, read_requests
from ...core.project import journal_location, project_root_for
from ..mirror.journal_view import read_journal_view
from .handlers import ApprovalsHandler

MAX_JOURNAL_PAGE = 200


class _JournalReading(ApprovalsHandler):
    """What the journal routes share: where the journal is, and the page's size."""

    #: A sidebar poll is not the person working: the hub's idle culler must not see it.
    _track_activity = False

    def _limit(self) -> int:
        try:
            limit = int(self.get_argument("limit", "50"))
        except ValueError:
            limit = 0
        if not 1 <= limit <= MAX_JOURNAL_PAGE:
            raise errors.ApprovalMalformedMessage(f"limit must be an integer 1-{MAX_JOURNAL_PAGE}.")
        return limit

    def _journal_of(self, place: Path) -> tuple[Path, Path]:
        """The project of ``place`` and its journal's path (raises when it is unusable)."""
        project = project_root_for(_existing(place, self.parts.server_root))
        location = journal_location(project)
        if isinstance(location.problem, errors.ApprovalJournalUnusable):
            raise location.problem
        return project, location.path

    async def _finish_off_loop(self, text: Callable[[], str]) -> None:
        """Send the JSON answer ``text`` computes, computed in a worker thread: reading a large
        journal takes a while, and the event loop serves every other request meanwhile."""
        body = await asyncio.to_thread(text)
        self.set_header("Content-Type", "application/json")
        self.finish(body)

    def _disagreements(self, journal: Path) -> list[dict[str, Any]]:
        """Where the kernels' and the server's records of the newest requests disagree."""
        recent = _RECENT.entries(journal)
        found = find_disagreements(recent, time.time(), self.parts.approval_ttl_s)
        return [disagreement.as_dict() for disagreement in found]

    def _place(self, path: str | None = None) -> Path:
        """The file or folder ``path`` (default: the ``path`` argument) names, always inside
        the server root. A notebook not saved yet (an agent's new one) counts as being in its
        nearest folder that exists, for the project; it keeps its own path."""
        root = self.parts.server_root
        given = self.get_argument("path", "") if path is None else path
        target = (root / given).resolve()
        if not target.is_relative_to(root):
            raise errors.ApprovalMalformedMessage(
                "path and notebook must name a file or directory inside the server root."
            )
        return target


class JournalHandler(_JournalReading):
    """``GET journal``: recent entries of a project's journal, newest first (display only)."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        """One page of the journal of the project at ``path`` (default: the server root)."""
        limit = self._limit()
        try:
            offset = int(self.get_argument("offset", "0"))
            before_text = self.get_argument("before", None)
            before = (
                [int(part) for part in before_text.split(",")] if before_text is not None else None
            )
        except ValueError:
            raise errors.ApprovalMalformedMessage(
                "offset must be an integer, and before the next_before of a page."
            ) from None
        if offset < 0:
            raise errors.ApprovalMalformedMessage("offset must be at least 0.")
        query = _Query(
            limit=limit,
            offset=offset,
            before=before,
            event=self.get_argument("outcome", None),
            action=self.get_argument("action", None),
        )
        place = self._place()
        elsewhere = self.links.journals_elsewhere()
        await self._finish_off_loop(lambda: self._page_text(place, elsewhere, query))

    def _page_text(self, place: Path, elsewhere: set[str], query: _Query) -> str:
        """The answer's JSON text (runs in a worker thread)."""
        project, journal = self._journal_of(place)
        try:
            view = read_journal_view(
                journal,
                elsewhere,
                limit=query.limit,
                offset=query.offset,
                event=query.event,
                action=query.action,
                before=query.before,
            )
        except CursorInvalid as exc:
            raise _cursor_refused(exc, "this journal") from None
        return json.dumps(
            {
                "entries": view.entries,
                "disagreements": self._disagreements(journal),
                "has_more": view.has_more,
                "next_before": _cursor_text(view.next_before),
                "offset": query.offset,
                "limit": query.limit,
                "journal": str(journal),
                "other_journals": view.others,
                "unreadable_journals": view.unreadable,
                "project_root": str(project),
                "corrupt_lines": view.corrupt_lines,
            }
        )


#: How many ids one ``GET journal/requests?request=`` may name (a notebook's cards at once).
MAX_REQUEST_IDS = 200
_REQUEST_ID = re.compile(r"[0-9a-f]{16}")


class JournalRequestsHandler(_JournalReading):
    """``GET journal/requests``: a project's journal as requests, one row each, newest first
    (display only)."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        """One page of request rows of the journal of the project at ``path`` (or of
        ``notebook``), kept by ``outcome``, ``notebook``, ``agent`` and ``q``."""
        limit = self._limit()
        before_text = self.get_argument("before", None)
        try:
            before = int(before_text) if before_text is not None else None
        except ValueError:
            raise errors.ApprovalMalformedMessage(
                "before must be the next_before of a page of requests."
            ) from None
        outcome = self.get_argument("outcome", None) or None
        if outcome is not None and outcome not in REQUEST_OUTCOMES:
            raise errors.ApprovalMalformedMessage(
                f"outcome must be one of {', '.join(REQUEST_OUTCOMES)}."
            )
        notebook = self.get_argument("notebook", None) or None
        place = self._place(notebook) if notebook else self._place()
        ids = [part for part in (self.get_argument("request", None) or "").split(",") if part]
        if len(ids) > MAX_REQUEST_IDS or not all(_REQUEST_ID.fullmatch(part) for part in ids):
            raise errors.ApprovalMalformedMessage(
                f"request must be up to {MAX_REQUEST_IDS} request ids (16 hexadecimal digits), "
                "separated by commas."
            )
        keep = RequestFilter(
            outcome=outcome,
            notebook_path=str(place) if notebook else None,
            agent=self.get_argument("agent", None) or None,
            search=(self.get_argument("q", None) or "").strip() or None,
            request_ids=frozenset(ids) if ids else None,
        )
        await self._finish_off_loop(lambda: self._page_text(place, limit, before, keep))

    def _page_text(self, place: Path, limit: int, before: int | None, keep: RequestFilter) -> str:
        """The answer's JSON text (runs in a worker thread)."""
        project, journal = self._journal_of(place)
        try:
            page = read_requests(journal, limit=limit, before=before, keep=keep)
        except CursorInvalid as exc:
            raise _cursor_refused(exc, "requests") from None
        return json.dumps(
            {
                "requests": page.rows,
                "disagreements": self._disagreements(journal),
                "has_more": page.has_more,
                "next_before": None if page.next_before is None else str(page.next_before),
                "limit": limit,
                "journal": str(journal),
                "project_root": str(project),
                "corrupt_lines": page.corrupt_lines,
            }
        )


@dataclass(frozen=True)
class _Query:
    """What one ``GET journal`` asks for."""

    limit: int
    offset: int
    before: list[int] | None
    event: str | None
    action: str | None


def _cursor_refused(exc: CursorInvalid, pages: str) -> errors.ApprovalMalformedMessage:
    """The refusal of a ``before`` that is no cursor of ``pages``."""
    return errors.ApprovalMalformedMessage(
        f"{exc}; before must be the next_before of a page of {pages}."
    )


def _existing(place: Path, root: Path) -> Path:
    """``place``, or its nearest folder that exists (inside ``root``)."""
    while not place.exists() and place != root and place.is_relative_to(root):
        place = place.parent
    return place


def _cursor_text(positions: list[int] | None) -> str | None:
    return None if positions is None else ",".join(str(position) for position in positions)


class _RecentEntries:
    """The newest :data:`DISAGREEMENT_WINDOW` entries of each journal, read again only when
    the file changed: every page shows the disagreements, and a journal is appended to far
    less often than it is paged through."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: dict[str, tuple[tuple[int, int, int], list[dict[str, Any]]]] = {}

    def entries(self, path: Path) -> list[dict[str, Any]]:
        """The newest entries of the journal at ``path`` (for display only)."""
        try:
            info = path.stat()
            key = (info.st_ino, info.st_size, info.st_mtime_ns)
        except OSError:
            key = (0, 0, 0)
        with self._lock:
            kept = self._kept.get(str(path))
        if kept is not None and kept[0] == key:
            return kept[1]
        entries = read_entries(path, limit=DISAGREEMENT_WINDOW).entries
        with self._lock:
            if len(self._kept) >= _RECENT_JOURNALS:
                self._kept.clear()
            self._kept[str(path)] = (key, entries)
        return entries


#: How many journals' newest entries are kept (one per project the History was opened for).
_RECENT_JOURNALS = 16
_RECENT = _RecentEntries()
