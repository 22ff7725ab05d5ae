"""State changed under one lock, with events delivered to listeners after the lock is released.

Delivering outside the lock lets a listener call back into the state (a card asking for the
journal, a comm listing pending requests) without deadlocking; delivering in a ``finally``
means a change that ends in an error for the caller (auto-answered, refused) is still announced.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

log = logging.getLogger("jupyter_approvals")

T = TypeVar("T")

#: ``listener(event, subject, fields)``; ``event`` is a journal event name.
Listener = Callable[[str, T, dict[str, Any]], None]


class EventedState(Generic[T]):
    """A base for state guarded by a re-entrant lock that announces its changes."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._listeners: list[Listener[T]] = []
        self._outbox: list[tuple[str, T, dict[str, Any]]] = []
        self._depth = 0

    def subscribe(self, listener: Listener[T]) -> Callable[[], None]:
        """Call ``listener`` after every change; returns a function that unsubscribes."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def _before_change(self) -> None:
        """Run at the start of every transaction, under the lock (subclasses sweep here)."""

    def _queue(self, event: str, subject: T, fields: dict[str, Any]) -> None:
        self._outbox.append((event, subject, fields))

    def _transaction(self) -> _Transaction[T]:
        """A context manager: hold the lock (sweeping first), announce the changes after."""
        return _Transaction(self)


class _Transaction(Generic[T]):
    """One use of :meth:`EventedState._transaction`.

    A class rather than ``@contextmanager``: every call of the store passes through here, and
    a generator-based manager costs several times as much per use.
    """

    __slots__ = ("_state",)

    def __init__(self, state: EventedState[T]) -> None:
        self._state = state

    def __enter__(self) -> None:
        state = self._state
        state._lock.acquire()
        state._depth += 1
        try:
            state._before_change()
        except BaseException:
            self.__exit__(None, None, None)
            raise

    def __exit__(self, *_exc: object) -> None:
        state = self._state
        outbox: list[tuple[str, T, dict[str, Any]]] = []
        try:
            state._depth -= 1
            if state._depth == 0:
                outbox, state._outbox = state._outbox, []
        finally:
            state._lock.release()
        # Delivered once the lock is released, also when the change ends in an error.
        for event, subject, fields in outbox:
            for listener in list(state._listeners):
                try:
                    listener(event, subject, fields)
                except Exception:
                    log.exception("approval listener failed on %s", event)
