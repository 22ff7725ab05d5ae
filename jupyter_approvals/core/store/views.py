"""The read-only side of the store (:class:`.approval_store.ApprovalStore`): snapshots.

Each view takes the store's lock (and so its sweep) like every change does, and hands out
copies (:class:`RequestInfo`), never the records themselves.
"""

from __future__ import annotations

from contextlib import AbstractContextManager

from ..model import Approval, RequestInfo, Status
from .request_table import RequestTable


class StoreViews:
    """Snapshots of a store's requests; mixed into the store, which provides the table and
    the transaction."""

    _table: RequestTable

    def _transaction(self) -> AbstractContextManager[None]:  # pragma: no cover - the store's
        raise NotImplementedError

    def get(self, request_id: str) -> RequestInfo | None:
        """A snapshot of one request, live or recently ended."""
        with self._transaction():
            request = self._table.lookup(request_id)
            return request.info() if request else None

    def find_live(
        self, action: str, fingerprint: str, owner: str | None = None
    ) -> RequestInfo | None:
        """The pending or approved request of exactly this call, if any."""
        with self._transaction():
            for status in (Status.PENDING, Status.APPROVED):
                request = self._table.find(action, fingerprint, status, owner)
                if request is not None:
                    return request.info()
            return None

    def approval(self, request_id: str) -> Approval | None:
        """The approval issued for a request, if it is approved and unused."""
        with self._transaction():
            request = self._table.live.get(request_id)
            return request.approval if request and request.status is Status.APPROVED else None

    def pending(self) -> list[RequestInfo]:
        """Snapshots of the requests waiting for a person, oldest first."""
        with self._transaction():
            return [r.info() for r in self._table.live.values() if r.status is Status.PENDING]

    def live(self) -> list[RequestInfo]:
        """Snapshots of pending and approved-but-unused requests, oldest first."""
        with self._transaction():
            return [r.info() for r in self._table.live.values()]

    def recent(self, limit: int = 20) -> list[RequestInfo]:
        """Snapshots of recently ended requests, newest first."""
        with self._transaction():
            return [r.info() for r in self._table.newest_ended()][:limit]
