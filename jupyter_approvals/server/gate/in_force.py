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

#: Server extensions through which an agent acts with the person's own identity and no
#: permission step of jupyter-approvals: what each does, and how to turn it off.
UNGATED_AGENT_EXTENSIONS: dict[str, tuple[str, str]] = {
    "jupyter_mcp_server": (
        "an MCP server whose agents act with the token it is given, the person's unless it "
        "is an agent token",
        "give it an agent token (jupyter approvals agent add --mcp) or run "
        "`jupyter server extension disable jupyter_mcp_server`",
    ),
    "jupyter_ai": (
        "Jupyter AI 2's chat agents act in the server as the person",
        "`jupyter server extension disable jupyter_ai`",
    ),
    "jupyter_ai_jupyternaut": (
        "Jupyternaut's tools edit notebooks, run cells and write files in the server process, "
        "with no permission step",
        "`jupyter server extension disable jupyter_ai_jupyternaut` (Jupyter AI's ACP agents stay)",
    ),
    "jupyter_server_mcp": (
        "an MCP server on its own port (c.MCPExtensionApp.mcp_port, 3001 by default) that "
        "answers without authentication; its tools edit notebooks, run cells and drive the "
        "person's browser",
        "`jupyter server extension disable jupyter_server_mcp`",
    ),
    "jupyter_ai_acp_client": (
        "Jupyter AI's ACP agents write files and run commands after an Allow bound to nothing",
        "c.ApprovalsServer.jupyter_ai_bridge = True (the default; see the jupyter_ai_bridge check)",
    ),
}


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


def gate_checks(serverapp: Any, gate: Any, gated: frozenset[str] = frozenset()) -> list[Check]:
    """``agent_gate`` (fails when the gate is not in force), ``ungated_agents`` (a warning:
    the enabled extensions of :data:`UNGATED_AGENT_EXTENSIONS` but those in ``gated``, which a
    bridge puts through the gate now) and ``cross_origin`` (fails when origin or XSRF checks
    are loosened)."""
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
    ungated = sorted(n for n in enabled if n in UNGATED_AGENT_EXTENSIONS and n not in gated)
    detail = (
        "these server extensions let agents act with the person's identity, not gated: "
        + "; ".join(f"{name} ({UNGATED_AGENT_EXTENSIONS[name][0]})" for name in ungated)
        if ungated
        else "no server extension known to run agents with the person's identity"
    )
    turn_off = {name: UNGATED_AGENT_EXTENSIONS[name][1] for name in ungated}
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
            "ungated_agents",
            True,
            detail,
            fix="; ".join(f"{name}: {how}" for name, how in turn_off.items()) or None,
            info={"warning": bool(ungated), "extensions": ungated, "turn_off": turn_off},
        ),
        origin_check,
    ]
