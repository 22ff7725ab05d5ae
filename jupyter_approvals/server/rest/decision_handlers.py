"""The REST routes that decide (docs/protocol.md 6.2, 6.2.1): a kernel's request, held code.

A decision the server refuses itself, before any kernel or store saw it, is journaled here
(:mod:`.refusals`); one the kernel or the store refuses is journaled there.
"""

from __future__ import annotations

import json
import re
from typing import Any

from jupyter_server.auth.decorator import authorized
from tornado import web

from ...core import errors
from ..gate.identity import username_of
from ..mirror.kernel_link import (
    KernelBusy,
    KernelUnavailable,
    NoApprovals,
    NotListed,
    Unanswered,
)
from ..mirror.kernels import RETRY_AFTER_S
from .handlers import MAX_BODY_BYTES, ApprovalsHandler, refusal_sender

#: Where held agent code is decided: the sidebar, or the card the server renders at its cell.
HELD_CHANNELS = ("sidebar", "card")


class _DecidingHandler(ApprovalsHandler):
    """What both deciding routes share: journaling what the server refuses itself."""

    def target(self) -> tuple[str, bool, str | None, dict[str, Any]]:
        """The request id the route names, whether the server knows that request, the
        notebook it is about, and the fields that place it (kernel, held)."""
        raise NotImplementedError

    #: Where this route's decisions may be made, the default first (a body names another).
    channels: tuple[str, ...] = ("sidebar",)

    def attempted_decision(self) -> str | None:
        """The decision the body names, if it names one (for the record, never checked)."""
        decision = self._claimed("decision")
        return decision if decision in ("approve", "reject") else None

    def attempted_channel(self) -> str:
        """Where the body says the decision was made, if it is one of the route's channels
        (for the record, never checked), else the route's default."""
        channel = self._claimed("channel")
        return channel if channel in self.channels else self.channels[0]

    def _claimed(self, field: str) -> object:
        if len(self.request.body) > MAX_BODY_BYTES:
            return None
        try:
            body = json.loads(self.request.body or b"")
        except (ValueError, RecursionError):
            return None
        return body.get(field) if isinstance(body, dict) else None

    def note_agent_refusal(self, agent: str, error: errors.ApprovalError) -> None:
        """Journal that the agent gate refused this decision to agent ``agent`` (called from
        the gate, before the route runs)."""
        self._journal(error, f"agent {agent}", agent=agent, decided_by=f"agent:{agent}")

    def journal_refusal(self, error: errors.ApprovalError) -> None:
        """Journal a refusal the server made itself, charged to its sender's budget."""
        sender, who = refusal_sender(self)
        self._journal(error, sender, **who)

    def _journal(self, error: errors.ApprovalError, sender: str, **who: Any) -> None:
        request_id, listed, notebook, place = self.target()
        self.parts.refusals.refused(
            error.code,
            sender=sender,
            request_id=request_id,
            listed=listed,
            notebook_path=notebook,
            channel=self.attempted_channel(),
            attempted=self.attempted_decision(),
            **who,
            **place,
        )


