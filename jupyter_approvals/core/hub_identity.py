"""Who a JupyterHub credential is to jupyter-approvals: the person, someone watching, an agent.

On a hub, every request to a single-user server carries a hub token, and the hub says whose
it is (its user model: ``kind``, ``name``, ``session_id``, ``token_id``, ``scopes``). Only
the token a browser got by logging in carries a ``session_id``; the server's own token, the
kernel's (the same, inherited), tokens from the hub's token page and services' tokens carry
none. The rule here, pure and in one place:

- **decides**: the owner's browser session, or any credential the admin granted
  :data:`DECIDE_SCOPE` for this server;
- **agent**: a credential granted :data:`AGENT_SCOPE`, and (by default) every other
  credential without a browser session; it is held and never decides, like a registered
  agent;
- **watches**: another user's browser session (an admin opening the server, a user it is
  shared with): it works in the server as before and cannot decide.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final

#: The custom scope an admin grants to credentials that may decide on a user's server.
DECIDE_SCOPE: Final = "custom:jupyter-approvals:decide"
#: The custom scope that marks a hub token as an agent's.
AGENT_SCOPE: Final = "custom:jupyter-approvals:agent"
#: What tokens without a browser session and without either scope are taken for.
WITHOUT_SESSION_CHOICES: Final = ("agent", "watcher")


class HubRole(Enum):
    """What a hub credential may do here."""

    DECIDES = "decides"
    WATCHES = "watches"
    AGENT = "agent"


@dataclass(frozen=True)
class HubIdentity:
    """A hub credential as jupyter-approvals takes it."""

    role: HubRole
    #: The agent name for :attr:`HubRole.AGENT` (``hub-<user>-<token id>``), else None.
    agent: str | None
    #: Why, in words for the journal and an error message.
    why: str


def _granted(scopes: object, scope: str, owner: str, server_name: str) -> bool:
    """Whether ``scopes`` (the hub's expanded list) grant ``scope`` on this server: without a
    filter, or filtered to the owner (``!user=owner``) or to this server."""
    if not isinstance(scopes, list | tuple):
        return False
    here = {scope, f"{scope}!user={owner}", f"{scope}!server={owner}/{server_name}"}
    return any(isinstance(s, str) and s in here for s in scopes)


def hub_agent_name(model: Mapping[str, Any]) -> str:
    """The agent name of a hub credential: ``hub-``, its owner and its token id, folded into
    the agent name alphabet (lower case, digits, ``-``, ``_``; 40 characters)."""
    owner = re.sub(r"[^a-z0-9_-]+", "-", str(model.get("name") or "unknown").lower()).strip("-")
    token = re.sub(r"[^a-z0-9_-]+", "-", str(model.get("token_id") or "token").lower()).strip("-")
    token = token[:12] or "token"
    return f"hub-{(owner or 'unknown')[: 40 - 5 - len(token)]}-{token}"


def judge_hub_user(
    model: Mapping[str, Any],
    owner: str,
    server_name: str = "",
    without_session: str = "agent",
    servers_own_token: bool = False,
) -> HubIdentity:
    """What the hub credential described by ``model`` may do on ``owner``'s server
    ``server_name`` ("" for the default server). ``without_session`` (one of
    :data:`WITHOUT_SESSION_CHOICES`) says what a credential with no browser session and
    neither custom scope is taken for. ``servers_own_token`` says the request carries the
    server's own token (which its kernels inherit): it never decides, whatever its scopes."""
    if without_session not in WITHOUT_SESSION_CHOICES:
        raise ValueError(f"without_session must be one of {WITHOUT_SESSION_CHOICES}")
    scopes = model.get("scopes")
    who = f"{model.get('kind') or 'user'} {model.get('name')!s}"
    session = model.get("session_id")
    has_session = isinstance(session, str) and bool(session)
    if servers_own_token:
        why = "the server's own token (its kernels inherit it)"
        if without_session == "agent":
            return HubIdentity(HubRole.AGENT, hub_agent_name(model), why)
        return HubIdentity(HubRole.WATCHES, None, why)
    if _granted(scopes, AGENT_SCOPE, owner, server_name):
        return HubIdentity(
            HubRole.AGENT, hub_agent_name(model), f"{who}'s token carries {AGENT_SCOPE}"
        )
    if has_session and model.get("kind", "user") == "user" and model.get("name") == owner:
        return HubIdentity(HubRole.DECIDES, None, f"the browser session of {owner}")
    if _granted(scopes, DECIDE_SCOPE, owner, server_name):
        return HubIdentity(HubRole.DECIDES, None, f"{who} was granted {DECIDE_SCOPE}")
    if has_session:
        return HubIdentity(
            HubRole.WATCHES, None, f"the browser session of {who}, not of {owner}, the owner"
        )
    if without_session == "agent":
        return HubIdentity(
            HubRole.AGENT, hub_agent_name(model), f"a token of {who} without a browser session"
        )
    return HubIdentity(HubRole.WATCHES, None, f"a token of {who} without a browser session")
