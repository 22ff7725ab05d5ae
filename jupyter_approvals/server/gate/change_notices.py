"""The notice under a cell whose execution changed files in its sandboxed kernel.

When a sandboxed kernel reports an execution idle, the server asks :mod:`..sandbox.cell_changes`
what that execution changed and, if anything, sends each client of the kernel a
``display_data`` for the execution just before the kernel's idle: the client (JupyterLab, an
agent's client writing outputs into a notebook) puts it under the cell like any output. It
comes from the server, not the kernel: the kernel cannot suppress it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from jupyter_client.session import Session

from ..sandbox.cell_changes import CellChanges
from .kernel_messages import IncomingMessage, channel_of, encode_reply, frame_bytes


class ChangeNotices:
    """Watches executions in sandboxed kernels and writes their notices (one per server)."""

    def __init__(self, cell_changes: CellChanges, is_sandboxed: Callable[[str], bool]) -> None:
        self.cell_changes = cell_changes
        self._is_sandboxed = is_sandboxed
        self._session = Session(username="jupyter-approvals")

    def incoming(self, connection: Any, message: IncomingMessage) -> None:
        """A client sent ``message``: an execution for a sandboxed kernel starts from what its
        upper folder holds now."""
        if message.msg_type != "execute_request":
            return
        kernel_id = str(getattr(connection, "kernel_id", "") or "")
        if self._is_sandboxed(kernel_id):
            self.cell_changes.starting(kernel_id)

    def outgoing(self, connection: Any, stream: Any, msg_list: list[Any]) -> None:
        """Before a sandboxed kernel's idle after an execution reaches a client, send the
        client that execution's notice, if it changed anything."""
        channel = channel_of(stream)
        if channel != "iopub":
            return
        kernel_id = str(getattr(connection, "kernel_id", "") or "")
        if not self._is_sandboxed(kernel_id):
            return  # other kernels' traffic pays one lookup
        session = connection.session
        try:
            _, fed = session.feed_identities(msg_list)
            header = frame_bytes(fed[1])
            # Outputs stream by the thousand: a JSON header without "status" is not unpacked.
            if header[:1] == b"{" and b'"status"' not in header:
                return
            if session.unpack(header).get("msg_type") != "status":
                return
            if session.unpack(frame_bytes(fed[4])).get("execution_state") != "idle":
                return
            parent = session.unpack(frame_bytes(fed[2]))
        except Exception:  # not a message of the kernel's: the server reports it, not us
            return
        if not isinstance(parent, dict) or parent.get("msg_type") != "execute_request":
            return
        notice = self.cell_changes.finished(kernel_id, str(parent.get("msg_id")))
        if notice is None:
            return
        subprotocol = getattr(connection, "subprotocol", None)
        frame, binary = encode_reply(
            self._session, "display_data", notice, parent, "iopub", subprotocol
        )
        with contextlib.suppress(Exception):  # the client left: the sidebar still lists it
            connection.websocket_handler.write_message(frame, binary=binary)
