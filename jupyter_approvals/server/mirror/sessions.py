"""What the server's session manager knows, read synchronously (the gate runs inside ``prepare``
and inside a websocket's message handler, where it cannot await).

jupyter_server's ``SessionManager`` keeps sessions in an in-memory SQLite table
``session(session_id, path, name, type, kernel_id)``; these functions read that table and
answer None or an empty set when a manager keeps its sessions elsewhere.
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection
from typing import Any


def _rows(session_manager: Any, query: str, args: tuple[str, ...] = ()) -> list[tuple[Any, ...]]:
    with contextlib.suppress(Exception):
        return list(session_manager.cursor.execute(query, args).fetchall())
    return []


def notebook_of_kernel(
    session_manager: Any, kernel_id: str, agents_sessions: Collection[str] = ()
) -> str | None:
    """The path of the session that uses ``kernel_id``, if there is one.

    A session that a person's client made is named before one in ``agents_sessions`` (the ids
    of sessions agents created): an agent's session path is its own claim about the kernel.
    """
    rows = _rows(
        session_manager, "SELECT session_id, path FROM session WHERE kernel_id=?", (kernel_id,)
    )
    paths = sorted(
        (session_id in agents_sessions, path) for session_id, path in rows if isinstance(path, str)
    )
    return paths[0][1] if paths else None


def kernel_of_session(session_manager: Any, session_id: str) -> str | None:
    """The kernel id of session ``session_id``, if it exists."""
    rows = _rows(session_manager, "SELECT kernel_id FROM session WHERE session_id=?", (session_id,))
    for (kernel_id,) in rows:
        if isinstance(kernel_id, str):
            return kernel_id
    return None


def session_ids(session_manager: Any) -> set[str]:
    """Ids of every session now."""
    return {row[0] for row in _rows(session_manager, "SELECT session_id FROM session")}
