"""Decisions the server refuses before any kernel or store sees them, journaled.

A decision posted over REST that the server itself refuses (an agent's token, another origin's
page, a malformed body, an unknown or busy kernel, a request the kernel does not list) reaches
no kernel, so no kernel journals it; the server does, in the journal of the request's project
(docs/protocol.md section 5, ``refused`` with ``source: "rest"``). Whoever holds a credential
can post such refusals at will: each sender has a budget per request, so one sender's flood
never silences another's refusals, and a flood of made-up request ids shares one budget.
"""

from __future__ import annotations

from typing import Any

from ..mirror.journals import ServerJournals

#: At most this many refusal lines per sender and request (the last one says so).
PER_SENDER_AND_REQUEST = 20
#: How many budgets are remembered (the oldest is forgotten first).
MAX_BUDGETS_KEPT = 10_000
#: The budget of every request id the server does not know.
UNLISTED = "unlisted"


class RestRefusals:
    """Journals the server's own refusals of decisions, within budgets."""

    def __init__(self, journals: ServerJournals) -> None:
        self._journals = journals
        self._spent: dict[tuple[str, str], int] = {}

    def refused(
        self,
        code: str,
        *,
        sender: str,
        request_id: str,
        listed: bool,
        notebook_path: str | None,
        **fields: Any,
    ) -> None:
        """Journal that a decision for ``request_id`` from ``sender`` was refused with
        ``code``. ``listed``: the server knows the request (its id is journaled as
        ``request_id``; else as ``attempted_request_id``, clipped, under a shared budget)."""
        budget = (sender, request_id if listed else UNLISTED)
        spent = self._spent.get(budget, 0)
        if spent >= PER_SENDER_AND_REQUEST:
            return
        self._spent[budget] = spent + 1
        if len(self._spent) > MAX_BUDGETS_KEPT:  # forget the oldest: memory stays bounded
            self._spent.pop(next(iter(self._spent)))
        last = spent + 1 == PER_SENDER_AND_REQUEST
        self._journals.append(
            "refused",
            notebook_path,
            code=code,
            source="rest",
            request_id=request_id if listed else None,
            attempted_request_id=None if listed else request_id[:64],
            further_refusals_not_journaled=True if last else None,
            **fields,
        )
