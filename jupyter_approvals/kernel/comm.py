"""The comm endpoint ``jupyter_approvals``: how the sidebar and the server talk to a kernel.

Contract (docs/protocol.md, section 2):

- frontend -> kernel ``{"op": "list"}``; kernel -> frontend ``{"op": "pending", "requests": [...]}``
- kernel -> every client, unasked, after any change: ``{"op": "changed", "requests": [...]}``,
  once, on the marker comm (iopub reaches every client of the kernel, the server included)
- frontend -> kernel ``{"op": "decide", "id", "decision", "fingerprint", "reason"}``;
  kernel -> frontend ``{"op": "decided", "id", "ok", "code", "message", "status"}``

Decisions here pass the same checks as the card's.
"""

from __future__ import annotations

import json
import logging
import threading
import uuid
from collections.abc import Callable
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from ..core import errors
from ..core.protocol import COMM_PROTOCOL_VERSION, COMM_TARGET, MARKER_COMM_PREFIX

if TYPE_CHECKING:
    from .decisions import Decisions

log = logging.getLogger("jupyter_approvals")

#: A message from a frontend larger than this (as JSON) is refused unread.
MAX_MESSAGE_BYTES = 64 * 1024
_CHANNELS = ("sidebar", "server", "comm")


class CommEndpoint:
    """Serves the comm target of one kernel session.

    ``decisions`` applies what frontends decide; ``listing`` gives the body of a
    ``pending`` or ``changed`` message (everything but ``op``).
    """

    def __init__(
        self,
        decisions: Decisions,
        listing: Callable[[], dict[str, Any]],
        on_session_path: Callable[[str], None] | None = None,
    ) -> None:
        import comm

        self._decisions = decisions
        self._listing_body = listing
        self._on_session_path = on_session_path
        self._comms: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._publishing = threading.RLock()
        self._manager = comm.get_comm_manager()
        self._manager.register_target(COMM_TARGET, self._on_open)
        # A kernel-side comm of our target that no frontend holds: it makes a
        # ``comm_info_request`` for the target answer "approvals are served here", so the
        # server can ask without opening a comm in kernels that never imported us (which would
        # log an error in those kernels on every poll). Changes are published on it: a comm
        # message goes out on iopub, which every client of the kernel reads even while a cell
        # runs, so the server keeps its list without asking. Frontends ignore comm ids they
        # do not hold.
        self._marker = comm.create_comm(
            target_name=COMM_TARGET,
            primary=False,
            comm_id=f"{MARKER_COMM_PREFIX}{uuid.uuid4().hex}",
        )
        self._marker.on_msg(self._on_marker_msg)
        self._manager.register_comm(self._marker)

    def close(self) -> None:
        """Stop serving the target (a newer session took over)."""
        try:
            self._manager.unregister_target(COMM_TARGET, self._on_open)
            self._manager.unregister_comm(self._marker)
        except Exception:
            log.debug("comm target was not registered", exc_info=True)

    def _on_open(self, comm: Any, open_msg: dict[str, Any]) -> None:
        with self._lock:
            self._comms[comm.comm_id] = comm
        comm.on_msg(lambda msg, c=comm: self._on_msg(c, msg))
        comm.on_close(lambda _msg, cid=comm.comm_id: self._forget(cid))
        data = (open_msg.get("content") or {}).get("data") or {}
        if isinstance(data, dict) and data.get("op") == "list":
            self._learn(data)
            self._send_listing(comm, "pending")

    def _learn(self, listing: dict[str, Any]) -> None:
        # The server names the notebook of this kernel's session (display only).
        path = listing.get("notebook_path")
        if isinstance(path, str) and path and self._on_session_path is not None:
            self._on_session_path(path)

    def _on_marker_msg(self, msg: dict[str, Any]) -> None:
        # Nobody holds the marker: a message to it is answered, and nothing is decided.
        data = (msg.get("content") or {}).get("data") if isinstance(msg, dict) else None
        if isinstance(data, dict) and data.get("op") == "decide":
            self._refuse_unread(data, errors.ApprovalMalformedMessage.code, "sent to the marker")
        self._send(
            self._marker,
            _error(
                errors.ApprovalMalformedMessage(
                    "This comm only announces changes; open a comm of your own with target "
                    f"{COMM_TARGET!r} to list or decide. Nothing was decided."
                )
            ),
        )

    def _refuse_unread(self, data: dict[str, Any], code: str, why: str) -> None:
        """Journal the refusal of a decision the endpoint does not read, when it names a
        request of this kernel."""
        request_id = data.get("id")
        if isinstance(request_id, str) and self._decisions.get(request_id) is not None:
            self._decisions.refused(request_id, code, why=why)

    def comm_ids(self) -> list[str]:
        """Ids of the frontend comms open on this endpoint (decisions may arrive on them)."""
        with self._lock:
            return list(self._comms)

    def _forget(self, comm_id: str) -> None:
        with self._lock:
            self._comms.pop(comm_id, None)

    def _on_msg(self, comm: Any, msg: dict[str, Any]) -> None:
        # Every message gets a coded answer: nothing a frontend sends may raise in here.
        try:
            self._handle(comm, msg)
        except Exception:
            log.exception("jupyter-approvals: a comm message could not be handled")
            self._send(
                comm,
                _error(
                    errors.ApprovalMalformedMessage(
                        "The message could not be handled; nothing was decided."
                    )
                ),
            )

    def _handle(self, comm: Any, msg: dict[str, Any]) -> None:
        data = (msg.get("content") or {}).get("data") if isinstance(msg, dict) else None
        size = len(json.dumps(data, default=str))
        if size > MAX_MESSAGE_BYTES:
            if isinstance(data, dict) and data.get("op") == "decide":
                why = f"over {MAX_MESSAGE_BYTES} bytes"
                self._refuse_unread(data, errors.ApprovalTooLarge.code, why)
            self._send(
                comm,
                _error(
                    errors.ApprovalTooLarge(
                        f"The message has {size} bytes; at most {MAX_MESSAGE_BYTES} are read."
                    )
                ),
            )
            return
        op = data.get("op") if isinstance(data, dict) else None
        if op == "list" and isinstance(data, dict):
            self._learn(data)
            self._send_listing(comm, "pending")
        elif op == "decide" and isinstance(data, dict):
            self._send(comm, self._decide(data))
        else:
            self._send(
                comm,
                _error(
                    errors.ApprovalMalformedMessage(
                        f"Unknown or missing op {op!r}; expected 'list' or 'decide'.",
                        op=str(op)[:40],
                    )
                ),
            )

    def _decide(self, data: dict[str, Any]) -> dict[str, Any]:
        request_id = data.get("id")
        channel = data.get("channel") if data.get("channel") in _CHANNELS else "comm"
        reply: dict[str, Any] = {"op": "decided", "id": request_id}
        try:
            info = self._decisions.decide(
                request_id,
                data.get("decision"),
                data.get("fingerprint"),
                data.get("reason", ""),
                channel=str(channel),
                decided_by=data["decided_by"] if isinstance(data.get("decided_by"), str) else None,
                check=lambda: _check_deadline(data.get("not_after")),
            )
        except errors.ApprovalError as exc:
            current = self._decisions.get(request_id)
            return {
                **reply,
                "ok": False,
                "code": exc.code,
                "message": exc.message,
                "status": current.status.value if current else None,
            }
        return {**reply, "ok": True, "code": None, "message": "", "status": info.status.value}

    def _listing(self, op: str) -> dict[str, Any]:
        return {"op": op, "protocol": COMM_PROTOCOL_VERSION, **self._listing_body()}

    def broadcast_changed(self) -> None:
        """Tell every client of the kernel the current pending list, once, on the marker comm."""
        self._send_listing(self._marker, "changed")

    def _send_listing(self, comm: Any, op: str) -> None:
        # The main thread and the sweeper both publish: one at a time, so the last message
        # on iopub always carries the latest list.
        with self._publishing:
            self._send(comm, self._listing(op))

    @staticmethod
    def _send(comm: Any, data: dict[str, Any]) -> None:
        try:
            comm.send(data)
        except Exception:
            log.debug("could not send to comm %s", getattr(comm, "comm_id", "?"), exc_info=True)


