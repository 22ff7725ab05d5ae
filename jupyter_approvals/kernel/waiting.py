"""Waiting for a request: what a protected call says while it waits, whether it may wait,
and the coroutines that wait.

A pending call raises :func:`pending_error`, worded for the person and the agent reading it;
``await fn.wait(...)`` first checks :func:`check_can_wait`: it needs a running event loop in
a Jupyter kernel (ipykernel 7 or newer) that handles widget messages while a cell awaits.
:class:`Waiters` keeps the coroutines waiting for a request to end, woken from any thread:
the store's events arrive on whatever thread changed the store (the shell, the sweeper, a comm
handler); each waiter is woken on its own event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from ..core import errors
from ..core.fingerprint import short_fingerprint
from ..core.model import RequestInfo, Status, iso_utc
from ..core.store.approval_store import ApprovalStore


def pending_error(info: RequestInfo) -> errors.ApprovalPending:
    """The error a call raises while its request waits, telling an agent what to do next."""
    # An agent's cell must not be told to wait: its client would hang on the cell.
    waiting = (
        ""
        if info.origin.agent
        else "; or, in an async cell, `await fn.wait(...)` with the same arguments"
    )
    return errors.ApprovalPending(
        f"{info.action} needs a person's approval; nothing ran. Request {info.id} "
        f"(fingerprint {short_fingerprint(info.fingerprint)}) is shown in the notebook and in "
        f"the Approvals sidebar until {iso_utc(info.expires_at)}. Next: ask the person to "
        f"review and approve it there, then call again with exactly the same arguments{waiting}. "
        "Changing the arguments or the target asks for a new approval.",
        request_id=info.id,
        action=info.action,
        fingerprint=info.fingerprint,
        expires_at=iso_utc(info.expires_at),
        status=Status.PENDING.value,
        where=["notebook card", "Approvals sidebar"],
    )


def check_can_wait(shell: Any) -> None:
    """Refuse ``wait()`` where the kernel cannot deliver a decision while a cell awaits."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        raise errors.ApprovalWaitUnsupported(
            "wait() must be awaited inside a running event loop (an async notebook cell). "
            "Call the function without wait() to get the pending request instead.",
            reason="no running event loop",
        ) from None
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        raise errors.ApprovalWaitUnsupported(
            "wait() needs a Jupyter kernel that delivers the person's decision while a cell "
            "awaits; this process is not one. Call the function without wait() instead.",
            reason="not in a Jupyter kernel",
        )
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed_version

    try:
        release = installed_version("ipykernel")
    except PackageNotFoundError:
        release = "none"
    if tuple(int(p) for p in release.split(".")[:2] if p.isdigit()) < (7, 0):
        raise errors.ApprovalWaitUnsupported(
            f"wait() needs ipykernel 7 or newer (this kernel runs {release}), "
            "which handles widget messages while a cell awaits. Call the function without "
            "wait() instead, or upgrade ipykernel.",
            reason="ipykernel too old",
        )


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
