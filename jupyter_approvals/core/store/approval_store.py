"""The in-memory store of requests and approvals of one kernel.

Everything that changes a request happens here, under one lock, so a decision, a timeout
and a run can never interleave into a state that runs twice or runs unapproved. The store
knows nothing of Jupyter: the kernel layer feeds it decisions it has already traced to a
frontend, and turns its events into journal lines, card updates and comm messages.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable
from typing import Any

from .. import errors, redemption
from ..decision import check_decision, check_still_pending
from ..events import EventedState
from ..fingerprint import same_fingerprint
from ..lease import issue_lease
from ..model import Approval, Lease, Origin, Request, RequestInfo, Status
from ..outcomes import ended_outcome
from ..policy import Clock, Limits, SystemClock, enforced
from .request_table import RequestTable, new_request
from .views import StoreViews

#: ``guard(request_id, decision, fingerprint, reason)`` raises to refuse a decision.
DecisionGuard = Callable[[str, str, str, str], None]
#: ``report(error, request, fields)`` records a refusal of :meth:`ApprovalStore.redeem`.
RefusalReport = Callable[[errors.ApprovalError, RequestInfo | None, dict[str, Any]], None]


#: Every store of this process, to void their approvals in a forked child.
_STORES: weakref.WeakSet[ApprovalStore] = weakref.WeakSet()


def _in_forked_child() -> None:
    for store in list(_STORES):
        store.forked_child()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_in_forked_child)


class ApprovalStore(EventedState[RequestInfo], StoreViews):
    """Pending requests and issued approvals, bounded and thread-safe, in memory only."""

    def __init__(
        self,
        limits: Limits | None = None,
        clock: Clock | None = None,
        decision_guard: DecisionGuard | None = None,
    ) -> None:
        super().__init__()
        self.limits = enforced(limits or Limits())
        #: Called with (request_id, decision, fingerprint, reason) before any decision is
        #: applied; raises to refuse it. The kernel installs one that accepts only the
        #: frontend message being handled at that moment (kernel/frontend.py).
        self.decision_guard = decision_guard
        #: Told of every refusal of :meth:`redeem`, after the lock is released (the kernel
        #: journals them, counted against a budget: code can provoke them at will).
        self.redemption_refused: RefusalReport | None = None
        self.clock: Clock = clock or SystemClock()
        self._table = RequestTable(self.limits.max_ended_kept)
        #: True in a process forked from the one that made the store: no approval runs here.
        self.forked = False
        _STORES.add(self)

    def forked_child(self) -> None:
        """Called in a child forked from this process: approvals are void here (each use is
        refused with APPROVAL_FORKED_PROCESS). A lock another thread of the parent held at
        the fork would never be released: it is made anew."""
        self.forked = True
        self._lock = threading.RLock()
        self._depth = 0
        self._outbox = []

    def _before_change(self) -> None:
        self._sweep_locked()

    def _emit(self, event: str, request: Request, **fields: Any) -> None:
        self._queue(event, request.info(), fields)

    # -- requests ----------------------------------------------------------------------

    def open_request(
        self,
        *,
        action: str,
        fingerprint: str,
        summary: str,
        preview: str,
        origin: Origin | None = None,
        slot: str | None = None,
        owner: str | None = None,
        function: str = "",
        structured: object = None,
    ) -> tuple[RequestInfo, bool]:
        """Return the pending request for (action, fingerprint), creating it if there is none.

        The boolean says whether it was created now. Refuses with APPROVAL_TOO_MANY_PENDING
        when the kernel already holds the maximum number of pending requests.
        """
        with self._transaction():
            existing = self._table.find(action, fingerprint, Status.PENDING, owner)
            if existing is not None:
                return existing.info(), False
            pending = sum(1 for r in self._table.live.values() if r.status is Status.PENDING)
            if pending >= self.limits.max_pending:
                raise errors.ApprovalTooManyPending(
                    f"{pending} requests are already waiting for a person in this kernel "
                    f"(the limit is {self.limits.max_pending}). Nothing ran. Ask the person to "
                    "decide or withdraw some of them, then call again.",
                    pending=pending,
                    limit=self.limits.max_pending,
                )
            request = self._new_request(
                action, fingerprint, summary, preview, origin, slot, owner, function, structured
            )
            self._table.live[request.id] = request
            self._emit("requested", request)
            return request.info(), True

    def _new_request(
        self,
        action: str,
        fingerprint: str,
        summary: str,
        preview: str,
        origin: Origin | None,
        slot: str | None,
        owner: str | None,
        function: str,
        structured: object = None,
    ) -> Request:
        return new_request(
            self.limits,
            self.clock.wall(),
            self.clock.monotonic(),
            action=action,
            fingerprint=fingerprint,
            summary=summary,
            preview=preview,
            origin=origin or Origin(),
            slot=slot if slot is not None else action,
            owner=owner,
            function=function,
            structured=structured,
        )

    def stage(
        self,
        *,
        action: str,
        fingerprint: str,
        summary: str,
        origin: Origin | None = None,
        slot: str | None = None,
        owner: str | None = None,
        function: str = "",
    ) -> Lease:
        """A run that asks no one here: a sandboxed kernel's file effect, which waits for a
        person as part of the kernel's change set instead (kernel/sandbox.py). Journaled
        ``staged``; :meth:`finish` then records it executed or failed, as any run."""
        with self._transaction():
            request = self._new_request(
                action, fingerprint, summary, "", origin, slot, owner, function
            )
            request.status = Status.RUNNING
            self._table.retire(request)
            self._emit("staged", request)
            return issue_lease(request.id, action, fingerprint)

    def mark_shown(self, request_id: str) -> None:
        """Note when a person could first see the request; answer time is measured from it."""
        with self._transaction():
            request = self._table.live.get(request_id)
            if request is not None and request.shown_mono is None:
                request.shown_mono = self.clock.monotonic()

    def decide(
        self,
        request_id: str,
        decision: object,
        fingerprint: object,
        reason: object = "",
        channel: str = "card",
    ) -> RequestInfo:
        """Record a person's decision that the caller has traced to a frontend.

        ``fingerprint`` is the one the UI displayed; it must equal the request's. The checks,
        in order: well-formed, known request, still pending, same fingerprint, not too fast.
        """
        answer, shown_fp, reason_text = check_decision(
            decision, fingerprint, reason, self.limits.max_reason_chars
        )
        if self.decision_guard is not None:
            self.decision_guard(request_id, answer, shown_fp, reason_text)
        with self._transaction():
            request = self._table.get(request_id)
            check_still_pending(request.id, request.status)
            if not same_fingerprint(shown_fp, request.fingerprint):
                self._emit(
                    "refused",
                    request,
                    code=errors.ApprovalFingerprintMismatch.code,
                    channel=channel,
                    displayed=shown_fp,
                )
                raise errors.ApprovalFingerprintMismatch(
                    "The decision names a different fingerprint than the request; the UI "
                    "showed other content. The request stays pending.",
                    request_id=request_id,
                    expected=request.fingerprint,
                    received=shown_fp,
                )
            mono = self.clock.monotonic()
            latency_s = mono - (request.shown_mono or request.created_mono)
            latency_ms = round(latency_s * 1000)
            request.channel, request.latency_ms = channel, latency_ms
            request.decided_at = self.clock.wall()
            if latency_s < self.limits.min_answer_s:
                request.code = errors.ApprovalAutoAnswered.code
                self._end(request, Status.AUTO_ANSWERED)
                self._emit("auto_answered", request, attempted=answer)
                raise errors.ApprovalAutoAnswered(
                    f"The answer came {latency_ms} ms after the request was shown, faster than "
                    f"a person reads ({self.limits.min_answer_ms} ms minimum). It "
                    "counts as no answer and nothing will run.",
                    request_id=request_id,
                    latency_ms=latency_ms,
                )
            request.reason = reason_text
            if answer == "approve":
                request.status = Status.APPROVED
                request.approval = Approval(
                    request_id=request.id,
                    action=request.action,
                    fingerprint=request.fingerprint,
                    owner=request.owner,
                    decided_at=request.decided_at,
                    expires_at=request.decided_at + self.limits.approval_ttl_s,
                    expires_mono=mono + self.limits.approval_ttl_s,
                    channel=channel,
                    latency_ms=latency_ms,
                )
                self._table.issued[request.id] = request.approval
                self._emit("approved", request)
            else:
                request.code = errors.ApprovalRejected.code
                self._end(request, Status.REJECTED)
                self._emit("rejected", request)
            return request.info()

    def withdraw(self, request_id: str) -> RequestInfo:
        """The caller gives up on a pending or approved request; it can no longer run."""
        with self._transaction():
            request = self._table.get(request_id)
            if not request.status.live:
                raise errors.ApprovalAlreadyDecided(
                    f"This request is already {request.status.value}; it cannot be withdrawn.",
                    request_id=request_id,
                    status=request.status.value,
                )
            request.code = errors.ApprovalWithdrawn.code
            self._end(request, Status.WITHDRAWN)
            self._emit("withdrawn", request)
            return request.info()

    def reject_live(self, reason: str, channel: str) -> list[RequestInfo]:
        """Reject every pending request and void every unused approval, with ``reason``.

        A person's blanket "no" (pausing the agent these requests belong to): no reading
        floor applies, since nothing will run.
        """
        ended: list[RequestInfo] = []
        with self._transaction():
            for request in list(self._table.live.values()):
                request.code = errors.ApprovalRejected.code
                request.reason = reason
                request.channel = channel
                request.decided_at = self.clock.wall()
                self._end(request, Status.REJECTED)
                self._emit("rejected", request)
                ended.append(request.info())
        return ended

    def dismiss(self, request_id: str) -> None:
        """The card was closed without a decision: a pending request ends, nothing runs."""
        with self._transaction():
            request = self._table.live.get(request_id)
            if request is not None and request.status is Status.PENDING:
                request.code = errors.ApprovalDismissed.code
                self._end(request, Status.DISMISSED)
                self._emit("dismissed", request)

    # -- calls -------------------------------------------------------------------------

    def claim(
        self, action: str, fingerprint: str, slot: str | None = None, owner: str | None = None
    ) -> Lease | RequestInfo | None:
        """What a protected call of (action, fingerprint) may do now.

        Returns a :class:`Lease` when an approval matches exactly (consumed now), the pending
        :class:`RequestInfo` when one waits for a person, or None when a new request is needed.
        Raises the outcome of an ended request once (rejected, timed out, ...), and refuses an
        approval that a call in the same slot tries to use for other content, or another
        action or function (``owner``) tries to use for the same content; such an approval is
        spent without running.
        """
        slot = slot if slot is not None else action
        with self._transaction():
            approved = self._table.find(action, fingerprint, Status.APPROVED, owner)
            if approved is not None and approved.approval is not None:
                try:
                    return self._redeem_locked(approved.approval, action, fingerprint, owner)
                except (errors.ApprovalExpired, errors.ApprovalForkedProcess) as refused:
                    # It lapsed since the sweep, or this is a forked child.
                    self._emit("refused", approved, code=refused.code, attempted_action=action)
                    raise
            for ended in self._table.newest_ended():
                if (
                    not ended.reported
                    and ended.action == action
                    and ended.owner == owner
                    and same_fingerprint(ended.fingerprint, fingerprint)
                    and (outcome := ended_outcome(ended.info())) is not None
                ):
                    ended.reported = True
                    if ended.status is Status.EXPIRED:
                        # The call came to run on an approval that lapsed: a refusal at
                        # redemption, on record beside the line of the expiry itself.
                        self._emit("refused", ended, code=outcome.code, attempted_action=action)
                    raise outcome
            pending = self._table.find(action, fingerprint, Status.PENDING, owner)
            if pending is not None:
                return pending.info()
            for request in list(self._table.live.values()):
                stale = request.status is Status.APPROVED and (
                    same_fingerprint(request.fingerprint, fingerprint) or request.slot == slot
                )
                if stale and request.approval is not None:
                    try:
                        self._redeem_locked(request.approval, action, fingerprint, owner)
                    except (errors.ApprovalScopeMismatch, errors.ApprovalFingerprintMismatch) as e:
                        request.code = e.code
                        self._end(request, Status.REFUSED)
                        self._emit(
                            "refused",
                            request,
                            code=e.code,
                            attempted_action=action,
                            attempted_fingerprint=fingerprint,
                        )
                        raise
            return None

    def redeem(
        self, approval: object, action: str, fingerprint: str, owner: str | None = None
    ) -> Lease:
        """Consume ``approval`` for one run of (action, fingerprint) and return its lease.

        Checks, in this order: issued by this store, same action (and the same protected
        function, ``owner``), same fingerprint, not expired, not used. A refusal is reported
        to :attr:`redemption_refused`.
        """
        try:
            with self._transaction():
                return self._redeem_locked(approval, action, fingerprint, owner)
        except (errors.ApprovalRefused, errors.ApprovalEnded) as refused:
            if self.redemption_refused is not None:
                request_id = refused.details.get("request_id")
                request = self.get(request_id) if isinstance(request_id, str) else None
                fields = {"attempted_action": action, "attempted_fingerprint": fingerprint}
                if "offered_type" in refused.details:
                    fields["offered_type"] = refused.details["offered_type"]
                self.redemption_refused(refused, request, fields)
            raise

    def _redeem_locked(
        self, approval: object, action: str, fingerprint: str, owner: str | None
    ) -> Lease:
        issued = (
            self._table.issued.get(approval.request_id) if isinstance(approval, Approval) else None
        )
        if not isinstance(approval, Approval) or issued is not approval:
            raise redemption.not_issued(approval)
        if self.forked:
            raise redemption.forked(approval)
        redemption.check_scope_and_content(approval, action, fingerprint, owner)
        request = self._table.lookup(approval.request_id)
        if (
            request is None
            or request.status is Status.EXPIRED
            or (
                request.status is Status.APPROVED
                and self.clock.monotonic() >= approval.expires_mono
            )
        ):
            if request is not None and request.status is Status.APPROVED:
                self._expire(request)
            raise redemption.expired(approval)
        if request.status is not Status.APPROVED:
            raise redemption.already_used(approval, request.status.value)
        request.status = Status.RUNNING
        self._table.retire(request)
        return issue_lease(request.id, action, fingerprint)

    def finish(self, lease: Lease, error: BaseException | str | None = None) -> None:
        """Record how the run of ``lease`` ended: executed, or failed with ``error`` (an
        exception, or the text of one reported by another process, ``"Name: message"``)."""
        with self._transaction():
            request = self._table.ended.get(lease.request_id)
            if request is None or request.status is not Status.RUNNING:
                return
            if self.forked:
                # A copy of the run went on in a process forked during it: its lease was void
                # there (the ready operations' writes were refused), and it is no run.
                request.status = Status.REFUSED
                code = errors.ApprovalForkedProcess.code
                self._emit("refused", request, code=code, attempted_action=lease.action)
            elif error is None:
                request.status = Status.EXECUTED
                self._emit("executed", request)
            else:
                request.status = Status.FAILED
                text = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
                self._emit("failed", request, error=text[:500])

    def sweep(self) -> None:
        """End requests and approvals whose time is up (also done on every other call)."""
        with self._transaction():
            pass

    # -- internals ---------------------------------------------------------------------

    def _sweep_locked(self) -> None:
        mono = self.clock.monotonic()
        for request in list(self._table.live.values()):
            if request.status is Status.PENDING and mono >= request.deadline_mono:
                request.code = errors.ApprovalTimedOut.code
                self._end(request, Status.TIMED_OUT)
                self._emit("timed_out", request)
            elif (
                request.status is Status.APPROVED
                and request.approval is not None
                and mono >= request.approval.expires_mono
            ):
                self._expire(request)

    def _expire(self, request: Request) -> None:
        request.code = errors.ApprovalExpired.code
        self._end(request, Status.EXPIRED)
        self._emit("expired", request)

    def _end(self, request: Request, status: Status) -> None:
        request.status = status
        self._table.retire(request)
