"""The doctor's checks of the agent gate, made inside the running server (``GET doctor``).

Another extension or a configuration file can put the plain identity provider, authorizer or
kernel websocket connection back after this extension wrapped them: these checks look at the
objects really in force, not at the configuration.
"""

from __future__ import annotations

from typing import Any

from ...doctor.report import Check
from ..sandbox.provisioner import sandbox_unavailable
from ..sandbox.settings import SANDBOX_SETTING
from . import jupyter_server_seam

#: Server extensions through which an agent acts with the person's own identity.
UNGATED_AGENT_EXTENSIONS = ("jupyter_mcp_server", "jupyter_ai", "jupyter_ai_jupyternaut")


def loosened_origin_checks(serverapp: Any) -> list[str]:
    """The server settings that let pages of other sites call it with a person's session."""
    found = []
    if getattr(serverapp, "allow_origin", "") == "*":
        found.append('allow_origin is "*"')
    if getattr(serverapp, "allow_origin_pat", ""):
        found.append(f"allow_origin_pat is {serverapp.allow_origin_pat!r}")
    if getattr(serverapp, "disable_check_xsrf", False):
        found.append("disable_check_xsrf is True")
    return found


def _wrapped(value: object) -> bool:
    # The identity provider and authorizer instances are wrapped; the connection is a class.
    return bool(getattr(value, "jupyter_approvals_wrapped", False))


def policy_in_force(serverapp: Any, policy: str) -> dict[str, Any]:
    """The agent code ``policy`` and what it amounts to on this server: ``sandbox`` works as
    ``ask`` where no sandboxed kernel can start, and ``unavailable`` says why."""
    unavailable = None
    if policy == "sandbox":
        settings = getattr(serverapp.web_app, "settings", {}).get(SANDBOX_SETTING)
        bwrap = getattr(settings, "configured_bwrap", "")
        unavailable = sandbox_unavailable(serverapp.kernel_spec_manager, bwrap)
    return {
        "policy": policy,
        "effective_policy": "ask" if unavailable is not None else policy,
        "unavailable": unavailable,
    }


def gate_checks(serverapp: Any, gate: Any) -> list[Check]:
    """``agent_gate`` (fails when the gate is not in force), ``ungated_agents`` (a warning) and
    ``cross_origin`` (fails when origin or XSRF checks are loosened)."""
    settings = serverapp.web_app.settings
    problems = []
    if not serverapp.identity_provider.auth_enabled:
        problems.append("the server has no authentication, so agent tokens are refused")
    if not _wrapped(settings.get("identity_provider", serverapp.identity_provider)):
        problems.append("the identity provider in force is not the agent-aware one")
    if not _wrapped(settings.get("authorizer", serverapp.authorizer)):
        problems.append("the authorizer in force is not the agent-aware one")
    if not _wrapped(settings.get("kernel_websocket_connection_class")):
        problems.append("the kernel websocket connection class in force is not the gated one")
    unreadable = gate.registry.problem
    if unreadable is not None:
        problems.append(unreadable.message)
    unknown = jupyter_server_seam.missing()
    if unknown:
        problems.append(
            "the installed jupyter_server or jupyter-collaboration no longer has names the gate "
            f"relies on ({', '.join(unknown)}): agents may be refused routes they need, or a "
            "check may not apply"
        )
    if problems:
        gate_check = Check(
            "agent_gate",
            False,
            "; ".join(problems) + ".",
            fix="Run the server with a token or password, and do not configure another identity "
            "provider, authorizer or kernel websocket connection after jupyter-approvals. For "
            "names the installed versions lack, install the versions the README lists as "
            "supported.",
            info={"policy": gate.policy},
        )
    else:
        effective = policy_in_force(serverapp, gate.policy)["effective_policy"]
        gate_check = Check(
            "agent_gate",
            True,
            f"agent identities are told apart and agent code policy is '{gate.policy}'"
            + (" (no boundary against agent code)" if gate.policy == "protected-only" else "")
            + (
                ", which holds agent code per cell here: sandboxed kernels cannot run (see the "
                "sandbox check)"
                if effective != gate.policy
                else ""
            ),
            info={"policy": gate.policy, "effective_policy": effective},
        )
    enabled = set(getattr(serverapp.extension_manager, "extensions", {}) or {})
    enabled |= {name for name, on in (serverapp.jpserver_extensions or {}).items() if on}
    ungated = sorted(name for name in enabled if name in UNGATED_AGENT_EXTENSIONS)
    detail = (
        f"these server extensions let agents act with the person's identity, not gated: "
        f"{', '.join(ungated)}"
        if ungated
        else "no server extension known to run agents with the person's identity"
    )
    loosened = loosened_origin_checks(serverapp)
    origin_check = Check(
        "cross_origin",
        not loosened,
        (
            "; ".join(loosened)
            + ": a page of another site could act with the person's browser session"
            if loosened
            else "origin and XSRF checks are as jupyter_server sets them"
        ),
        fix=(
            "Unset ServerApp.allow_origin / allow_origin_pat (or name exact origins in "
            "allow_origin) and leave ServerApp.disable_check_xsrf False."
            if loosened
            else None
        ),
        info={"loosened": loosened},
    )
    return [
        gate_check,
        Check(
            "ungated_agents", True, detail, info={"warning": bool(ungated), "extensions": ungated}
        ),
        origin_check,
    ]
