"""The steps an agent's HTTP request or websocket upgrade passes before any handler runs.

:meth:`.agent_gate.AgentGate.admit` runs them in order; the first that refuses ends the
request with ``APPROVAL_AGENT_FORBIDDEN`` and nothing was done. Each step judges one thing:
the route, the paths the request names, whether its body reads as the handler will read it,
the kind of collaboration room, ownership of what it stops or moves, and another client's
kernel socket. A new rule is one more step (CONTRIBUTING.md, "Adding an agent-gate rule").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tornado import web

from ...core import errors
from . import jupyter_server_seam as seam
from . import routes
from .held_room_edits import room_kind
from .hub import hub_identity
from .rooms import socket_room_kind


@dataclass(frozen=True)
class AgentRequest:
    """One request of an agent identity, as the steps read it."""

    handler: web.RequestHandler
    agent: str

    @property
    def name(self) -> str:
        """The class name of the upstream handler serving it (:mod:`.jupyter_server_seam`)."""
        return routes.handler_name(self.handler)

    @property
    def method(self) -> str:
        """The HTTP method, upper case."""
        return (self.handler.request.method or "").upper()


#: One step: returns when the request may go on, raises ``ApprovalAgentForbidden`` if not.
Step = Callable[[AgentRequest], None]


def route_step(request: AgentRequest) -> None:
    """Only the routes of :mod:`.routes` are open to agents. A hub credential taken for an
    agent that tries a deciding route is told it is not the person (APPROVAL_NOT_A_PERSON)."""
    try:
        routes.check_route(request.handler)
    except errors.ApprovalAgentForbidden as exc:
        identity = hub_identity(request.handler)
        if identity is None or not callable(getattr(request.handler, "note_agent_refusal", None)):
            raise
        raise errors.ApprovalNotAPerson(
            "On this JupyterHub server only its owner's browser session decides; this "
            f"request came with {identity.why}. Nothing was decided.",
            why=identity.why,
        ) from exc


def paths_step(server_root: Path, secret_dirs: Callable[[], Iterable[Path]]) -> Step:
    """No path the request names may be hidden, Jupyter's own or outside the server root."""

    def step(request: AgentRequest) -> None:
        for path in routes.request_paths(request.handler):
            why = routes.secret_path_reason(path, server_root, secret_dirs())
            if why is not None:
                raise routes.forbidden(
                    f"Agents may not touch {path!r}: {why}. Nothing was done.", path=path
                )

    return step


def body_step(request: AgentRequest) -> None:
    """A body the gate cannot read as the handler will is refused (paths are read from it)."""
    if not request.handler.request.body:
        return
    try:
        routes.json_body(request.handler.request.body)
    except (ValueError, UnicodeDecodeError):
        raise routes.forbidden(
            "The body is not a JSON object the gate can read exactly as the server would. "
            "Nothing was done.",
        ) from None


def room_step(request: AgentRequest) -> None:
    """Only notebook and text-file collaboration rooms: a room saves what is typed into it
    through the contents manager, inside the server. Notebook rooms are screened and text
    rooms held; a room of another kind (a binary file's, say) would be an unheld write."""
    handler = request.handler
    if request.name == seam.ROOM_SESSION and request.method == "PUT":
        try:
            body = routes.json_body(handler.request.body)
        except (ValueError, UnicodeDecodeError):
            body = {}
        kind = room_kind(f"{body.get('format')}:{body.get('type')}:")
    elif request.name == seam.ROOM_SOCKET:
        kind = socket_room_kind(handler)
    else:
        return
    if kind == "document":
        raise routes.forbidden(
            "Agents may open collaboration rooms for notebooks and for text files only "
            "(a text file's edits are held for a person). Write other files through the "
            "contents API, where the write is held. Nothing was done.",
        )


def ownership_step(
    owns_kernel: Callable[[str, str], bool],
    session_owner: Callable[[str], str | None],
    kernel_of_session: Callable[[str], str | None],
) -> Step:
    """An agent stops, restarts, interrupts, moves or attaches to only kernels and sessions
    it started and nobody else works in."""

    def step(request: AgentRequest) -> None:
        agent, name, method = request.agent, request.name, request.method
        kwargs = request.handler.path_kwargs
        if name in (seam.KERNEL, seam.KERNEL_ACTION):
            acts = method == "DELETE" or kwargs.get("action") in ("restart", "interrupt")
            kernel_id = kwargs.get("kernel_id", "")
            if acts and not owns_kernel(agent, kernel_id):
                raise routes.forbidden(
                    f"Agents may shut down, restart or interrupt only kernels they started and "
                    f"nobody else works in; {kernel_id} is not one of agent {agent}'s. Nothing "
                    "was done.",
                    kernel_id=kernel_id,
                )
        if (name, method) in ((seam.SESSIONS, "POST"), (seam.SESSION, "PATCH")):
            # A session on someone else's kernel would name a path of the agent's choosing
            # for it (what held code says it runs in) and, once moved, stop it.
            kernel = routes.json_body(request.handler.request.body).get("kernel")
            attached = kernel.get("id") if isinstance(kernel, dict) else None
            if attached is not None and not owns_kernel(agent, str(attached)):
                raise routes.forbidden(
                    f"Agents may attach sessions only to kernels they started; {attached} is "
                    f"not one of agent {agent}'s. Ask for a new kernel by name. Nothing was done.",
                    kernel_id=str(attached),
                )
        if name == seam.SESSION and method in ("DELETE", "PATCH"):
            # Deleting a session, or moving it to another kernel, shuts its kernel down: the
            # session and its kernel must both be the agent's.
            session_id = kwargs.get("session_id", "")
            its_kernel = kernel_of_session(session_id)
            if session_owner(session_id) != agent or (
                its_kernel is not None and not owns_kernel(agent, its_kernel)
            ):
                raise routes.forbidden(
                    f"Agents may change or delete only sessions they started, on kernels they "
                    f"started; {session_id} is not one of agent {agent}'s. Nothing was done.",
                    session_id=session_id,
                )

    return step


def socket_takeover_step(socket_owner: Callable[[Any], str | None]) -> Step:
    """jupyter_server closes an open kernel websocket when another one arrives with the same
    session_id ("a client reconnecting"): an agent must not knock a person off."""

    def step(request: AgentRequest) -> None:
        if request.name != seam.KERNEL_SOCKET:
            return
        from jupyter_server.services.kernels.connection.channels import (
            ZMQChannelsWebsocketConnection,
        )

        handler = request.handler
        key = f"{handler.path_kwargs.get('kernel_id', '')}:{handler.get_argument('session_id', '')}"
        holder = ZMQChannelsWebsocketConnection._open_sessions.get(key)
        if holder is not None and socket_owner(holder) != request.agent:
            raise routes.forbidden(
                "Another client's connection to this kernel uses this session_id; agents may "
                "not take it over. Connect with a session_id of your own.",
            )

    return step