def _error(exc: errors.ApprovalError) -> dict[str, Any]:
    return {"op": "error", "ok": False, "code": exc.code, "message": exc.message}


def _check_deadline(not_after: object) -> None:
    """Refuse a decision that arrived after the deadline its sender gave it."""
    if _past(not_after):
        raise errors.ApprovalKernelUnavailable(
            "The decision arrived after its deadline (the kernel was busy); nothing was "
            "decided. Decide again.",
            why="late",
        )


def _past(not_after: object) -> bool:
    """True when a decision's ``not_after`` (ISO 8601 with a time zone) lies in the past.

    Absent (None): no deadline. Anything else that is not such a time cannot be honoured and
    is refused with APPROVAL_MALFORMED_DECISION, rather than guessed at.
    """
    if not_after is None:
        return False
    moment = None
    if isinstance(not_after, str):
        try:
            moment = datetime.fromisoformat(not_after.replace("Z", "+00:00"))
        except ValueError:
            moment = None
    if moment is None or moment.tzinfo is None or moment.utcoffset() is None:
        raise errors.ApprovalMalformedDecision(
            "not_after must be an ISO 8601 time with a time zone (e.g. 2026-12-01T10:00:00Z); "
            "nothing was decided.",
            field="not_after",
        )
    return datetime.now(timezone.utc) > moment
