"""Jupyter AI's agents ask through jupyter-approvals, and do only what a person approved.

Jupyter AI 3 runs ACP agents (Claude Code, Codex, Goose, ...) as subprocesses of the server;
its ACP client (``jupyter_ai_acp_client``) asks the person in the chat when an agent asks for
permission, then writes files and runs terminals for the agent. Left alone, the chat's Allow is
bound to nothing: the agent may write other content after it, any option id is taken, and
nothing is journaled. When that client is installed, the bridge wraps four of its methods and
its permission route (docs/decisions/0011):

- ``request_permission``: each tool call becomes a server-held request of the agent gate
  (:class:`~..gate.hold.AgentHold`), its preview and fingerprint computed here from what the
  tool call will do (:mod:`.effects`); the chat shows its Allow / Reject as before; the first
  answer, from the chat or the sidebar, decides, with the reading floor, the 10 minutes and
  the journal of every held request.
- ``write_text_file`` and ``create_terminal``: carried out only on an approval of exactly
  that write or command, once (``claim``); anything else is refused and told to the agent as
  a failed call, with its APPROVAL_* code.
- ``read_text_file``: hidden places, Jupyter's own files and paths outside the root refused,
  as for an agent's token.
- the chat's ``POST ai/acp/permissions``: only an offered option, only from a person's
  browser session (the decider rule of every deciding route).
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tornado import web

from ...core import errors
from ...core.model import Lease, RequestInfo
from ...core.store.approval_store import ApprovalStore
from ...core.tool_calls import (
    ALLOW_ALWAYS,
    ALLOW_ONCE,
    ALLOWING,
    REJECT_ONCE,
    environment,
    option_of_kind,
    plan_of,
)
from ...doctor.report import Check
from ..gate.hold import AgentHold
from ..gate.identity import refuse, username_of
from ..rest.handlers import check_decider
from ..rest.refusals import RestRefusals
from .effects import AGENT_TOOL_ACTION, Where, api_path_of, held_command, held_file, held_plan

#: The channel of an answer given in Jupyter AI's chat (journal ``channel``).
CHAT_CHANNEL = "chat"
#: The methods of Jupyter AI's ACP client the bridge wraps.
WRAPPED_METHODS = ("request_permission", "write_text_file", "create_terminal", "read_text_file")
#: The JSON-RPC error code of a client call the bridge refused (its data carries the APPROVAL_*
#: code and the message).
REFUSED_RPC_CODE = -32001
#: Store events that end a pending request without a yes.
_ENDING = frozenset({"rejected", "timed_out", "withdrawn", "auto_answered", "dismissed"})


def _subclasses(cls: type) -> list[type]:
    found: list[type] = []
    sub: type
    for sub in cls.__subclasses__():
        found.append(sub)
        found.extend(_subclasses(sub))
    return found


def agent_name(persona: Any) -> str:
    """The agent identity of a Jupyter AI persona: ``jupyter-ai-<its name>``."""
    name = str(getattr(persona, "name", "") or type(persona).__name__)
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "agent"
    return f"jupyter-ai-{slug}"[:64]


@dataclass
class _Asked:
    """One permission request of one tool call, waiting for its first answer."""

    agent: str
    session_id: str
    tool_call_id: str
    request_id: str
    fingerprint: str
    options: list[dict[str, Any]]
    #: The option the agent is told (None: cancelled), set by the first answer.
    answered: asyncio.Future[str | None]
    #: The option a person chose in the chat (the sidebar's approve is "allow once").
    chosen: str | None = None
    approved: bool = False
    lease_now: bool = False


@dataclass
class JupyterAiBridge:
    """Wraps Jupyter AI's ACP client and permission route (see the module's docstring)."""

    hold: AgentHold
    root: Path
    secret_dirs: Callable[[], Iterable[Path]]
    refusals: RestRefusals
    log: logging.Logger | logging.LoggerAdapter[Any]
    _asked: dict[tuple[str, str], _Asked] = field(default_factory=dict)
    _by_request: dict[str, _Asked] = field(default_factory=dict)
    _watched: set[str] = field(default_factory=set)
    _originals: dict[str, Any] = field(default_factory=dict)
    _post: Any = None

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
        bridge = self

        @web.authenticated
        async def post(handler: Any) -> None:
            await bridge.answer_from_chat(handler)

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
        gated = getattr(self, name)

        async def wrapped(client: Any, *args: Any, **kwargs: Any) -> Any:
            return await gated(original, client, *args, **kwargs)

        wrapped.__name__ = name
        wrapped.jupyter_approvals_wrapped = True  # type: ignore[attr-defined]
        wrapped.__doc__ = f"Jupyter AI's {name}, through jupyter-approvals (bridge.py)."
        return wrapped

    # -- where and who -------------------------------------------------------------------

    def _persona(self, client: Any, session_id: str) -> Any:
        persona = client._personas_by_session.get(session_id)
        if persona is None:
            raise errors.ApprovalUnknownRequest(f"No Jupyter AI session {session_id!r}.")
        return persona

    def _where(self, persona: Any) -> Where:
        try:
            cwd = str(persona.get_chat_dir())
        except Exception:  # a persona without a chat: the root
            cwd = os.fspath(self.root)
        return Where(self.root, os.path.join(os.fspath(self.root), cwd), self.secret_dirs())

    def _store(self, agent: str) -> ApprovalStore:
        store = self.hold.store_for(agent)
        if agent not in self._watched:
            self._watched.add(agent)
            store.subscribe(self._on_store_event)
        return store

    def _refused(self, exc: errors.ApprovalError, agent: str, what: str, **fields: Any) -> Any:
        """Log and journal a client call refused here; the error the agent gets."""
        from acp import RequestError

        self.log.warning("jupyter-approvals refused %s of %s: %s", what, agent, exc.message)
        self.hold.journal_agent(
            "refused", agent, None, code=exc.code, source="jupyter-ai", attempted=what, **fields
        )
        return RequestError(
            REFUSED_RPC_CODE,
            f"{exc.code}: {exc.message}",
            {"code": exc.code, "message": exc.message},
        )

    # -- permission requests -------------------------------------------------------------

    async def request_permission(
        self, original: Any, client: Any, options: Any, session_id: str, tool_call: Any, **kw: Any
    ) -> Any:
        """Hold the tool call as a request of the agent gate; answer the agent with the first
        answer a person gives, in the chat or the sidebar."""
        from acp.schema import DeniedOutcome, RequestPermissionResponse

        cancelled = RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        persona = self._persona(client, session_id)
        agent = agent_name(persona)
        wire = tool_call.model_dump(mode="json", by_alias=True, exclude_none=True)
        offered = [o.model_dump(mode="json", by_alias=True, exclude_none=True) for o in options]
        try:
            plan = plan_of(wire)
            held = held_plan(plan, wire, self._where(persona), agent, session_id)
            store = self._store(agent)
            info = self.hold.open_write(held, agent)
        except errors.ApprovalError as exc:
            self._refused(exc, agent, "a permission request", tool_call_id=wire.get("toolCallId"))
            return cancelled
        asked = _Asked(
            agent=agent,
            session_id=session_id,
            tool_call_id=plan.tool_call_id,
            request_id=info.id,
            fingerprint=info.fingerprint,
            options=offered,
            answered=asyncio.get_running_loop().create_future(),
            lease_now=held.action == AGENT_TOOL_ACTION,
        )
        self._asked[(session_id, plan.tool_call_id)] = asked
        self._by_request[info.id] = asked
        chat = asyncio.ensure_future(original(client, options, session_id, tool_call, **kw))
        try:
            # The chat shows the tool call and its buttons before it first waits: the reading
            # floor counts from there.
            await asyncio.sleep(0)
            store.mark_shown(info.id)
            await asyncio.wait({chat, asked.answered}, return_when=asyncio.FIRST_COMPLETED)
            if asked.answered.done():
                self._tell_chat(client, asked, asked.answered.result())
            response = await chat
        finally:
            self._asked.pop((session_id, plan.tool_call_id), None)
            self._by_request.pop(info.id, None)
            if not chat.done():
                chat.cancel()
            current = store.get(info.id)
            if current is not None and current.status.value == "pending":
                # The session was cancelled or the agent went away: nothing was decided.
                store.withdraw(info.id)
        selected = getattr(response.outcome, "option_id", None)
        kinds = {o.get("optionId"): o.get("kind") for o in offered}
        if kinds.get(selected) in ALLOWING and not asked.approved:
            # Something other than a person's answer here resolved the chat's question.
            return cancelled
        if asked.approved and asked.lease_now:
            self._hand_over(store, held.action, held.fingerprint, held.slot, agent)
        return response

    def _hand_over(
        self, store: ApprovalStore, action: str, fingerprint: str, slot: str, agent: str
    ) -> None:
        """An approved action the agent carries out itself: handing the answer over is its run
        (journaled ``executed``)."""
        lease = store.claim(action, fingerprint, slot=slot, owner=agent)
        if isinstance(lease, Lease):
            store.finish(lease)

    def _tell_chat(self, client: Any, asked: _Asked, option: str | None) -> None:
        """Resolve the chat's question with the answer given (the chat then shows it)."""
        manager = client._permission_manager
        if option is not None and manager.resolve(asked.session_id, asked.tool_call_id, option):
            return
        pending = manager._pending.get((asked.session_id, asked.tool_call_id))
        if pending is not None and not pending.future.done():
            pending.future.set_result(None)

    def _on_store_event(self, event: str, info: RequestInfo, _fields: dict[str, Any]) -> None:
        asked = self._by_request.get(info.id)
        if asked is None or asked.answered.done():
            return
        if event == "approved":
            asked.approved = True
            option = asked.chosen or option_of_kind(asked.options, [ALLOW_ONCE])
            asked.answered.set_result(option)
        elif event in _ENDING:
            chosen = asked.chosen if event == "rejected" else None
            asked.answered.set_result(chosen or option_of_kind(asked.options, [REJECT_ONCE]))

    async def answer_from_chat(self, handler: Any) -> None:
        """Jupyter AI's ``POST ai/acp/permissions``: the chat's answer, as a decision of the
        held request (first answer wins; the decider rule, the floor, only offered options)."""
        body = handler.get_json_body() or {}
        session_id, tool_call_id, option_id = (
            body.get(k) for k in ("session_id", "tool_call_id", "option_id")
        )
        asked = self._asked.get((str(session_id), str(tool_call_id)))
        if asked is None:
            refuse(
                handler,
                errors.ApprovalUnknownRequest(
                    "No permission request of this tool call waits (it may have been answered "
                    "already, or ended). Nothing was decided."
                ),
            )
        option = next((o for o in asked.options if o.get("optionId") == option_id), None)
        decision = None
        try:
            check_decider(handler)
            if option is None:
                raise errors.ApprovalMalformedDecision(
                    f"{option_id!r} is not one of the options the agent offered. Nothing was "
                    "decided.",
                    offered=[o.get("optionId") for o in asked.options],
                )
            decision = "approve" if option.get("kind") in ALLOWING else "reject"
            reason = (
                "Always allow, chosen in the chat" if option.get("kind") == ALLOW_ALWAYS else ""
            )
            asked.chosen = str(option_id)
            self.hold.decide(
                asked.request_id,
                decision,
                asked.fingerprint,
                reason,
                username_of(handler.current_user) or "",
                channel=CHAT_CHANNEL,
            )
        except errors.ApprovalError as exc:
            asked.chosen = None
            if not isinstance(exc, errors.ApprovalAutoAnswered):
                self.refusals.refused(
                    exc.code,
                    sender=f"agent {username_of(handler.current_user)}"
                    if isinstance(exc, errors.ApprovalAgentForbidden)
                    else "person",
                    request_id=asked.request_id,
                    listed=True,
                    notebook_path=None,
                    channel=CHAT_CHANNEL,
                    attempted=decision,
                    held_at="server",
                    agent=asked.agent,
                )
            refuse(handler, exc)
        handler.finish({"status": "ok"})

    # -- the agent's client calls --------------------------------------------------------

    def _claim(self, agent: str, held: Any, what: str) -> Lease:
        store = self._store(agent)
        got = store.claim(held.action, held.fingerprint, slot=held.slot, owner=agent)
        if isinstance(got, Lease):
            return got
        if isinstance(got, RequestInfo):
            raise errors.ApprovalPending(
                f"{what} waits for a person's answer to its permission request; nothing ran.",
                request_id=got.id,
            )
        raise errors.ApprovalRequired(
            f"No approved permission request of this session {what}: a person approves each "
            "write and each command, exactly as it runs. Nothing ran; ask for permission first.",
        )

    async def _run(self, lease: Lease, call: Any) -> Any:
        try:
            result = await call
        except BaseException as exc:
            self.hold.ran(lease, exc)
            raise
        self.hold.ran(lease)
        return result

    async def write_text_file(
        self, original: Any, client: Any, content: str, path: str, session_id: str, **kw: Any
    ) -> Any:
        """Write only the approved content to the approved path, once."""
        agent = "jupyter-ai"
        try:
            persona = self._persona(client, session_id)
            agent = agent_name(persona)
            where = self._where(persona)
            api_path = api_path_of(path, where)
            held = held_file(api_path, content, where, agent, session_id)
            lease = self._claim(agent, held, f"writes this content to {api_path}")
        except errors.ApprovalError as exc:
            raise self._refused(exc, agent, "a file write", path=str(path)[:500]) from None
        return await self._run(lease, original(client, content, path, session_id, **kw))

    async def create_terminal(
        self,
        original: Any,
        client: Any,
        command: str,
        session_id: str,
        args: list[str] | None = None,
        cwd: str | None = None,
        env: Any = None,
        output_byte_limit: int | None = None,
        **kw: Any,
    ) -> Any:
        """Run only the approved command, where it was approved, with its environment, once."""
        agent = "jupyter-ai"
        try:
            persona = self._persona(client, session_id)
            agent = agent_name(persona)
            variables = [v.model_dump() if hasattr(v, "model_dump") else v for v in (env or [])]
            held = held_command(
                command,
                list(args or []),
                cwd,
                environment(variables),
                self._where(persona),
                agent,
                session_id,
            )
            lease = self._claim(agent, held, "runs this command")
        except errors.ApprovalError as exc:
            raise self._refused(exc, agent, "a command", command=str(command)[:500]) from None
        call = original(
            client,
            command,
            session_id,
            args=args,
            cwd=cwd,
            env=env,
            output_byte_limit=output_byte_limit,
            **kw,
        )
        return await self._run(lease, call)

    async def read_text_file(
        self, original: Any, client: Any, path: str, session_id: str, **kw: Any
    ) -> Any:
        """Read as an agent's token may: not hidden places, Jupyter's own files, or outside
        the root. Reads are never held."""
        agent = "jupyter-ai"
        try:
            persona = self._persona(client, session_id)
            agent = agent_name(persona)
            api_path_of(path, self._where(persona))
        except errors.ApprovalError as exc:
            raise self._refused(exc, agent, "a file read", path=str(path)[:500]) from None
        return await original(client, path, session_id, **kw)
