"""The doctor's JupyterHub check: do the kernels of this server carry a token that reaches it?

A hub gives each single-user server a token (``JUPYTERHUB_API_TOKEN``) and its kernels inherit
it, so every cell can read it. With the hub's default server scopes that token can reach the
server's own API: code in any cell can then act there as a script of the person's (held as an
agent by jupyter-approvals, never deciding, but a credential nobody meant to hand out). The fix
is the hub's: give the server's token only the scopes it needs.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Mapping

from .report import Check

#: What jupyterhub_config.py needs so that the server's token reaches no server.
FIX = (
    'In jupyterhub_config.py set c.Spawner.server_token_scopes = ["users:activity!user"] '
    "(activity reporting keeps working), then restart the user's server."
)
#: Seconds the doctor waits for the hub.
HUB_TIMEOUT_S = 5.0


def _reaching(scopes: object, owner: str, server_name: str) -> list[str]:
    """The scopes among ``scopes`` that let a token use this server's API."""
    if not isinstance(scopes, list):
        return []
    here = {
        "access:servers",
        f"access:servers!user={owner}",
        f"access:servers!server={owner}/{server_name}",
    }
    return sorted(s for s in scopes if isinstance(s, str) and s in here)


def check_hub_kernel_token(environ: Mapping[str, str] = os.environ) -> Check:
    """``hub_kernel_token``: fails when this server's token, which its kernels inherit, can
    reach the server (asks the hub which scopes it has)."""
    owner = environ.get("JUPYTERHUB_USER", "")
    if not owner:
        return Check("hub_kernel_token", True, "not a JupyterHub server")
    token = environ.get("JUPYTERHUB_API_TOKEN", "")
    if not token:
        return Check("hub_kernel_token", True, "the kernels inherit no JupyterHub token")
    api = environ.get("JUPYTERHUB_API_URL", "").rstrip("/")
    request = urllib.request.Request(f"{api}/user", headers={"Authorization": f"token {token}"})
    try:
        with urllib.request.urlopen(request, timeout=HUB_TIMEOUT_S) as response:
            model = json.loads(response.read().decode("utf-8"))
    except (OSError, ValueError, urllib.error.URLError) as exc:
        return Check(
            "hub_kernel_token",
            False,
            f"could not ask the hub at {api} which scopes the kernels' token has: {exc}",
            fix=FIX,
        )
    scopes = model.get("scopes") if isinstance(model, dict) else None
    reaching = _reaching(scopes, owner, environ.get("JUPYTERHUB_SERVER_NAME", ""))
    if not reaching:
        return Check(
            "hub_kernel_token",
            True,
            "the JupyterHub token the kernels inherit cannot reach this server",
            info={"scopes": scopes if isinstance(scopes, list) else []},
        )
    return Check(
        "hub_kernel_token",
        False,
        "every kernel of this server inherits JUPYTERHUB_API_TOKEN, which reaches this "
        f"server ({', '.join(reaching)}): any cell can read it and use the server's API (it "
        "never decides here, and what it sends is held as an agent's)",
        fix=FIX,
        info={"scopes": scopes},
    )
