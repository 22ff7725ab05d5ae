"""Everything an agent sends that waits for a person, held at the server.

Each request (agent code, ``kernel.execute``, see :mod:`.held_code`; a file write through the
contents API or a room, ``file.*``, see :mod:`.held_files` and :mod:`.held_room_edits`) lives
in a store of the server's own, one per agent (the same core store the kernels use, in the
server process). The same rules as everywhere: 1 s floor from when a person's UI first
received it, 10 minutes to answer, 10 minutes to use, once; every outcome journaled in the
project's journal.
"""

from __future__ import annotations

from typing import Any

from ...core import errors
from ...core.fingerprint import fingerprint
from ...core.model import Lease, Origin, RequestInfo, decided_recently
from ...core.policy import Clock, Limits, enforced
from ...core.store.approval_store import ApprovalStore
from ...core.visible import make_visible
from ..api import API_PREFIX
from ..mirror.journals import ServerJournals
from .held_code import (
    ACTION,
    EXECUTE_FIELDS,
    execute_subject,
    held_preview,
    held_structured,
    summary_of,
)
from .held_files import HeldWrite
from .pause import pause_reason


class AgentHold:
    """The server's stores of what agents sent, held for a person; their journal and limits."""

    def __init__(
        self,
        limits: Limits,
        journals: ServerJournals,
        clock: Clock | None = None,
    ) -> None:
        self._limits = limits
        self._clock = clock
        self.limits = enforced(limits)
        self._journals = journals
        self._decided_by: dict[str, str] = {}
        # One store per agent: its pending limit is per agent, so a flood from one agent
        # never refuses another's requests.
        self._stores: dict[str, ApprovalStore] = {}

    def store_for(self, agent: str) -> ApprovalStore:
        """The store of ``agent``'s held requests (made on first use)."""
        store = self._stores.get(agent)
        if store is None:
            store = self._stores[agent] = ApprovalStore(self._limits, self._clock)
            store.subscribe(self._journal_event)
        return store

    def _store_of(self, request_id: str) -> ApprovalStore | None:
        for store in list(self._stores.values()):
            if store.get(request_id) is not None:
                return store
        return None

    def sweep(self) -> None:
        """End the held requests and approvals whose time is up (journaled)."""
        for store in list(self._stores.values()):
            store.sweep()

    # -- the agent's side ----------------------------------------------------------------

    def screen(
        self, content: dict[str, Any], kernel_id: str, agent: str, notebook_path: str | None
    ) -> Lease | RequestInfo:
        """A lease to forward this request now, or the pending request it waits as.

        Raises the coded outcome of an ended identical request once (rejected, timed out,
        expired, auto-answered), APPROVAL_TOO_LARGE for code past the preview limit, and
        APPROVAL_MALFORMED_MESSAGE for a request whose code is not text.
        """
        code = content.get("code")
        if not isinstance(code, str):
            raise errors.ApprovalMalformedMessage("The execute_request has no code text.")
        unknown = sorted(set(content) - set(EXECUTE_FIELDS))
        if unknown:
            # Whatever a kernel might read from a field nobody sees must not run approved.
            raise errors.ApprovalMalformedMessage(
                f"The execute_request has fields a person would not see: {unknown}. Send only "
                f"{', '.join(EXECUTE_FIELDS)}.",
                fields=unknown,
            )
        expressions = content.get("user_expressions") or {}
        if not isinstance(expressions, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in expressions.items()
        ):
            raise errors.ApprovalMalformedMessage(
                "user_expressions must map names to expression text."
            )
        shown = held_preview(code, expressions)
        preview = make_visible(shown)
        if len(preview) > self.limits.max_preview_chars:
            raise errors.ApprovalTooLarge(
                f"This code is {len(preview)} characters as shown to a person; held code is "
                f"limited to {self.limits.max_preview_chars} so that the person sees all of it. "
                "Nothing ran. Send smaller cells.",
                chars=len(preview),
                limit=self.limits.max_preview_chars,
            )
        _, problem = self._journals.project(notebook_path)
        if problem is not None:
            raise problem
        digest = fingerprint(execute_subject(content, kernel_id, agent))
        store = self.store_for(agent)
        claimed = store.claim(ACTION, digest, slot=digest, owner=agent)
        if claimed is not None:
            return claimed
        info, _ = store.open_request(
            action=ACTION,
            fingerprint=digest,
            summary=summary_of(content, agent, notebook_path, kernel_id),
            preview=shown,
            structured=held_structured(
                content, expressions, agent, notebook_path, kernel_id, len(preview)
            ),
            origin=Origin(kernel_id=kernel_id, notebook_path=notebook_path, agent=agent),
            slot=digest,
            owner=agent,
            function="",
        )
        return info

    def screen_write(
        self, write: HeldWrite, agent: str, supersede: bool = False
    ) -> Lease | RequestInfo:
        """A lease to carry out this contents request now, or the pending request it waits as.

        Raises like :meth:`screen`, and APPROVAL_FINGERPRINT_MISMATCH when the identical
        request was approved but its target changed since. With ``supersede``, a new request
        withdraws the one still pending in the same slot (a room edit the agent went on
        editing: only the latest text can still be applied).
        """
        _, problem = self._journals.project(None)
        if problem is not None:
            raise problem
        store = self.store_for(agent)
        claimed = store.claim(write.action, write.fingerprint, slot=write.slot, owner=agent)
        if claimed is not None:
            return claimed
        if supersede:
            # Nothing pending has this fingerprint (claim said so): what waits in the slot
            # is an earlier text of the same edit.
            for stale in store.pending():
                if stale.slot == write.slot:
                    store.withdraw(stale.id)
        return self.open_write(write, agent)

    def open_write(self, write: HeldWrite, agent: str) -> RequestInfo:
        """The pending request of ``write`` for ``agent`` (made now unless one waits)."""
        info, _ = self.store_for(agent).open_request(
            action=write.action,
            fingerprint=write.fingerprint,
            summary=f"Agent {agent}: {write.summary}",
            preview=write.preview,
            structured=write.structured,
            origin=Origin(agent=agent),
            slot=write.slot,
            owner=agent,
        )
        return info

    def ran(self, lease: Lease, error: BaseException | str | None = None) -> None:
        """The approved request ran: executed, or failed with ``error`` (for held code, the
        text of the kernel's reply, ``"ename: evalue"``)."""
        store = self._store_of(lease.request_id)
        if store is not None:
            store.finish(lease, error)

    # -- the person's side ---------------------------------------------------------------

    def pause(self, agent: str, by: str | None, by_name: str | None = None) -> int:
        """Reject every held request of ``agent`` (paused); return how many there were. The
        reason names the person by ``by_name`` (their display name) when given."""
        reason = pause_reason(agent, by_name or by)
        store = self._stores.get(agent)
        ended = store.reject_live(reason, channel="pause") if store is not None else []
        self.journal_agent("agent_paused", agent, by, rejected=len(ended))
        return len(ended)

    def journal_agent(self, event: str, agent: str, by: str | None, **fields: Any) -> None:
        """A line about an agent itself (paused, resumed) in the server root's journal."""
        self._journals.append(event, None, agent=agent, decided_by=by, held_at="server", **fields)

    def decided(self) -> list[dict[str, Any]]:
        """The latest decisions of held requests, newest first (as kernels list theirs)."""
        infos = [info for store in self._stores.values() for info in store.live() + store.recent()]
        return [{**entry, "held_at": "server"} for entry in decided_recently(infos)]

    def get(self, request_id: str) -> RequestInfo | None:
        """The held request ``request_id``, if the server holds it."""
        store = self._store_of(request_id)
        return store.get(request_id) if store is not None else None

    def listing(self, shown: bool) -> list[dict[str, Any]]:
        """Pending held requests in the wire form of GET pending; ``shown`` starts their floor."""
        items = []
        for store in list(self._stores.values()):
            for info in store.pending():
                if shown:
                    store.mark_shown(info.id)
                items.append(self.wire(info))
        return sorted(items, key=lambda item: str(item["created_at"]))

    def wire(self, info: RequestInfo) -> dict[str, Any]:
        """One held request as a GET pending item."""
        return {
            **info.to_wire(),
            "requested_by": f"agent {info.origin.agent}",
            "held_at": "server",
            "decide_url": f"{API_PREFIX}/held/{info.id}",
            "min_answer_ms": self.limits.min_answer_ms,
        }

    def decide(
        self,
        request_id: str,
        decision: object,
        shown: object,
        reason: object,
        person: str,
        channel: str = "sidebar",
    ) -> RequestInfo:
        """A person's decision from the sidebar or REST, or ``channel`` (the handler refuses
        agents)."""
        store = self._store_of(request_id) if isinstance(request_id, str) else None
        if store is None:
            raise errors.ApprovalUnknownRequest(
                f"No held request {request_id!r} (it may have ended long ago, or the server "
                "restarted).",
                request_id=request_id if isinstance(request_id, str) else None,
            )
        self._decided_by[request_id] = person
        return store.decide(request_id, decision, shown, reason, channel=channel)

    # -- journal -------------------------------------------------------------------------

    def _journal_event(self, event: str, info: RequestInfo, fields: dict[str, Any]) -> None:
        # The event's own fields win: a refusal's code is the refusal's, not the request's.
        line = {
            **info.journal_fields(),
            "kernel_id": info.origin.kernel_id,
            "notebook_path": info.origin.notebook_path,
            "decided_by": self._decided_by.get(info.id) if event != "requested" else None,
            "held_at": "server",
            **fields,
        }
        self._journals.append(event, info.origin.notebook_path, **line)
        if not info.status.live:
            self._decided_by.pop(info.id, None)
