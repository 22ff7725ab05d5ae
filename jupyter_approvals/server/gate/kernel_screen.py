"""What reaches a kernel from a kernel websocket: the gate's screen of every client frame.

A person's ``execute_request`` and comm messages are stamped with their sender; an agent's
messages pass only when their type is on the allowlist, its ``execute_request`` is held at the
server (policy ``ask``) or stamped and forwarded (``protected-only``), and everything else is
answered in the kernel's place with a coded refusal, in the client's protocol.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Callable, Collection
from typing import Any

from jupyter_client.session import Session

from ...core import errors
from ...core.agents import AgentRegistry
from ...core.decision import decision_payload
from ...core.model import Lease
from ..mirror import sessions
from .approved_outputs import OUTPUT_TYPES, ApprovedOutputs
from .change_notices import ChangeNotices
from .held_code import held_notice, pending_text, refusal_text
from .hold import AgentHold
from .hub import watcher_reason
from .identity import AgentUser, display_name_of, is_agent, username_of
from .kernel_messages import IncomingMessage, channel_of, decode, encode_reply, frame_bytes
from .limits import AgentLimits

#: Message types an agent may send on the shell or control channel. Not complete_request or
#: inspect_request: completing imports modules (IPython's completer imports what it completes
#: from) and inspecting reads values and runs attribute getters in the person's kernel.
AGENT_MESSAGE_TYPES = frozenset({"kernel_info_request", "is_complete_request", "interrupt_request"})
#: Message protocol versions an agent may speak: older headers make the server adapt the
#: message, and the adapter turns a v4 ``user_variables`` list into code the kernel evaluates.
_PROTOCOL_VERSION = re.compile(r"5\.\d+")
#: Message types the server stamps with their sender before a kernel sees them.
STAMPED_TYPES = frozenset({"execute_request", "comm_open", "comm_msg", "comm_close"})
#: Policies for agent code: held until approved; run at once in a sandboxed kernel and held
#: in any other; or run with only protected calls asking.
POLICIES = ("ask", "sandbox", "protected-only")
#: Records a decision relayed to a kernel: (kernel id, decision payload, channel, decided by).
Relayed = Callable[..., None]
#: How approved held code ends when its client left before the kernel replied.
_UNKNOWN_OUTCOME = (
    "OutcomeUnknown: the agent's connection closed before the kernel replied; the code was "
    "sent to the kernel and may have run"
)


def _carried_decision(message: IncomingMessage) -> tuple[dict[str, Any], str] | None:
    """The decision a comm message carries and its channel (``card`` for a card's custom
    message, else ``comm``), or None."""
    try:
        data = message.content().get("data")
    except (ValueError, TypeError, IndexError, AssertionError):
        return None
    payload = decision_payload(data)
    if payload is None:
        return None
    card = isinstance(data, dict) and data.get("method") == "custom"
    return payload, "card" if card else "comm"


class KernelScreen:
    """The screen of client frames on kernel websockets (one per server)."""

    def __init__(
        self,
        registry: AgentRegistry,
        hold: AgentHold,
        policy: str,
        log: logging.Logger | logging.LoggerAdapter[Any],
        session_manager: Any = None,
        owns_kernel: Callable[[str, str], bool] = lambda _agent, _kernel: False,
        agents_sessions: Callable[[], Collection[str]] = frozenset,
        limits: AgentLimits | None = None,
        is_sandboxed: Callable[[str], bool] = lambda _kernel: False,
        notices: ChangeNotices | None = None,
        relayed: Relayed | None = None,
    ) -> None:
        if policy not in POLICIES:
            raise ValueError(f"unknown agent code policy {policy!r}")
        self.registry = registry
        self.hold = hold
        self.policy = policy
        self.log = log
        self.session_manager = session_manager
        self._owns_kernel = owns_kernel
        self._agents_sessions = agents_sessions
        self._limits = limits
        self._is_sandboxed = is_sandboxed
        self._notices = notices
        self._relayed = relayed
        #: Approved held code forwarded and not yet answered: (connection id, msg_id) ->
        #: (connection, lease).
        self._awaiting: dict[tuple[int, str], tuple[Any, Lease]] = {}
        self.approved_outputs = ApprovedOutputs()
        self._session = Session(username="jupyter-approvals")

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
        if self._notices is not None:
            self._notices.incoming(connection, message)
        if not isinstance(user, AgentUser):
            watcher = watcher_reason(handler)
            if watcher is not None and message.msg_type in ("comm_open", "comm_msg"):
                if self._stop_watchers_decision(connection, message, user, watcher, subprotocol):
                    return None
            elif message.msg_type == "comm_msg" and self._relayed is not None:
                self._record_relayed(connection, message, user)
            if message.msg_type in STAMPED_TYPES:
                return message.stamped(
                    {
                        "sender": "person",
                        "username": username_of(user),
                        "display_name": display_name_of(user),
                    }
                )
            return raw
        return self._screen_agent(connection, message, user.agent, subprotocol)

    def _stop_watchers_decision(
        self,
        connection: Any,
        message: IncomingMessage,
        user: Any,
        why: str,
        subprotocol: str | None,
    ) -> bool:
        """A comm message of a hub credential that may not decide: if it carries a decision,
        answer APPROVAL_NOT_A_PERSON, journal it, and say so (True: send nothing on)."""
        carried = _carried_decision(message)
        if carried is None:
            return False
        payload, channel = carried
        error = errors.ApprovalNotAPerson(
            "On this JupyterHub server only its owner's browser session decides; this "
            f"decision came with {why}. Nothing was decided.",
            why=why,
        )
        self.log.warning("jupyter-approvals refused a decision: %s", error.message)
        kernel_id = getattr(connection, "kernel_id", None)
        if self._relayed is not None and isinstance(kernel_id, str):
            self._relayed(
                kernel_id, payload, channel=channel, decided_by=username_of(user), refused=error
            )
        self._answer_refusal(connection, message, subprotocol, error)
        return True

    def _record_relayed(self, connection: Any, message: IncomingMessage, user: Any) -> None:
        """A person's card decision passes here on its way to the kernel: record it."""
        assert self._relayed is not None
        if message.v1 and message.parts is not None and b"decide" not in message.parts[3]:
            # Most comm messages are widget updates: not parsed twice for nothing. (A decision
            # spelled with JSON escapes goes unrecorded here; the History names it not_relayed.
            # A watcher's messages are always parsed whole: there it would be a way through.)
            return
        carried = _carried_decision(message)
        kernel_id = getattr(connection, "kernel_id", None)
        if carried is not None and isinstance(kernel_id, str):
            payload, channel = carried
            self._relayed(kernel_id, payload, channel=channel, decided_by=username_of(user))

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
        kernel_id = str(getattr(connection, "kernel_id", "") or "")
        if msg_type == "interrupt_request" and not self._owns_kernel(agent, kernel_id):
            error = errors.ApprovalAgentForbidden(
                f"Agents may interrupt only kernels they started and nobody else works in; "
                f"{kernel_id} is not one of agent {agent}'s. Nothing was sent to the kernel.",
                msg_type=msg_type,
                kernel_id=kernel_id,
            )
            self.log.warning("jupyter-approvals refused agent %s: %s", agent, error.message)
            self._answer_refusal(connection, message, subprotocol, error)
            return None
        if channel in ("shell", "control") and msg_type in AGENT_MESSAGE_TYPES:
            return message.raw
        if channel == "shell" and msg_type == "execute_request":
            if self._limits is not None:
                try:
                    self._limits.take(agent)
                except errors.ApprovalAgentOverLimit as exc:
                    self.log.warning("jupyter-approvals refused agent %s: %s", agent, exc.message)
                    self._answer_refusal(connection, message, subprotocol, exc)
                    return None
            if self.policy == "protected-only":
                return message.stamped(stamp)
            if self.policy == "sandbox" and self._is_sandboxed(kernel_id):
                # What the code changes waits in the kernel's overlay as a change set.
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
                sessions.notebook_of_kernel(
                    self.session_manager, kernel_id, self._agents_sessions()
                ),
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
            # Journaled executed or failed when the kernel's execute_reply comes back.
            key = (id(connection), str(message.header.get("msg_id")))
            earlier = self._awaiting.pop(key, None)
            if earlier is not None:
                self.hold.ran(earlier[1], _UNKNOWN_OUTCOME)
            self._awaiting[key] = (connection, outcome)
            self.approved_outputs.executing(key[1], agent, key[0])
            return forwarded
        self._answer_execute(
            connection,
            message,
            subprotocol,
            errors.ApprovalPending.code,
            pending_text(outcome),
            notice=held_notice(outcome),
        )
        return None

    # -- what the kernel answers ---------------------------------------------------------

    def outgoing(self, connection: Any, stream: Any, msg_list: list[Any]) -> None:
        """Look at a message the kernel sends to a client: the ``execute_reply`` to approved
        held code journals it ``executed`` or ``failed`` (with the error's name); the outputs
        it publishes are remembered (:mod:`.approved_outputs`)."""
        if not self._awaiting and not self.approved_outputs.watching:
            return  # the person's traffic pays two checks
        channel = channel_of(stream)
        if channel not in ("shell", "iopub"):
            return
        session = connection.session
        try:
            _, fed = session.feed_identities(msg_list)
            header = session.unpack(frame_bytes(fed[1]))
            msg_type = header.get("msg_type")
            if msg_type != "execute_reply" and msg_type not in OUTPUT_TYPES:
                return
            parent_id = str(session.unpack(frame_bytes(fed[2])).get("msg_id"))
            key = (id(connection), parent_id)
            if channel == "iopub":
                if self.approved_outputs.asked_on(parent_id, id(connection)):
                    self.approved_outputs.published(
                        parent_id, msg_type, session.unpack(frame_bytes(fed[4]))
                    )
                return
            if key not in self._awaiting:
                return
            content = session.unpack(frame_bytes(fed[4]))
        except Exception:  # not a message of the kernel's: the server reports it, not us
            return
        _, lease = self._awaiting.pop(key)
        status = content.get("status") if isinstance(content, dict) else None
        if status == "ok":
            self.hold.ran(lease)
        else:
            name = content.get("ename") if isinstance(content, dict) else None
            value = content.get("evalue") if isinstance(content, dict) else None
            self.hold.ran(lease, f"{name or status or 'unknown'}: {value or ''}".rstrip(": "))

    def closed(self, connection: Any) -> None:
        """A client's connection closed: what it awaits will not be answered to it."""
        for key in [key for key in self._awaiting if key[0] == id(connection)]:
            _, lease = self._awaiting.pop(key)
            self.hold.ran(lease, _UNKNOWN_OUTCOME)

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
        notice: dict[str, Any] | None = None,
    ) -> None:
        """A well-formed failed execution: busy, error, execute_reply, idle. With ``notice``
        (held code), the output is that display_data instead of an error: the card under the
        cell, while the execute_reply still says the execution failed."""
        # Four small frames at once: without this, Nagle holds the last ones for an ACK.
        with contextlib.suppress(Exception):
            connection.websocket_handler.set_nodelay(True)
        error = {"ename": code, "evalue": text, "traceback": [text]}
        self._send(connection, "status", {"execution_state": "busy"}, message, "iopub", subprotocol)
        if notice is None:
            self._send(connection, "error", error, message, "iopub", subprotocol)
        else:
            self._send(connection, "display_data", notice, message, "iopub", subprotocol)
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
