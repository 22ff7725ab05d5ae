"""``GET journal`` (docs/protocol.md 6.3): recent entries of a project's journal, for display.

The project's journal is the one in the server's state directory. A kernel of this server
whose cell moved its state directory before approvals started journals elsewhere; what it
wrote about the same project is shown too, each such entry naming the file it came from.
"""

from __future__ import annotations

from pathlib import Path

from jupyter_server.auth.decorator import authorized
from tornado import web

from ...core import errors
from ...core.journal.writer import JournalPage, merge_pages, read_entries
from ...core.project import journal_location, project_root_for
from .handlers import ApprovalsHandler

MAX_JOURNAL_PAGE = 200


class JournalHandler(ApprovalsHandler):
    """``GET journal``: recent entries of a project's journal, newest first (display only)."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        """One page of the journal of the project at ``path`` (default: the server root)."""
        try:
            limit = int(self.get_argument("limit", "50"))
            offset = int(self.get_argument("offset", "0"))
        except ValueError:
            raise errors.ApprovalMalformedMessage("limit and offset must be integers.") from None
        if not 1 <= limit <= MAX_JOURNAL_PAGE or offset < 0:
            raise errors.ApprovalMalformedMessage(
                f"limit must be 1-{MAX_JOURNAL_PAGE} and offset at least 0."
            )
        root = Path(self.settings["server_root_dir"]).expanduser().resolve()
        target = (root / self.get_argument("path", "")).resolve()
        if not target.is_relative_to(root) or not target.exists():
            raise errors.ApprovalMalformedMessage(
                "path must name a file or directory inside the server root."
            )
        project = project_root_for(target)
        location = journal_location(project)
        if isinstance(location.problem, errors.ApprovalJournalUnusable):
            raise location.problem
        path = location.path
        # The journal's file name is the project's key: the same name elsewhere is the same
        # project's journal, kept by a kernel whose state directory was moved.
        others = sorted(p for p in self.links.journals_elsewhere() if Path(p).name == path.name)
        event = self.get_argument("outcome", None)
        action = self.get_argument("action", None)
        unreadable: list[dict[str, str]] = []
        if not others:
            page = read_entries(path, limit=limit, offset=offset, event=event, action=action)
            entries = page.entries
        else:
            # Each journal is read from its newest entry far enough for the page, then merged.
            def newest(journal: str | Path) -> JournalPage:
                return read_entries(journal, limit=offset + limit, event=event, action=action)

            pages = [newest(path)]
            readable: list[str] = []
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
        self.reply(
            {
                "entries": entries,
                "has_more": page.has_more,
                "offset": offset,
                "limit": limit,
                "journal": str(path),
                "other_journals": others,
                "unreadable_journals": unreadable,
                "project_root": str(project),
                "corrupt_lines": page.corrupt_lines,
            }
        )
