"""``GET journal`` (docs/protocol.md 6.3): recent entries of a project's journal, for display.

The project's journal is the one in the server's state directory, with what kernels of this
server wrote about the same project elsewhere (:mod:`..mirror.journal_view`), and where the
kernels' records and the server's record of the decisions it relayed disagree
(:mod:`...core.journal.disagreements`), over the journal's newest lines.
"""

from __future__ import annotations

import time

from jupyter_server.auth.decorator import authorized
from tornado import web

from ...core import errors
from ...core.journal.disagreements import DISAGREEMENT_WINDOW, find_disagreements
from ...core.journal.reader import read_entries
from ...core.project import journal_location, project_root_for
from ..mirror.journal_view import read_journal_view
from .handlers import ApprovalsHandler

MAX_JOURNAL_PAGE = 200


class JournalHandler(ApprovalsHandler):
    """``GET journal``: recent entries of a project's journal, newest first (display only)."""

    #: A sidebar poll is not the person working: the hub's idle culler must not see it.
    _track_activity = False

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
        root = self.parts.server_root
        target = (root / self.get_argument("path", "")).resolve()
        if not target.is_relative_to(root) or not target.exists():
            raise errors.ApprovalMalformedMessage(
                "path must name a file or directory inside the server root."
            )
        project = project_root_for(target)
        location = journal_location(project)
        if isinstance(location.problem, errors.ApprovalJournalUnusable):
            raise location.problem
        view = read_journal_view(
            location.path,
            self.links.journals_elsewhere(),
            limit=limit,
            offset=offset,
            event=self.get_argument("outcome", None),
            action=self.get_argument("action", None),
        )
        recent = read_entries(location.path, limit=DISAGREEMENT_WINDOW).entries
        disagreements = find_disagreements(recent, time.time(), self.parts.approval_ttl_s)
        self.reply(
            {
                "entries": view.entries,
                "disagreements": [d.as_dict() for d in disagreements],
                "has_more": view.has_more,
                "offset": offset,
                "limit": limit,
                "journal": str(location.path),
                "other_journals": view.others,
                "unreadable_journals": view.unreadable,
                "project_root": str(project),
                "corrupt_lines": view.corrupt_lines,
            }
        )
