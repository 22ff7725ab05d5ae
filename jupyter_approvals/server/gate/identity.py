"""Agent identities at the server: the wrapped identity provider and authorizer.

A request whose token is a registered agent's (core/agents.py) is that agent: an
:class:`AgentUser`, told apart by its type, never by a name a person could also have. It is
token-authenticated (no XSRF cookie needed) and never gets a login cookie, and it reaches
only the routes of :mod:`.routes`; every other request goes to the identity provider
and authorizer that were configured, unchanged. Both are wrapped, not replaced: the instances
jupyter_server created (of whatever class it chose) get agent-aware methods.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, NoReturn

from jupyter_server.auth.authorizer import Authorizer
from jupyter_server.auth.identity import IdentityProvider, User
from tornado import web

from ...core import errors
from ...core.hub_identity import HubRole
from ..api import coded_error_body

#: Key of the :class:`~.agent_gate.AgentGate` in the web application's settings.
GATE_SETTING = "jupyter_approvals.agent_gate"


@dataclass
class AgentUser(User):
    """The user of a request made with an agent's token."""

    agent: str = ""


def agent_user(name: str) -> AgentUser:
    """The identity of agent ``name`` (its username cannot be a token-less person's)."""
    return AgentUser(
        username=f"agent:{name}",
        name=f"agent {name}",
        display_name=f"agent {name}",
        initials="AG",
        agent=name,
    )


def username_of(user: object) -> str | None:
    """The username of a request's user, if it has one."""
    name = getattr(user, "username", None)
    return name if isinstance(name, str) else None


def display_name_of(user: object) -> str | None:
    """The name a person's user goes by in JupyterLab ("Anonymous Io" without login)."""
    name = getattr(user, "display_name", None)
    return name if isinstance(name, str) and name else None


def is_agent(user: object) -> bool:
    """True for the identity of an agent, by type."""
    return isinstance(user, AgentUser)


def refuse(handler: web.RequestHandler, error: errors.ApprovalError) -> NoReturn:
    """End ``handler``'s request now with a coded JSON error and its status (works from
    ``prepare``, in any handler, upstream ones included)."""
    raise web.Finish(coded_error_body(handler, error))


async def _agent_aware_get_user(
    provider: Any, base_get_user: Any, handler: web.RequestHandler
) -> User | None:
    """The agent of an agent token (admitted by the gate), else whoever ``provider`` finds."""
    gate = handler.settings.get(GATE_SETTING)
    token = provider.get_token(handler) if gate is not None else None
    record = gate.registry.match(token) if gate is not None and token else None
    if gate is None or record is None:
        user = base_get_user(handler)
        if inspect.isawaitable(user):
            user = await user
        if gate is None or user is None:
            return user  # type: ignore[no-any-return]
        hub = gate.hub.judge(handler, user, token or "") if gate.hub is not None else None
        if hub is None or hub.role is not HubRole.AGENT or hub.agent is None:
            gate.note_person(handler)
            return user  # type: ignore[no-any-return]
        # A hub credential taken for an agent: the hub checked it; the gate holds it.
        try:
            record = gate.registry.hub_agent(hub.agent)
        except errors.ApprovalError as exc:
            refuse(handler, exc)
    if not provider.auth_enabled:
        refuse(
            handler,
            errors.ApprovalNoServerAuth(
                "This server runs without authentication, so agent tokens mean nothing "
                "here and are refused. Start it with a token or a password."
            ),
        )
    if record.paused:
        refuse(
            handler,
            errors.ApprovalAgentPaused(
                f"The person paused agent {record.name}: nothing it sends is taken until "
                "they resume it. Stop and tell the person.",
                agent=record.name,
            ),
        )
    gate.admit(handler, record.name)
    # Token-authenticated: no XSRF cookie needed, origin checks as for scripts.
    handler._token_authenticated = True  # type: ignore[attr-defined]
    return agent_user(record.name)


def make_agent_aware(provider: IdentityProvider) -> bool:
    """Make the identity provider jupyter_server created know agent tokens (once).

    The instance is wrapped, not its class: whatever class jupyter_server chose (the
    configured one, or ``LegacyIdentityProvider`` for a ``ServerApp.login_handler_class``
    configuration, which it picks only while the default class is in place) stays exactly that
    class, with its own setup. Returns whether it had to.
    """
    if getattr(provider, "jupyter_approvals_wrapped", False):
        return False
    base_get_user = provider.get_user

    async def get_user(handler: web.RequestHandler) -> User | None:
        return await _agent_aware_get_user(provider, base_get_user, handler)

    get_user.__doc__ = "The agent of an agent token, else whoever the provider finds."
    provider.get_user = get_user  # type: ignore[method-assign]
    provider.jupyter_approvals_wrapped = True  # type: ignore[attr-defined]
    return True


def narrow_for_agents(authorizer: Authorizer) -> bool:
    """Make the authorizer jupyter_server created refuse agents every resource outside their
    allowlist, and ask it for everything else (once). Returns whether it had to."""
    if getattr(authorizer, "jupyter_approvals_wrapped", False):
        return False
    base_is_authorized = authorizer.is_authorized

    def is_authorized(handler: Any, user: User, action: str, resource: str) -> Any:
        if is_agent(user):
            from .routes import agent_may

            if not agent_may(resource, action):
                return False
        return base_is_authorized(handler, user, action, resource)

    is_authorized.__doc__ = "Agents only within their allowlist; everyone else as configured."
    authorizer.is_authorized = is_authorized  # type: ignore[method-assign]
    authorizer.jupyter_approvals_wrapped = True  # type: ignore[attr-defined]
    return True


def wrap_kernel_connection(base: type[Any]) -> type[Any]:
    """A subclass of the kernel websocket connection class whose incoming frames pass the gate.

    Every frame a client sends goes through :meth:`~.agent_gate.AgentGate.screen` first: what
    it returns is handed to ``base`` unchanged in protocol; None means nothing reaches the
    kernel. Without a gate in the settings nothing is forwarded (fail closed).
    """
    if getattr(base, "jupyter_approvals_wrapped", False):
        return base

    def handle_incoming_message(self: Any, incoming_msg: Any) -> Any:
        gate = self.websocket_handler.settings.get(GATE_SETTING)
        if gate is None:
            return None
        forwarded = gate.screen(self, incoming_msg)
        if forwarded is None:
            return None
        return base.handle_incoming_message(self, forwarded)

    def handle_outgoing_message(self: Any, stream: Any, outgoing_msg: Any) -> Any:
        gate = self.websocket_handler.settings.get(GATE_SETTING)
        if gate is not None:
            gate.screen_outgoing(self, stream, outgoing_msg)
        return base.handle_outgoing_message(self, stream, outgoing_msg)

    def disconnect(self: Any) -> Any:
        gate = self.websocket_handler.settings.get(GATE_SETTING)
        if gate is not None:
            gate.connection_closed(self)
        return base.disconnect(self)

    handle_incoming_message.__doc__ = (
        "Screen a client's frame, then forward what the gate lets through."
    )
    handle_outgoing_message.__doc__ = "Let the gate see the kernel's replies, then send them on."
    disconnect.__doc__ = "Tell the gate this client is gone, then disconnect."
    namespace = {
        "handle_incoming_message": handle_incoming_message,
        "handle_outgoing_message": handle_outgoing_message,
        "disconnect": disconnect,
        "jupyter_approvals_wrapped": True,
    }
    return type(f"AgentGated{base.__name__}", (base,), namespace)
