"""The agent gate: what the server lets an agent identity do, and what it holds.

One :class:`AgentGate` per server. The identity layer calls :meth:`AgentGate.admit` for every
request with an agent token (the steps of :mod:`.admission`); what an agent's
contents request changes is held at the contents manager (:mod:`.contents`); the wrapped
kernel websocket connection calls :meth:`AgentGate.screen` for every message a client sends
(:mod:`.kernel_screen`). A sweep every second ends held requests whose time is up, applies
pauses and closes the sockets of agents that were removed or paused.
"""

from __future__ import annotations

import contextlib
import json
import logging
import weakref
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from tornado import web

from ...core import errors
from ...core.agents import AgentRegistry
from ..mirror import sessions
from . import admission, routes
from . import jupyter_server_seam as seam
from .change_notices import ChangeNotices
from .hold import AgentHold
from .hub import HubContext
from .identity import refuse
from .kernel_screen import KernelScreen, Relayed
from .limits import AgentLimits
from .rooms import screen_room_messages
from .sandboxed_starts import AGENT_REQUEST


class AgentGate:
    """Everything the server decides about agent identities."""

    def __init__(
        self,
        registry: AgentRegistry,
        hold: AgentHold,
        *,
        policy: str,
        server_root: Path,
        secret_dirs: Callable[[], Iterable[Path]],
        session_manager: Any,
        log: logging.Logger | logging.LoggerAdapter[Any],
        limits: AgentLimits | None = None,
        is_sandboxed: Callable[[str], bool] = lambda _kernel: False,
        change_notices: ChangeNotices | None = None,
        relayed: Relayed | None = None,
        hub: HubContext | None = None,
    ) -> None:
        self.registry = registry
        #: The JupyterHub server this runs in (None off a hub): who hub credentials are.
        self.hub = hub
        self.hold = hold
        self.policy = policy
        self.server_root = server_root
        self._secret_dirs = secret_dirs
        self._sessions = session_manager
        self.log = log
        self.limits = limits if limits is not None else AgentLimits(32 << 20, 1200)
        self.kernels_started: dict[str, str] = {}
        self.sessions_started: dict[str, str] = {}
        self._sockets: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        self._paused: set[str] = set()
        self.kernel_screen = KernelScreen(
            registry,
            hold,
            policy,
            log,
            session_manager,
            owns_kernel=self.owns_kernel,
            agents_sessions=lambda: self.sessions_started.keys(),
            limits=self.limits,
            is_sandboxed=is_sandboxed,
            notices=change_notices,
            relayed=relayed,
        )
        self.change_notices = change_notices
        #: What every agent request passes, in order (:mod:`.admission`).
        self.admission_steps: tuple[admission.Step, ...] = (
            admission.route_step,
            admission.paths_step(server_root, secret_dirs),
            admission.body_step,
            admission.room_step,
            admission.ownership_step(
                self.owns_kernel,
                self.sessions_started.get,
                lambda session_id: sessions.kernel_of_session(self._sessions, session_id),
            ),
            admission.socket_takeover_step(self._sockets.get),
        )

    # -- HTTP and websocket upgrades -----------------------------------------------------

    def admit(self, handler: web.RequestHandler, agent: str) -> None:
        """Let agent ``agent``'s request through, or end it with a coded 403 (413 or 429
        past the agent's limits)."""
        try:
            self.limits.check_body(agent, len(handler.request.body or b""))
            self.limits.take(agent)
        except errors.ApprovalAgentOverLimit as exc:
            self.log.warning("jupyter-approvals refused agent %s: %s", agent, exc.message)
            refuse(handler, exc)
        request = admission.AgentRequest(handler, agent)
        # Marks the rest of this request's handling as the agent's (a kernel it starts runs
        # sandboxed, :mod:`.sandboxed_starts`).
        AGENT_REQUEST.set(agent)
        try:
            for step in self.admission_steps:
                step(request)
        except (errors.ApprovalAgentForbidden, errors.ApprovalNotAPerson) as exc:
            self.log.warning("jupyter-approvals refused agent %s: %s", agent, exc.message)
            # A route that decides journals an agent's attempt (decision_handlers.py).
            note = getattr(handler, "note_agent_refusal", None)
            if callable(note):
                note(agent, exc)
            refuse(handler, exc)
        if routes.handler_name(handler) == seam.ROOM_SOCKET:
            screen_room_messages(
                handler,
                agent,
                self.log,
                self.hold,
                self.limits,
                self.kernel_screen.approved_outputs.of,
            )
        self._remember_what_it_starts(handler, agent)
        if hasattr(handler, "ws_connection"):
            self._sockets[handler] = agent

    def owns_kernel(self, agent: str, kernel_id: str) -> bool:
        """Whether ``agent`` started ``kernel_id`` and no person has worked in it since."""
        return self.kernels_started.get(kernel_id) == agent

    # -- a person's requests ---------------------------------------------------------------

    def note_person(self, handler: web.RequestHandler) -> None:
        """A person's request: a kernel or session the person starts working in is no longer
        an agent's to stop, interrupt or move (it may have been made by an agent first)."""
        name = routes.handler_name(handler)
        method = (handler.request.method or "").upper()
        if name == seam.KERNEL_SOCKET or (name == seam.SESSION and method == "PATCH"):
            kernel_id = handler.path_kwargs.get("kernel_id")
            session_id = handler.path_kwargs.get("session_id")
            if session_id is not None:
                kernel_id = sessions.kernel_of_session(self._sessions, session_id)
            self._hand_over(kernel_id, session_id)
        elif name == seam.SESSIONS and method == "POST":
            # Opening a notebook whose session an agent created answers with that session.
            finish = handler.finish

            def handing_over(chunk: Any = None) -> Any:
                model = _json_object(chunk)
                kernel = model.get("kernel")
                self._hand_over(
                    kernel.get("id") if isinstance(kernel, dict) else None, model.get("id")
                )
                return finish(chunk)

            handler.finish = handing_over  # type: ignore[method-assign]

    def _hand_over(self, kernel_id: object, session_id: object) -> None:
        for started, key in (
            (self.kernels_started, kernel_id),
            (self.sessions_started, session_id),
        ):
            if isinstance(key, str) and key in started:
                agent = started.pop(key)
                self.log.info(
                    "jupyter-approvals: a person works in %s, which agent %s started; the agent "
                    "can no longer stop, interrupt or move it",
                    key,
                    agent,
                )

    def _remember_what_it_starts(self, handler: web.RequestHandler, agent: str) -> None:
        # The kernel and session ids exist only in the reply: read them from what the
        # handler finishes with, and only for kernels that did not exist before.
        name = routes.handler_name(handler)
        if (handler.request.method or "").upper() != "POST" or name not in (
            seam.KERNELS,
            seam.SESSIONS,
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
        model = _json_object(chunk)
        kernel = model.get("kernel") if "kernel" in model else model
        session_id = model.get("id") if "kernel" in model else None
        if isinstance(session_id, str) and session_id not in sessions_before:
            self.sessions_started[session_id] = agent
        started = kernel.get("id") if isinstance(kernel, dict) else None
        if isinstance(started, str) and started not in kernels_before:
            self.kernels_started[started] = agent

    def sweep(self) -> list[str]:
        """End held requests whose time is up; apply pauses; close sockets of agents gone.

        Returns the agents paused since the last look (their kernel requests are the caller's).
        """
        self.hold.sweep()
        paused = self.apply_pauses()
        for handler, agent in list(self._sockets.items()):
            if not self.registry.is_active(agent):
                self.log.info("jupyter-approvals: closing a socket of agent %s", agent)
                self._sockets.pop(handler, None)
                with contextlib.suppress(Exception):  # already closed
                    handler.close(4003, f"agent {agent} was removed or paused")
        return paused

    def apply_pauses(self, by: str | None = None, by_name: str | None = None) -> list[str]:
        """Reject the held requests of agents paused since the last look; journal each change.

        ``by`` names the person who paused or resumed from the sidebar (None: the CLI), as the
        journal records people; ``by_name`` as the reason shows them (their display name).
        Returns the agents newly paused.
        """
        try:
            records = self.registry.records()
        except errors.ApprovalError:
            return []  # an unreadable registry already refuses every agent token
        paused = {name for name, record in records.items() if record.paused}
        for agent in sorted(paused - self._paused):
            rejected = self.hold.pause(agent, by, by_name)
            self.log.info(
                "jupyter-approvals: agent %s paused; %d held requests rejected", agent, rejected
            )
        for agent in sorted(self._paused - paused):
            self.hold.journal_agent("agent_resumed", agent, by)
        newly = sorted(paused - self._paused)
        self._paused = paused
        return newly

    def screen(self, connection: Any, raw: Any) -> Any | None:
        """What to forward to the kernel for this client frame (None: nothing)."""
        return self.kernel_screen.screen(connection, raw)

    def screen_outgoing(self, connection: Any, stream: Any, msg_list: Any) -> None:
        """See a kernel's message to a client (replies to approved held code; the end of an
        execution in a sandboxed kernel)."""
        if self.change_notices is not None:
            self.change_notices.outgoing(connection, stream, msg_list)
        self.kernel_screen.outgoing(connection, stream, msg_list)

    def connection_closed(self, connection: Any) -> None:
        """A kernel websocket connection closed."""
        self.kernel_screen.closed(connection)


def _json_object(chunk: Any) -> dict[str, Any]:
    """A handler's JSON reply as an object ({} for anything else)."""
    try:
        model = json.loads(chunk)
    except (TypeError, ValueError):
        return {}
    return model if isinstance(model, dict) else {}
