"""Jupyter AI's permission requests as held requests of the agent gate, answered from the
chat or the sidebar, whichever answers first (docs/protocol.md 8.2, 8.3)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from ...core import errors
from ...core.model import Lease, RequestInfo
from ...core.store.approval_store import ApprovalStore
from ...core.tool_calls import (
    ALLOW_ALWAYS,
    ALLOW_ONCE,
    ALLOWING,
    REJECT_ONCE,
    option_of_kind,
    plan_of,
)
from ..gate.identity import refuse, username_of
from ..rest.handlers import check_decider, refusal_sender
from .context import BridgeContext, agent_name
from .effects import AGENT_TOOL_ACTION, held_plan

#: The channel of an answer given in Jupyter AI's chat (journal ``channel``).
CHAT_CHANNEL = "chat"
#: How many ended permission requests are remembered (the oldest is forgotten first).
MAX_ENDED_KEPT = 1000
#: Store events that end a pending request without a yes.
_ENDING = frozenset({"rejected", "timed_out", "withdrawn", "auto_answered", "dismissed"})


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
class PermissionRequests:
    """The permission requests of Jupyter AI's agents that wait for a person."""

    context: BridgeContext
    _asked: dict[tuple[str, str], _Asked] = field(default_factory=dict)
    _by_request: dict[str, _Asked] = field(default_factory=dict)
    _watched: set[str] = field(default_factory=set)
    #: Requests that ended, so that an answer coming after the first is refused on record.
    _ended: dict[tuple[str, str], _Asked] = field(default_factory=dict)

    def _store(self, agent: str) -> ApprovalStore:
        store = self.context.hold.store_for(agent)
        if agent not in self._watched:
            self._watched.add(agent)
            store.subscribe(self._on_store_event)
        return store

    async def request_permission(
        self, original: Any, client: Any, options: Any, session_id: str, tool_call: Any, **kw: Any
    ) -> Any:
        """Hold the tool call as a request of the agent gate; answer the agent with the first
        answer a person gives, in the chat or the sidebar."""
        from acp.schema import DeniedOutcome, RequestPermissionResponse

        cancelled = RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        persona = self.context.persona(client, session_id)
        agent = agent_name(persona)
        wire = tool_call.model_dump(mode="json", by_alias=True, exclude_none=True)
        offered = [o.model_dump(mode="json", by_alias=True, exclude_none=True) for o in options]
        try:
            self.context.admitted(persona)
            plan = plan_of(wire)
            held = held_plan(plan, wire, self.context.where(persona), agent, session_id)
            store = self._store(agent)
            info = self.context.hold.open_write(held, agent)
        except errors.ApprovalError as exc:
            self.context.refused(
                exc, agent, "a permission request", tool_call_id=wire.get("toolCallId")
            )
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
            self._ended[(session_id, plan.tool_call_id)] = asked
            while len(self._ended) > MAX_ENDED_KEPT:
                self._ended.pop(next(iter(self._ended)))
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
        key = (str(session_id), str(tool_call_id))
        asked = self._asked.get(key)
        target = asked or self._ended.get(key)
        if target is None:
            refuse(
                handler,
                errors.ApprovalUnknownRequest(
                    "No permission request of this tool call waits. Nothing was decided."
                ),
            )
        decision = None
        try:
            check_decider(handler)
            if asked is None:
                # The other place answered first (or its time ran out): on record, no effect.
                raise errors.ApprovalAlreadyDecided(
                    "This permission request was already answered or ended; the first answer "
                    "stands. Nothing changed.",
                    request_id=target.request_id,
                )
            option = next((o for o in asked.options if o.get("optionId") == option_id), None)
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
            self.context.hold.decide(
                asked.request_id,
                decision,
                asked.fingerprint,
                reason,
                username_of(handler.current_user) or "",
                channel=CHAT_CHANNEL,
            )
        except errors.ApprovalError as exc:
            if asked is not None:
                asked.chosen = None
            if not isinstance(exc, errors.ApprovalAutoAnswered):
                sender, who = refusal_sender(handler)
                self.context.refusals.refused(
                    exc.code,
                    sender=sender,
                    request_id=target.request_id,
                    listed=True,
                    notebook_path=None,
                    channel=CHAT_CHANNEL,
                    attempted=decision,
                    held_at="server",
                    **{**who, "agent": target.agent},
                )
            refuse(handler, exc)
        handler.finish({"status": "ok"})