class DecisionHandler(_DecidingHandler):
    """``POST pending/{kernel_id}/{request_id}``: decide one request, as the sidebar."""

    @web.authenticated
    @authorized
    async def post(self, kernel_id: str, request_id: str) -> None:
        """Forward a decision to the kernel, where it passes every check of the card."""
        ids = {"kernel_id": kernel_id, "id": request_id}
        try:
            self.check_decider()
            decision, fingerprint, reason, _ = self._read_body(self.channels)
            verdict = await self._forward(kernel_id, request_id, decision, fingerprint, reason)
        except errors.ApprovalError as exc:
            # A decision sent that got no answer in time reached the kernel's queue: the
            # kernel journals what becomes of it, the server does not claim it refused it.
            if not (isinstance(exc, errors.ApprovalKernelUnavailable) and exc.details.get("sent")):
                self.journal_refusal(exc)
            if isinstance(exc, errors.ApprovalKernelBusy):
                exc.details.update(retry="when_idle", retry_after_s=RETRY_AFTER_S)
            exc.details.update(ids)
            raise
        if verdict.get("ok") is True:
            self.reply(
                {"ok": True, "code": None, "message": "", "status": verdict.get("status"), **ids}
            )
            return
        code = str(verdict.get("code") or errors.ApprovalMalformedMessage.code)
        self.reply(
            {
                "ok": False,
                "code": code,
                "message": str(verdict.get("message") or ""),
                "status": verdict.get("status"),
                **ids,
            },
            errors.http_status_of(code),
        )

    def target(self) -> tuple[str, bool, str | None, dict[str, Any]]:
        """The kernel request the route names (see the base class)."""
        kernel_id, request_id = (str(arg) for arg in self.path_args[:2])
        listed, notebook = self.links.request_known(kernel_id, request_id)
        running = kernel_id in self.links.running()
        place = {"kernel_id": kernel_id} if running else {"attempted_kernel_id": kernel_id[:64]}
        return request_id, listed, notebook, place

    async def _forward(
        self, kernel_id: str, request_id: str, decision: str, fingerprint: str, reason: str
    ) -> dict[str, Any]:
        """The kernel's verdict; raises the server's own refusal when it cannot be asked."""
        if not re.fullmatch(r"[0-9a-f]{16}", request_id):
            raise errors.ApprovalUnknownRequest(f"No request {request_id!r}.")
        sent = {"id": request_id, "decision": decision, "fingerprint": fingerprint}
        decided_by = username_of(self.current_user)
        try:
            return await self.links.decide(
                kernel_id,
                request_id,
                decision,
                fingerprint,
                reason,
                channel="sidebar",
                decided_by=decided_by,
                # The server's own record, once the decision is sure to reach the kernel.
                before_sending=lambda: self.parts.relayed.record(
                    kernel_id, sent, channel="sidebar", decided_by=decided_by
                ),
            )
        except KeyError:
            raise errors.ApprovalUnknownKernel(f"No running kernel {kernel_id!r}.") from None
        except NotListed:
            raise errors.ApprovalUnknownRequest(
                f"The kernel lists no pending request {request_id!r} (it may have ended); "
                "nothing was decided."
            ) from None
        except KernelBusy:
            # Nothing was sent: the request stays pending, its row stays in the list.
            raise errors.ApprovalKernelBusy(
                "The kernel is running a cell; nothing was decided and the request is still "
                "pending. Decide again when the cell has ended."
            ) from None
        except NoApprovals:
            raise errors.ApprovalKernelUnavailable(
                "The kernel has not loaded jupyter-approvals; nothing was decided."
            ) from None
        except Unanswered:
            raise errors.ApprovalKernelUnavailable(
                "The kernel did not answer in time (it refuses this decision if it reads it "
                "later); nothing was decided. Try again when it is idle.",
                sent=True,
            ) from None
        except KernelUnavailable:
            raise errors.ApprovalKernelUnavailable(
                "The kernel did not answer in time; nothing was sent to it and nothing was "
                "decided. Try again when it is idle."
            ) from None


class HeldDecisionHandler(_DecidingHandler):
    """``POST held/{request_id}``: decide a request the server holds (agent code)."""

    channels = HELD_CHANNELS

    def target(self) -> tuple[str, bool, str | None, dict[str, Any]]:
        """The held request the route names (see the base class)."""
        request_id = str(self.path_args[0])
        held = self.gate.hold.get(request_id)
        notebook = held.origin.notebook_path if held is not None else None
        return request_id, held is not None, notebook, {"held_at": "server"}

    @web.authenticated
    @authorized
    async def post(self, request_id: str) -> None:
        """Apply a person's decision to held agent code; the code runs when the agent resends."""
        try:
            self.check_decider()
            decision, fingerprint, reason, channel = self._read_body(self.channels)
            info = self.gate.hold.decide(
                request_id,
                decision,
                fingerprint,
                reason,
                username_of(self.current_user) or "",
                channel=channel,
            )
        except errors.ApprovalError as exc:
            # An answer too fast ends the request: the store journals that outcome itself.
            if not isinstance(exc, errors.ApprovalAutoAnswered):
                self.journal_refusal(exc)
            exc.details["id"] = request_id
            raise
        self.reply(
            {"ok": True, "code": None, "message": "", "status": info.status.value, "id": request_id}
        )
