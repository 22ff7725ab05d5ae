"""The one way a decision from a frontend reaches the store on the kernel side.

Cards and the comm endpoint hold a :class:`Decisions`, never the whole session: it applies a
decision (the store's frontend guard checks the message being handled), ends a request whose
card was closed, and journals what was refused: decisions, and objects offered to the store's
``redeem`` (which code can offer at will, so they count against a budget of their own).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core import errors
from ..core.model import RequestInfo, Status
from ..core.store.approval_store import ApprovalStore
from . import frontend
from .frontend import FrontendGuard
from .journaling import KernelJournal

#: Refusals the store or the frontend guard journal themselves.
_JOURNALED_ELSEWHERE = (
    errors.ApprovalFingerprintMismatch,
    errors.ApprovalAutoAnswered,
    errors.ApprovalNotFromFrontend,
)


class Decisions:
    """Decide, dismiss and look up requests of one kernel's store."""

    def __init__(self, store: ApprovalStore, journal: KernelJournal) -> None:
        self._store = store
        self._journal = journal
        self._dismissed_by: dict[str, tuple[str, str | None]] = {}
        store.redemption_refused = self._redemption_refused

    def get(self, request_id: object) -> RequestInfo | None:
        """The request ``request_id`` as the store holds it (None: unknown, or not an id)."""
        return self._store.get(request_id) if isinstance(request_id, str) else None

    def decide(
        self,
        request_id: object,
        decision: object,
        fingerprint: object,
        reason: object = "",
        channel: str = "card",
        decided_by: str | None = None,
        check: Callable[[], None] | None = None,
    ) -> RequestInfo:
        """Apply a decision carried by the frontend message being handled now.

        The message is consumed first, whatever follows. ``check`` is the entry point's own
        check of the message (the card's shown content, the sender's deadline); only when it
        passes is the message admitted for exactly this decision, and the store's guard
        refuses any decision the message was not admitted for (docs/protocol.md 3). Every
        refusal is journaled.
        """
        guard = self._store.decision_guard
        frontend_guard = guard if isinstance(guard, FrontendGuard) else None
        token = frontend_guard.open() if frontend_guard is not None else None
        checked = False
        try:
            if not isinstance(request_id, str):
                raise errors.ApprovalMalformedDecision("The request id must be text.", field="id")
            if check is not None:
                check()
            checked = True
            if token is not None and frontend_guard is not None:
                frontend_guard.admit(token, (request_id, decision, fingerprint, reason))
            # Who decided: the server's stamp on a card's message, or what the server says
            # it authenticated for a sidebar decision (a hint for the journal, not a check).
            who = frontend.caller_context()["person"] or decided_by
            if who:
                self._journal.note_decider(request_id, who)
            return self._store.decide(request_id, decision, fingerprint, reason, channel)
        except errors.ApprovalError as exc:
            # The entry point's own checks are journaled here whatever their code; past them,
            # the store and the guard journal some refusals themselves.
            if not checked or not isinstance(exc, _JOURNALED_ELSEWHERE):
                why = exc.details.get("why")
                extra = {"why": why} if isinstance(why, str) else {}
                self.refused(str(request_id)[:64], exc.code, channel=channel, **extra)
            raise
        finally:
            if token is not None and frontend_guard is not None:
                frontend_guard.close(token)

    def dismiss(self, request_id: str, channel: str) -> None:
        """The card was closed: a pending request ends without running.

        No frontend check: dismissing only ever stops a run, so any caller may do it; the
        journal records who (the channel and the message type).
        """
        info = self._store.get(request_id)
        if info is not None and info.status is Status.PENDING:
            self._dismissed_by[request_id] = (channel, frontend.current_message_type())
            self._store.dismiss(request_id)

    def dismissal(self, request_id: str) -> dict[str, Any]:
        """Who dismissed ``request_id`` (channel, message type), for its journal line, once."""
        found = self._dismissed_by.pop(request_id, None)
        return {} if found is None else {"channel": found[0], "message_type": found[1]}

    def refused(self, request_id: str, code: str, **fields: Any) -> None:
        """Journal a refused decision of ``request_id``."""
        self._journal.refused(request_id, code, self._store.get(request_id), **fields)

    def _redemption_refused(
        self, error: errors.ApprovalError, info: RequestInfo | None, fields: dict[str, Any]
    ) -> None:
        # Only code redeems, never a frontend message; its own budget, so offering look-alikes
        # never silences the refusals of decisions about the same request.
        request_id = info.id if info is not None else None
        budget = f"redeem:{request_id or '-'}"
        self._journal.refused(request_id, error.code, info, budget=budget, source="code", **fields)

    def guard_refused(self, request_id: str, why: str, message_type: str | None) -> None:
        """Journal a decision the frontend guard refused (it was not a frontend's message)."""
        self.refused(
            request_id, errors.ApprovalNotFromFrontend.code, why=why, message_type=message_type
        )
