"""Coroutines waiting for a request to end (``await fn.wait()``), woken from any thread.

The store's events arrive on whatever thread changed the store (the shell, the sweeper, a
comm handler); each waiter is woken on its own event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from ..core.model import Status
from ..core.store import ApprovalStore


class Waiters:
    """Who waits for which request, and how to wake them."""

    def __init__(self, store: ApprovalStore, on_change: Callable[[], None] | None = None) -> None:
        self._store = store
        # Told when the set of awaited requests changes: while a cell awaits, the kernel
        # takes decisions although it is busy, and the server needs to know it can send them.
        self._on_change = on_change
        self._waiting: dict[str, list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]]] = {}

    def awaited(self) -> list[str]:
        """Ids of the requests some cell awaits now."""
        return [request_id for request_id, waiters in list(self._waiting.items()) if waiters]

    async def until_ended(self, request_id: str, timeout: float | None) -> None:
        """Wait until the request is no longer pending (decided, ended, or timed out)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        self._waiting.setdefault(request_id, []).append((loop, future))
        self._changed()
        info = self._store.get(request_id)
        if info is None or info.status is not Status.PENDING:
            self.wake(request_id)
        remaining = max(0.0, info.expires_at - self._store.clock.wall()) if info else 0.0
        limit = remaining + 0.5 if timeout is None else min(timeout, remaining + 0.5)
        try:
            await asyncio.wait_for(future, limit)
        except asyncio.TimeoutError:
            self._store.sweep()
        finally:
            waiters = self._waiting.get(request_id, [])
            if (loop, future) in waiters:
                waiters.remove((loop, future))
            if not waiters:
                self._waiting.pop(request_id, None)
            self._changed()

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change()

    def wake(self, request_id: str) -> None:
        """Wake everyone waiting for ``request_id`` (from any thread)."""
        for loop, future in list(self._waiting.get(request_id, [])):
            loop.call_soon_threadsafe(_resolve, future)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
