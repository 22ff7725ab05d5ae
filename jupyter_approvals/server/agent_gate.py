"""The agent gate: what the server lets an agent identity do, and what it holds.

One :class:`AgentGate` per server. The identity layer calls :meth:`AgentGate.admit` for every
request with an agent token (routes, paths, ownership of kernels and sessions); the wrapped
kernel websocket connection calls :meth:`AgentGate.screen` for every message a client sends
(stamped with its sender; for agents, an allowlist of message types and the hold on
``execute_request``). A sweep every second closes the sockets of agents that were removed.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import weakref
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from jupyter_client.session import Session
from tornado import web

from ..core import errors
from ..core.agents import AgentRegistry
from ..core.model import Lease
from . import agent_routes, sessions
from .agent_identity import AgentUser, is_agent, refuse, username_of
from .agent_notebooks import untrusted_notebook_body
from .held_code import CodeHold, pending_text, refusal_text
from .held_files import held_write, pending_write_error
from .kernel_messages import IncomingMessage, decode, encode_reply

#: Message types an agent may send on the shell or control channel. Not complete_request or
#: inspect_request: completing imports modules (IPython's completer imports what it completes
#: from) and inspecting reads values and runs attribute getters in the person's kernel.
AGENT_MESSAGE_TYPES = frozenset({"kernel_info_request", "is_complete_request", "interrupt_request"})
#: Message protocol versions an agent may speak: older headers make the server adapt the
#: message, and the adapter turns a v4 ``user_variables`` list into code the kernel evaluates.
_PROTOCOL_VERSION = re.compile(r"5\.\d+")
#: Message types the server stamps with their sender before a kernel sees them.
STAMPED_TYPES = frozenset({"execute_request", "comm_open", "comm_msg", "comm_close"})
#: Policies for agent code: held until approved, or run with only protected calls asking.
POLICIES = ("ask", "protected-only")

_KERNELS = "jupyter_server.services.kernels.handlers"
_SESSIONS = "jupyter_server.services.sessions.handlers"
_KERNELS_WS = "jupyter_server.services.kernels.websocket"
_CONTENTS = "jupyter_server.services.contents.handlers.ContentsHandler"
_ROOM_SESSION = "jupyter_server_ydoc.handlers.DocSessionHandler"
#: HTTP status of a held write's refusals (everything else a write is refused with: 409).
_WRITE_STATUS = {
    errors.ApprovalTooManyPending.code: 429,
    errors.ApprovalUnfingerprintable.code: 400,
}


class AgentGate:
    """Everything the server decides about agent identities."""

    def __init__(
        self,
        registry: AgentRegistry,
        hold: CodeHold,
        *,
        policy: str,
        server_root: Path,
        secret_dirs: Callable[[], Iterable[Path]],
        session_manager: Any,
        log: logging.Logger | logging.LoggerAdapter[Any],
    ) -> None:
        if policy not in POLICIES:
            raise ValueError(f"unknown agent code policy {policy!r}")
        self.registry = registry
        self.hold = hold
        self.policy = policy
        self.server_root = server_root
        self._secret_dirs = secret_dirs
        self._sessions = session_manager
        self.log = log
        self.kernels_started: dict[str, str] = {}
        self.sessions_started: dict[str, str] = {}
        self._sockets: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        self._paused: set[str] = set()
        self._session = Session(username="jupyter-approvals")

    # -- HTTP and websocket upgrades -----------------------------------------------------

    def admit(self, handler: web.RequestHandler, agent: str) -> None:
        """Let agent ``agent``'s request through, or end it with a coded 403."""
        try:
            agent_routes.check_route(handler)
            for path in agent_routes.request_paths(handler):
                why = agent_routes.secret_path_reason(path, self.server_root, self._secret_dirs())
                if why is not None:
                    raise agent_routes.forbidden(
                        f"Agents may not touch {path!r}: {why}. Nothing was done.", path=path
                    )
            self._check_body(handler)
            self._check_unscreened_room(handler)
            self._check_ownership(handler, agent)
            self._check_socket_takeover(handler, agent)
        except errors.ApprovalAgentForbidden as exc:
            self.log.warning("jupyter-approvals refused agent %s: %s", agent, exc.message)
            refuse(handler, exc)
        self._hold_write(handler, agent)
        self._untrust_notebook_saves(handler, agent)
        self._remember_what_it_starts(handler, agent)
        if hasattr(handler, "ws_connection"):
            self._sockets[handler] = agent

    def _check_ownership(self, handler: web.RequestHandler, agent: str) -> None:
        name = agent_routes.handler_name(handler)
        method = (handler.request.method or "").upper()
        kwargs = handler.path_kwargs
        if name in (f"{_KERNELS}.KernelHandler", f"{_KERNELS}.KernelActionHandler"):
            stops = method == "DELETE" or kwargs.get("action") == "restart"
            kernel_id = kwargs.get("kernel_id", "")
            if stops and self.kernels_started.get(kernel_id) != agent:
                raise agent_routes.forbidden(
                    f"Agents may shut down or restart only kernels they started; {kernel_id} "
                    f"is not one of agent {agent}'s. Nothing was done.",
                    kernel_id=kernel_id,
                )
        if name == f"{_SESSIONS}.SessionHandler" and method in ("DELETE", "PATCH"):
            # Deleting a session, or moving it to another kernel, shuts its kernel down: the
            # session and its kernel must both be the agent's.
            session_id = kwargs.get("session_id", "")
            its_kernel = sessions.kernel_of_session(self._sessions, session_id)
            if self.sessions_started.get(session_id) != agent or (
                its_kernel is not None and self.kernels_started.get(its_kernel) != agent
            ):
                raise agent_routes.forbidden(
                    f"Agents may change or delete only sessions they started, on kernels they "
                    f"started; {session_id} is not one of agent {agent}'s. Nothing was done.",
                    session_id=session_id,
                )

    def _check_body(self, handler: web.RequestHandler) -> None:
        """Refuse what the gate cannot read as the handler will, and what it does not screen."""
        if not handler.request.body:
            return
        try:
            model = agent_routes.json_body(handler.request.body)
        except (ValueError, UnicodeDecodeError):
            raise agent_routes.forbidden(
                "The body is not a JSON object the gate can read exactly as the server would. "
                "Nothing was done.",
            ) from None
        name = agent_routes.handler_name(handler)
        if name != _CONTENTS or handler.request.method != "PUT":
            return
        if "chunk" in model:
            raise agent_routes.forbidden(
                "Agents may not upload in chunks: a chunk appends to what an earlier one wrote, "
                "which no single approval shows. Send the whole file. Nothing was written.",
            )
        api_path = str(handler.path_kwargs.get("path") or "")
        if model.get("type") == "notebook" and not api_path.lower().endswith(".ipynb"):
            raise agent_routes.forbidden(
                f"Agents may save notebooks only at .ipynb paths, not {api_path!r} (a notebook "
                "save is not held; it would replace that file unseen). Nothing was written.",
                path=api_path,
            )

    def _check_unscreened_room(self, handler: web.RequestHandler) -> None:
        # A room saves what is typed into it through the contents manager, inside the server:
        # for files other than notebooks that would be an unheld write.
        if agent_routes.handler_name(handler) != _ROOM_SESSION or handler.request.method != "PUT":
            return
        try:
            kind = agent_routes.json_body(handler.request.body).get("type")
        except (ValueError, UnicodeDecodeError):
            kind = None
        if kind != "notebook":
            raise agent_routes.forbidden(
                "Agents may open collaboration rooms only for notebooks: edits of other files "
                "through a room are not held for a person yet. Write the file through the "
                "contents API, where the write is held with a diff. Nothing was done.",
            )

    def _hold_write(self, handler: web.RequestHandler, agent: str) -> None:
        write = held_write(
            agent_routes.handler_name(handler),
            (handler.request.method or "").upper(),
            handler.path_kwargs,
            handler.request.body,
            self.server_root,
            agent,
        )
        if write is None:
            return
        try:
            outcome = self.hold.screen_write(write, agent)
        except errors.ApprovalError as exc:
            refuse(handler, exc, status=_WRITE_STATUS.get(exc.code, 409))
        if not isinstance(outcome, Lease):
            refuse(
                handler, pending_write_error(outcome.id, outcome.fingerprint, write.summary), 409
            )
        lease = outcome
        on_finish = handler.on_finish

        def finishing() -> None:
            on_finish()
            status = handler.get_status()
            failure = None if status < 400 else RuntimeError(f"the server answered {status}")
            self.hold.ran(lease, failure)

        handler.on_finish = finishing  # type: ignore[method-assign]

    def _untrust_notebook_saves(self, handler: web.RequestHandler, agent: str) -> None:
        if agent_routes.handler_name(handler) != _CONTENTS or handler.request.method != "PUT":
            return
        api_path = str(handler.path_kwargs.get("path") or "").strip("/")
        on_disk = self.server_root.joinpath(*[p for p in api_path.split("/") if p])
        body = untrusted_notebook_body(handler.request.body, agent, on_disk)
        if body is not None:
            handler.request.body = body

    def _check_socket_takeover(self, handler: web.RequestHandler, agent: str) -> None:
        # jupyter_server closes an open kernel websocket when another one arrives with the
        # same session_id ("a client reconnecting"): an agent must not knock a person off.
        if agent_routes.handler_name(handler) != f"{_KERNELS_WS}.KernelWebsocketHandler":
            return
        from jupyter_server.services.kernels.connection.channels import (
            ZMQChannelsWebsocketConnection,
        )

        key = f"{handler.path_kwargs.get('kernel_id', '')}:{handler.get_argument('session_id', '')}"
        holder = ZMQChannelsWebsocketConnection._open_sessions.get(key)
        if holder is not None and self._sockets.get(holder) != agent:
            raise agent_routes.forbidden(
                "Another client's connection to this kernel uses this session_id; agents may "
                "not take it over. Connect with a session_id of your own.",
            )

    def _remember_what_it_starts(self, handler: web.RequestHandler, agent: str) -> None:
        # The kernel and session ids exist only in the reply: read them from what the
        # handler finishes with, and only for kernels that did not exist before.
        name = agent_routes.handler_name(handler)
        if (handler.request.method or "").upper() != "POST" or name not in (
            f"{_KERNELS}.MainKernelHandler",
            f"{_SESSIONS}.SessionRootHandler",
        ):
            return
        kernels_before = set(handler.settings["kernel_manager"].list_kernel_ids())
        sessions_before = sessions.session_ids(self._sessions)
        finish = handler.finish

        def remembering_finish(chunk: Any = None) -> Any:
            if chunk is not None and handler.get_status() in (200, 201):
                self._record_started(chunk, agent, kernels_before, sessions_before)
            return finish(chunk)

        handler.finish = remembering_finish  # type: ignore[method-assign]

    def _record_started(
        self, chunk: Any, agent: str, kernels_before: set[str], sessions_before: set[str]
    ) -> None:
        # A POST for a path that has a session answers with that (someone else's) session,
        # and a session can name a running kernel: only what is new is the agent's.
        try:
            model = json.loads(chunk)
        except (TypeError, ValueError):
            return
        if not isinstance(model, dict):
            return
        kernel = model.get("kernel") if "kernel" in model else model
        session_id = model.get("id") if "kernel" in model else None
        if isinstance(session_id, str) and session_id not in sessions_before:
            self.sessions_started[session_id] = agent
        started = kernel.get("id") if isinstance(kernel, dict) else None
        if isinstance(started, str) and started not in kernels_before:
            self.kernels_started[started] = agent

    def sweep(self) -> None:
        """End held requests whose time is up; apply pauses; close sockets of agents gone."""
        self.hold.sweep()
        self.apply_pauses()
        for handler, agent in list(self._sockets.items()):
            if not self.registry.is_active(agent):
                self.log.info("jupyter-approvals: closing a socket of agent %s", agent)
                self._sockets.pop(handler, None)
                with contextlib.suppress(Exception):  # already closed
                    handler.close(4003, f"agent {agent} was removed or paused")

    def apply_pauses(self, by: str | None = None) -> None:
        """Reject the held requests of agents paused since the last look; journal each change.

        ``by`` names the person who paused or resumed from the sidebar (None: the CLI).
        """
        try:
            records = self.registry.records()
        except errors.ApprovalError:
            return  # an unreadable registry already refuses every agent token
        paused = {name for name, record in records.items() if record.paused}
        for agent in sorted(paused - self._paused):
            rejected = self.hold.pause(agent, by)
            self.log.info(
                "jupyter-approvals: agent %s paused; %d held requests rejected", agent, rejected
            )
        for agent in sorted(self._paused - paused):
            self.hold.journal_agent("agent_resumed", agent, by)
        self._paused = paused

    def open_sockets(self, agent: str) -> int:
        """How many websockets of ``agent`` are open (for tests and the doctor)."""
        return sum(1 for name in self._sockets.values() if name == agent)

    # -- kernel websocket messages -------------------------------------------------------

    def screen(self, connection: Any, raw: Any) -> Any | None:
        """What to forward to the kernel for this client frame (None: nothing)."""
        handler = connection.websocket_handler
        user = handler.current_user
        subprotocol = getattr(connection, "subprotocol", None)
        try:
            message = decode(raw, subprotocol)
        except (ValueError, KeyError, TypeError, IndexError):
            if is_agent(user):
                self.log.warning("jupyter-approvals dropped a malformed frame from an agent")
                return None
            return raw  # the server's own handling reports it, as without the gate
        if not isinstance(user, AgentUser):
            if message.msg_type in STAMPED_TYPES:
                return message.stamped({"sender": "person", "username": username_of(user)})
            return raw
        return self._screen_agent(connection, message, user.agent, subprotocol)

    def _screen_agent(
        self, connection: Any, message: IncomingMessage, agent: str, subprotocol: str | None
    ) -> Any | None:
        if not self.registry.is_active(agent):
            connection.websocket_handler.close(4003, f"agent {agent} was removed or paused")
            return None
        msg_type, channel = message.msg_type, message.channel
        stamp = {"sender": "agent", "agent": agent}
        version = message.header.get("version")
        if not (isinstance(version, str) and _PROTOCOL_VERSION.fullmatch(version)):
            error = errors.ApprovalAgentForbidden(
                f"Agents must speak message protocol 5 (header version {version!r}); older "
                "messages are adapted by the server in ways that run code. Nothing was sent "
                "to the kernel.",
                msg_type=msg_type,
                version=version if isinstance(version, str) else None,
            )
            self._answer_refusal(connection, message, subprotocol, error)
            return None
        if channel in ("shell", "control") and msg_type in AGENT_MESSAGE_TYPES:
            return message.raw
        if channel == "shell" and msg_type == "execute_request":
            if self.policy == "protected-only":
                return message.stamped(stamp)
            return self._hold(connection, message, agent, subprotocol, stamp)
        error = errors.ApprovalAgentForbidden(
            f"Agents may not send {msg_type or 'this message'} on the {channel} channel "
            "(allowed: execute_request on shell, and "
            f"{', '.join(sorted(AGENT_MESSAGE_TYPES))}). Nothing was sent to the kernel.",
            msg_type=msg_type,
            channel=channel,
        )
        self.log.warning("jupyter-approvals refused agent %s: %s", agent, error.message)
        self._answer_refusal(connection, message, subprotocol, error)
        return None

    def _hold(
        self,
        connection: Any,
        message: IncomingMessage,
        agent: str,
        subprotocol: str | None,
        stamp: dict[str, Any],
    ) -> Any | None:
        kernel_id = str(getattr(connection, "kernel_id", "") or "")
        try:
            outcome = self.hold.screen(
                message.content(),
                kernel_id,
                agent,
                sessions.notebook_of_kernel(self._sessions, kernel_id),
            )
        except errors.ApprovalError as exc:
            self._answer_execute(connection, message, subprotocol, exc.code, refusal_text(exc))
            return None
        except ValueError as exc:  # content that is not JSON
            error = errors.ApprovalMalformedMessage(f"The execute_request is malformed: {exc}.")
            self._answer_execute(connection, message, subprotocol, error.code, refusal_text(error))
            return None
        if isinstance(outcome, Lease):
            forwarded = message.stamped(stamp)
            self.hold.ran(outcome)
            return forwarded
        self._answer_execute(
            connection, message, subprotocol, errors.ApprovalPending.code, pending_text(outcome)
        )
        return None

    # -- answers in the kernel's place ---------------------------------------------------

    def _send(
        self,
        connection: Any,
        msg_type: str,
        content: dict[str, Any],
        message: IncomingMessage,
        channel: str,
        subprotocol: str | None,
    ) -> None:
        frame, binary = encode_reply(
            self._session, msg_type, content, message.header, channel, subprotocol
        )
        connection.websocket_handler.write_message(frame, binary=binary)

    def _answer_execute(
        self,
        connection: Any,
        message: IncomingMessage,
        subprotocol: str | None,
        code: str,
        text: str,
    ) -> None:
        """A well-formed failed execution: busy, error, execute_reply, idle."""
        # Four small frames at once: without this, Nagle holds the last ones for an ACK.
        with contextlib.suppress(Exception):
            connection.websocket_handler.set_nodelay(True)
        error = {"ename": code, "evalue": text, "traceback": [text]}
        self._send(connection, "status", {"execution_state": "busy"}, message, "iopub", subprotocol)
        self._send(connection, "error", error, message, "iopub", subprotocol)
        reply = {"status": "error", "execution_count": 0, **error}
        self._send(connection, "execute_reply", reply, message, message.channel, subprotocol)
        self._send(connection, "status", {"execution_state": "idle"}, message, "iopub", subprotocol)

    def _answer_refusal(
        self,
        connection: Any,
        message: IncomingMessage,
        subprotocol: str | None,
        error: errors.ApprovalError,
    ) -> None:
        text = refusal_text(error)
        msg_type = message.msg_type
        if msg_type == "execute_request":
            self._answer_execute(connection, message, subprotocol, error.code, text)
        elif msg_type.endswith("_request"):
            reply = {"status": "error", "ename": error.code, "evalue": text, "traceback": [text]}
            reply_type = msg_type[: -len("_request")] + "_reply"
            channel = message.channel if message.channel in ("shell", "control") else "shell"
            self._send(connection, reply_type, reply, message, channel, subprotocol)
        elif msg_type in ("comm_open", "comm_msg"):
            comm_id = message.content().get("comm_id")
            data = {"code": error.code, "message": text}
            self._send(
                connection,
                "comm_close",
                {"comm_id": comm_id, "data": data},
                message,
                "iopub",
                subprotocol,
            )
        else:
            stream = {"name": "stderr", "text": text + "\n"}
            self._send(connection, "stream", stream, message, "iopub", subprotocol)
