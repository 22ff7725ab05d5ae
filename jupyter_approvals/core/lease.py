"""The mutation lease: low-level writers refuse to run outside an approved run.

The store issues a :class:`~jupyter_approvals.core.model.Lease` when it redeems an approval.
:func:`run_approved` spends the lease and makes it current (a context variable: code the run
calls, and asyncio tasks it starts, see it; other threads do not) while the protected
function runs. A lease counts only while its run is in progress: a task or a copied context
that outlives the run holds a dead lease, and so does a process forked from the kernel. A
writer deep in a library calls :func:`require_lease` first, so it cannot be reached by a path
that skipped the gate.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import ParamSpec, TypeVar

from .errors import ApprovalRequired
from .model import Lease

P = ParamSpec("P")
R = TypeVar("R")

_current: ContextVar[Lease | None] = ContextVar("jupyter_approvals_lease", default=None)
_unspent: weakref.WeakSet[Lease] = weakref.WeakSet()
_running: weakref.WeakSet[Lease] = weakref.WeakSet()
_lock = threading.Lock()


def _void_in_forked_child() -> None:
    """A child forked from the kernel holds copies of its leases: none of them counts there
    (a lock another thread held at the fork is made anew)."""
    global _lock
    _lock = threading.Lock()
    _unspent.clear()
    _running.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_void_in_forked_child)


def issue_lease(request_id: str, action: str, fingerprint: str) -> Lease:
    """Create a lease that one run may spend. Called by the store when it redeems an approval."""
    lease = Lease(request_id=request_id, action=action, fingerprint=fingerprint)
    with _lock:
        _unspent.add(lease)
    return lease


def _spend(lease: Lease) -> None:
    with _lock:
        if lease not in _unspent:
            raise ApprovalRequired(
                "This lease was not issued by an approval, or it was already used. Nothing ran.",
                request_id=getattr(lease, "request_id", None),
            )
        _unspent.discard(lease)
        _running.add(lease)


def _end(lease: Lease) -> None:
    with _lock:
        _running.discard(lease)


def run_approved(lease: Lease, fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """Run ``fn`` once with ``lease`` current; the lease cannot be used again."""
    _spend(lease)
    token = _current.set(lease)
    try:
        return fn(*args, **kwargs)
    finally:
        _current.reset(token)
        _end(lease)


async def run_approved_async(
    lease: Lease, fn: Callable[P, Awaitable[R]], *args: P.args, **kwargs: P.kwargs
) -> R:
    """Await ``fn`` once with ``lease`` current, for protected coroutine functions."""
    _spend(lease)
    token = _current.set(lease)
    try:
        return await fn(*args, **kwargs)
    finally:
        _current.reset(token)
        _end(lease)


def current_lease() -> Lease | None:
    """The lease of the approved run this code is inside, if any."""
    return _current.get()


def require_lease(*actions: str) -> Lease:
    """Refuse with APPROVAL_REQUIRED unless called inside an approved run of one of ``actions``.

    Call it first thing in a function that changes data, so that function cannot run
    unless a person approved the protected operation that leads to it.
    """
    if not actions:
        raise TypeError("require_lease() needs at least one action name")
    lease = _current.get()
    with _lock:
        if lease is not None and lease not in _running:
            lease = None  # the run it belonged to has ended
    if lease is None or lease.action not in actions:
        running = (
            f"inside an approved run of {lease.action!r}" if lease else "outside any approved run"
        )
        raise ApprovalRequired(
            f"This operation needs an approval for {' or '.join(map(repr, actions))}; "
            f"it was called {running}. Nothing ran. Call the protected function instead.",
            actions=list(actions),
            current_action=lease.action if lease else None,
        )
    return lease
