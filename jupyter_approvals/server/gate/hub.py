"""JupyterHub credentials at the server: who each request is, by the rule of
:mod:`jupyter_approvals.core.hub_identity`.

A single-user server of a hub identifies each request through the hub (its identity provider
keeps the hub's user model as ``user.hub_user``). :class:`HubContext` knows the server's owner,
its name and its own token (``JUPYTERHUB_*`` in the server's environment, set by the spawner);
off a hub there is none and nothing here applies.
"""

from __future__ import annotations

import hmac
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tornado import web

from ...core.hub_identity import HubIdentity, HubRole, judge_hub_user

#: Where a request's hub identity is kept on its handler, once judged.
HUB_IDENTITY_ATTRIBUTE = "_jupyter_approvals_hub_identity"


@dataclass(frozen=True)
class HubContext:
    """The single-user server this extension runs in, as the hub spawned it."""

    owner: str
    server_name: str
    without_session: str
    own_token: str

    @classmethod
    def from_environment(
        cls, without_session: str, environ: Mapping[str, str] | None = None
    ) -> HubContext | None:
        """The context of a hub-spawned server (``JUPYTERHUB_USER`` set), else None."""
        environ = os.environ if environ is None else environ
        owner = environ.get("JUPYTERHUB_USER", "")
        if not owner:
            return None
        return cls(
            owner,
            environ.get("JUPYTERHUB_SERVER_NAME", ""),
            without_session,
            environ.get("JUPYTERHUB_API_TOKEN", ""),
        )

    def judge(self, handler: web.RequestHandler, user: Any, token: str) -> HubIdentity | None:
        """The hub identity of ``handler``'s request by ``user`` (None: not a hub user),
        kept on the handler for the deciding routes and the kernel websocket screen."""
        model = getattr(user, "hub_user", None)
        if not isinstance(model, Mapping):
            return None
        own = bool(self.own_token) and hmac.compare_digest(
            token.encode("utf-8", "replace"), self.own_token.encode("utf-8", "replace")
        )
        identity = judge_hub_user(
            model, self.owner, self.server_name, self.without_session, servers_own_token=own
        )
        setattr(handler, HUB_IDENTITY_ATTRIBUTE, identity)
        return identity


def hub_identity(handler: Any) -> HubIdentity | None:
    """The hub identity judged for ``handler``'s request, if any."""
    identity = getattr(handler, HUB_IDENTITY_ATTRIBUTE, None)
    return identity if isinstance(identity, HubIdentity) else None


def watcher_reason(handler: Any) -> str | None:
    """Why ``handler``'s request may work here but not decide (a hub credential that is not
    the owner's browser session), or None when it is not such a request."""
    identity = hub_identity(handler)
    if identity is None or identity.role is not HubRole.WATCHES:
        return None
    return identity.why
