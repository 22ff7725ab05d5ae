"""Jupyter AI's agents ask through jupyter-approvals, and do only what a person approved.

Jupyter AI 3 runs ACP agents (Claude Code, Codex, Goose, ...) as subprocesses of the server;
its ACP client (``jupyter_ai_acp_client``) asks the person in the chat when an agent asks for
permission, then writes files and runs terminals for the agent. Left alone, the chat's Allow is
bound to nothing: the agent may write other content after it, any option id is taken, and
nothing is journaled. When that client is installed, the bridge wraps four of its methods and
its permission route (docs/decisions/0011):

- ``request_permission`` (:mod:`.permissions`): each tool call becomes a server-held request
  of the agent gate (:class:`~..gate.hold.AgentHold`), its preview and fingerprint computed
  from what the tool call will do (:mod:`.effects`); the chat shows its Allow / Reject as
  before; the first answer, from the chat or the sidebar, decides, with the reading floor,
  the 10 minutes and the journal of every held request.
- ``write_text_file`` and ``create_terminal`` (:mod:`.client_calls`): carried out only on an
  approval of exactly that write or command, once; anything else is refused and told to the
  agent as a failed call, with its APPROVAL_* code.
- ``read_text_file``: hidden places, Jupyter's own files and paths outside the root refused,
  as for an agent's token.
- the chat's ``POST ai/acp/permissions``: only an offered option, only from a person's
  browser session (the decider rule of every deciding route).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tornado import web

from ...doctor.report import Check
from .client_calls import ClientCalls
from .context import BridgeContext
from .permissions import PermissionRequests

#: The methods of Jupyter AI's ACP client the bridge wraps.
WRAPPED_METHODS = ("request_permission", "write_text_file", "create_terminal", "read_text_file")


def _subclasses(cls: type) -> list[type]:
    found: list[type] = []
    sub: type
    for sub in cls.__subclasses__():
        found.append(sub)
        found.extend(_subclasses(sub))
    return found


@dataclass
class JupyterAiBridge:
    """Wraps Jupyter AI's ACP client and permission route (see the module's docstring)."""

    context: BridgeContext
    _originals: dict[str, Any] = field(default_factory=dict)
    _post: Any = None

    def __post_init__(self) -> None:
        self.permissions = PermissionRequests(self.context)
        self.calls = ClientCalls(self.context)

    # -- install -------------------------------------------------------------------------

    def install(self) -> bool:
        """Wrap Jupyter AI's ACP client and permission route; False when it is not installed."""
        try:
            from jupyter_ai_acp_client.default_acp_client import JaiAcpClient
            from jupyter_ai_acp_client.routes import PermissionHandler
        except ImportError:
            return False
        if getattr(JaiAcpClient, "__jupyter_approvals_bridge__", None) is not None:
            return True
        for name in WRAPPED_METHODS:
            self._originals[name] = JaiAcpClient.__dict__[name]
            setattr(JaiAcpClient, name, self._wrapper(name, self._originals[name]))
        self._originals["post"] = PermissionHandler.__dict__["post"]
        permissions = self.permissions

        @web.authenticated
        async def post(handler: Any) -> None:
            await permissions.answer_from_chat(handler)

        PermissionHandler.post = self._post = post
        JaiAcpClient.__jupyter_approvals_bridge__ = self
        return True

    def uninstall(self) -> None:
        """Put Jupyter AI's own methods back (the extension stops)."""
        if not self._originals:
            return
        from jupyter_ai_acp_client.default_acp_client import JaiAcpClient
        from jupyter_ai_acp_client.routes import PermissionHandler

        for name in WRAPPED_METHODS:
            setattr(JaiAcpClient, name, self._originals[name])
        PermissionHandler.post = self._originals["post"]
        JaiAcpClient.__jupyter_approvals_bridge__ = None
        self._originals.clear()

    def problems(self) -> list[str]:
        """What keeps the bridge from being in force now (empty: it is)."""
        try:
            from jupyter_ai_acp_client.default_acp_client import JaiAcpClient
            from jupyter_ai_acp_client.routes import PermissionHandler
        except ImportError:
            return ["Jupyter AI's ACP client is not installed"]
        found = []
        if getattr(JaiAcpClient, "__jupyter_approvals_bridge__", None) is not self:
            found.append("the bridge is not installed")
        else:
            for name in WRAPPED_METHODS:
                if not getattr(getattr(JaiAcpClient, name), "jupyter_approvals_wrapped", False):
                    found.append(f"JaiAcpClient.{name} was replaced after the bridge wrapped it")
            if PermissionHandler.post is not self._post:
                found.append("the permission route was replaced after the bridge wrapped it")
            for subclass in _subclasses(JaiAcpClient):
                overridden = sorted(set(WRAPPED_METHODS) & set(vars(subclass)))
                if overridden:
                    found.append(
                        f"{subclass.__module__}.{subclass.__qualname__} overrides "
                        f"{', '.join(overridden)}: its agents bypass the bridge"
                    )
            for name in ("_permission_manager", "_personas_by_session"):
                if name not in JaiAcpClient.__init__.__code__.co_names:
                    found.append(f"this Jupyter AI no longer has JaiAcpClient.{name}")
        return found

    def gated_extensions(self) -> frozenset[str]:
        """The server extensions whose agents go through the gate now (for the doctor)."""
        return frozenset() if self.problems() else frozenset({"jupyter_ai_acp_client"})

    def check(self, enabled: bool) -> Check:
        """The doctor's ``jupyter_ai_bridge`` check: whether Jupyter AI's agents ask and act
        through the gate here."""
        problems = self.problems()
        if problems == ["Jupyter AI's ACP client is not installed"]:
            return Check(
                "jupyter_ai_bridge", True, "Jupyter AI 3 is not installed", info={"in_force": False}
            )
        if not problems:
            return Check(
                "jupyter_ai_bridge",
                True,
                "Jupyter AI's agents ask through jupyter-approvals: each permission request is "
                "held with its diff or command, and their writes and commands run only as "
                "approved",
                info={"in_force": True},
            )
        if not enabled:
            problems = ["c.ApprovalsServer.jupyter_ai_bridge is False"]
        return Check(
            "jupyter_ai_bridge",
            False,
            "Jupyter AI's agents write files and run commands unchecked: " + "; ".join(problems),
            fix="Set c.ApprovalsServer.jupyter_ai_bridge = True (the default), load no other "
            "extension that replaces Jupyter AI's ACP client methods, and use a Jupyter AI "
            "version the README lists as supported.",
            info={"in_force": False, "problems": problems},
        )

    def _wrapper(self, name: str, original: Any) -> Any:
        gated = getattr(self.permissions if name == "request_permission" else self.calls, name)

        async def wrapped(client: Any, *args: Any, **kwargs: Any) -> Any:
            return await gated(original, client, *args, **kwargs)

        wrapped.__name__ = name
        wrapped.jupyter_approvals_wrapped = True  # type: ignore[attr-defined]
        wrapped.__doc__ = f"Jupyter AI's {name}, through jupyter-approvals (bridge.py)."
        return wrapped
