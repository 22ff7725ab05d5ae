"""What one kernel writes to the decision journal, and where.

:class:`KernelJournal` fixes the journal's location when the kernel session starts (a cell that
changes the environment later must not move the record of decisions), stamps every line with
the kernel, its notebook and project, remembers who made each decision until its line is
written, and keeps a loop of refused attempts from flooding the journal with fsynced lines.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..core.journal.writer import Journal
from ..core.model import RequestInfo
from ..core.project import journal_location
from ..core.protocol import DECISION_EVENTS

#: Refused decisions journaled per request before the rest are only counted.
REFUSALS_JOURNALED = 20
#: Requests whose refusals are counted at once (the oldest count is dropped first).
_REFUSAL_COUNTS_KEPT = 1000
#: Frontend messages remembered as having had their one frontend refusal line.
_CHARGED_MESSAGES_KEPT = 1000


class KernelJournal:
    """The decision journal of one kernel, as the kernel session writes it."""

    def __init__(
        self,
        environ: Mapping[str, str],
        project_root: Path,
        kernel_id: str | None,
        notebook_path: str | None,
    ) -> None:
        self.project_root = project_root
        self._stamp = {
            "kernel_id": kernel_id,
            "notebook_path": notebook_path,
            "project_root": str(project_root),
        }
        location = journal_location(project_root, environ)
        self.journal = Journal.for_project(project_root, location.state_dir)
        self._location_problem = location.problem
        self._refusals: dict[tuple[str, str], int] = {}
        self._charged: OrderedDict[str, None] = OrderedDict()
        self._decided_by: dict[str, str] = {}
        #: The id of the verified frontend message being handled that carries a decision of
        #: the given request, or None (the session sets the frontend guard's lookup).
        self.frontend_message_of: Callable[[str], str | None] = lambda request_id: None

    def check_location(self) -> None:
        """Refuse protected operations while the journal would be inside the project."""
        if self._location_problem is not None:
            raise self._location_problem

    def health(self) -> str:
        """Why lines are not being written right now, or "" when the last one was."""
        if self.journal.last_append_ok is False:
            return str(self.journal.last_error or "unknown error")
        return ""

    def note_decider(self, request_id: str, who: str) -> None:
        """Remember who decided ``request_id``, for the decision's journal line."""
        self._decided_by[request_id] = who[:200]

    def event(self, event: str, info: RequestInfo | None, **fields: Any) -> None:
        """Append one line; a failure is kept for the card and never raised."""
        entry: dict[str, Any] = dict(self._stamp)
        if info is not None:
            entry.update(
                info.journal_fields(),
                cell_id=info.origin.cell_id,
                execution_count=info.origin.execution_count,
                username=info.origin.username,
            )
            if entry["notebook_path"] is None and info.origin.notebook_path:
                entry["notebook_path"] = info.origin.notebook_path
            if event in DECISION_EVENTS:
                entry["decided_by"] = self._decided_by.pop(info.id, None)
        if event == "refused" and "source" not in fields:
            # The store's own refusals (a run refused at redemption, a decision naming other
            # content) come here; they are bounded by a person's acts, so never budgeted.
            fields["source"] = self._source(info.id if info is not None else None)
        entry.update(fields)
        self.journal.append(event, **{k: v for k, v in entry.items() if v is not None})

    def refused(
        self,
        request_id: str | None,
        code: str,
        info: RequestInfo | None,
        budget: str | None = None,
        source: str | None = None,
        **fields: Any,
    ) -> None:
        """A refusal: journaled, up to :data:`REFUSALS_JOURNALED` per budget and source.

        The budget is the request's unless ``budget`` names another. Refusals of frontend
        messages and refusals of anything else (cell code, threads, hooks) count against
        separate budgets, so code that provokes refusals at will can never use up the lines a
        frontend's refusal needs; the line that spends a budget says so. ``source`` is worked
        out unless given (a redemption is never a frontend's act).
        """
        source = source or self._source(request_id)
        key = (budget or request_id or code, source)
        seen = self._refusals.get(key, 0) + 1
        self._refusals[key] = seen
        if len(self._refusals) > _REFUSAL_COUNTS_KEPT:
            self._refusals.pop(next(iter(self._refusals)))
        if seen > REFUSALS_JOURNALED:
            return
        if seen == REFUSALS_JOURNALED:
            fields["further_refusals_not_journaled"] = True
        where = {"request_id": request_id} if info is None and request_id else {}
        self.event("refused", info, code=code, source=source, **where, **fields)

    def _source(self, request_id: str | None) -> str:
        """``frontend`` for the first refusal while a frontend message whose verified record
        carries a decision of ``request_id`` is handled, else ``code``.

        Code running while a person's message is handled (a trap widget's callback, a profile
        hook) could otherwise charge any number of refusals to the frontend's budget: each
        verified frontend message gets one frontend line, for the request it names. The live
        message, which such code can edit, is never what counts.
        """
        if request_id is None:
            return "code"
        msg_id = self.frontend_message_of(request_id)
        if msg_id is None or msg_id in self._charged:
            return "code"
        self._charged[msg_id] = None
        while len(self._charged) > _CHARGED_MESSAGES_KEPT:
            self._charged.popitem(last=False)
        return "frontend"
