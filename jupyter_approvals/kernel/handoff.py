"""What a call's subject read, handed to the preview and the run of the same call.

The gate computes the subject right before it renders the preview (a new request) or runs
the body (an approval matched), in one thread. An operation whose subject reads its target
(a file, a tree, a repository, the environment) keeps that reading here, so the card shows
and the run uses exactly what was fingerprinted, not a second reading of a target that may
have changed in between. Keys name the call (operation and target); a reading kept for
another call is never returned. The gate clears what is kept when a protected call ends, so
a large reading never outlives its call.
"""

from __future__ import annotations

import threading
from typing import Any

_held = threading.local()


def remember(key: tuple[Any, ...], state: Any) -> Any:
    """Keep ``state`` for the preview or run of the call ``key``; return it."""
    _held.value = (key, state)
    return state


def peek(key: tuple[Any, ...]) -> Any:
    """The state kept for ``key`` (None if none, or another call's), left in place."""
    held = getattr(_held, "value", None)
    return held[1] if held is not None and held[0] == key else None


def recall(key: tuple[Any, ...]) -> Any:
    """The state kept for ``key``, once: it is forgotten, whoever's it was."""
    state = peek(key)
    _held.value = None
    return state


def clear() -> None:
    """Forget whatever is kept in this thread (the gate calls it when a protected call ends)."""
    _held.value = None
