"""The approvals state of one kernel process: store, journal, cards, comm endpoint.

There is one :class:`KernelSession` per process, created on first use. It turns store events
into journal lines, card updates and ``changed`` messages to frontends, and it is the only
way a decision reaches the store from the kernel side, after the frontend check.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from traitlets import TraitError

from ..config import ApprovalsConfig
from ..core import errors
from ..core.journal import Journal
from ..core.model import Origin, RequestInfo, Status
from ..core.policy import Clock, IgnoredSetting, Limits
from ..core.project import (
    default_state_dir,
    ensure_outside_project,
    project_root_for,
)
from ..core.store import ApprovalStore
from . import frontend

if TYPE_CHECKING:
    from .card import ApprovalCard
    from .comm import CommEndpoint

log = logging.getLogger("jupyter_approvals")

# Journal events that record a decision, and so who made it.
_DECISION_EVENTS = frozenset({"approved", "rejected", "auto_answered"})
# Refused decisions journaled per request before the rest are only counted.
_REFUSALS_JOURNALED = 20
# Cards of ended requests kept alive (so their final state stays visible) before closing.
_ENDED_CARDS_KEPT = 50
_SWEEP_INTERVAL_S = 1.0


def _kernel_id() -> str | None:
    try:
        from ipykernel.connect import get_connection_file

        name = Path(get_connection_file()).stem
    except Exception:
        return None
    return name.removeprefix("kernel-") or None


def _notebook_path(environ: Mapping[str, str]) -> str | None:
    # jupyter_server starts each session's kernel with the notebook's path in this variable.
    return environ.get("JPY_SESSION_NAME") or None


def _project_dir(notebook_path: str | None, cwd: Path) -> Path:
    if notebook_path and os.path.isabs(notebook_path):
        return Path(notebook_path).parent
    return cwd


class KernelSession:
    """Everything jupyter-approvals keeps in one kernel, in memory only."""

    _current: KernelSession | None = None
    _current_lock = threading.Lock()

    def __init__(
        self,
        shell: Any = None,
        *,
        clock: Clock | None = None,
        environ: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.shell = shell
        self.environ = environ if environ is not None else os.environ
        try:
            configured, self.ignored_settings = ApprovalsConfig(
                config=getattr(shell, "config", None)
            ).limits()
        except TraitError as exc:
            # A value of the wrong type must not take approvals down: keep the promises.
            configured = Limits()
            self.ignored_settings = [
                IgnoredSetting("ApprovalsConfig", float("nan"), float("nan"), f"invalid: {exc}")
            ]
        self.limits: Limits = limits or configured
        for ignored in self.ignored_settings:
            log.warning(
                "jupyter-approvals ignored %s=%s: %s (using %s)",
                ignored.name,
                ignored.requested,
                ignored.why,
                ignored.applied,
            )
        self.store = ApprovalStore(
            self.limits,
            clock,
            decision_guard=frontend.FrontendGuard(self._decision_comms, self._guard_refused),
        )
        self.kernel_id = _kernel_id() if shell is not None else None
        self.notebook_path = _notebook_path(self.environ)
        self.project_root = project_root_for(_project_dir(self.notebook_path, cwd or Path.cwd()))
        self.journal, self._location_problem = self._resolve_location()
        self.cards: OrderedDict[str, ApprovalCard] = OrderedDict()
        self._cards_lock = threading.RLock()
        self._refusals: dict[str, int] = {}
        self._decided_by: dict[str, str] = {}
        self._dismissed_by: dict[str, tuple[str, str | None]] = {}
        self._waiters: dict[str, list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]]] = {}
        self.store.subscribe(self._on_event)
        self.endpoint: CommEndpoint | None = None
        self._stop = threading.Event()
        if shell is not None and getattr(shell, "kernel", None) is not None:
            from .comm import CommEndpoint

            self.endpoint = CommEndpoint(self)
            _show_approval_errors_briefly(shell)
            threading.Thread(
                target=self._sweep_forever, name="approvals-sweeper", daemon=True
            ).start()

    # -- the process-wide session --------------------------------------------------------

    @classmethod
    def current(cls) -> KernelSession:
        """The session of this process, created on first use."""
        with cls._current_lock:
            if cls._current is None:
                try:
                    from IPython import get_ipython

                    shell = get_ipython()
                except ImportError:  # pragma: no cover
                    shell = None
                cls._current = cls(shell)
            return cls._current

    @classmethod
    def install(cls, session: KernelSession) -> KernelSession:
        """Make ``session`` the process-wide one (tests use it to inject a clock)."""
        with cls._current_lock:
            if cls._current is not None:
                cls._current.close()
            cls._current = session
        return session

    def close(self) -> None:
        """Stop the sweeper and the comm endpoint of this session."""
        self._stop.set()
        if self.endpoint is not None:
            self.endpoint.close()

    # -- journal -------------------------------------------------------------------------

    def _resolve_location(self) -> tuple[Journal, errors.ApprovalError | None]:
        # Fixed when the session starts: a cell that changes the environment later must not
        # move the record of decisions (nor pay path resolution on every call).
        problem: errors.ApprovalError | None = None
        try:
            state_dir = default_state_dir(self.environ)
        except ValueError as exc:
            state_dir = default_state_dir({})
            problem = errors.ApprovalJournalInsideProject(
                f"The journal location is unusable: {exc}. Nothing ran.",
                project_root=str(self.project_root),
            )
        if problem is None:
            try:
                ensure_outside_project(state_dir, self.project_root)
            except errors.ApprovalJournalInsideProject as exc:
                problem = exc
        return Journal.for_project(self.project_root, state_dir), problem

    def check_journal_location(self) -> None:
        """Refuse protected operations while the journal would be inside the project."""
        if self._location_problem is not None:
            raise self._location_problem

    def journal_event(self, event: str, info: RequestInfo | None, **fields: Any) -> None:
        """Append one line; a failure is kept for the card and never raised."""
        entry: dict[str, Any] = {
            "kernel_id": self.kernel_id,
            "notebook_path": self.notebook_path,
            "project_root": str(self.project_root),
        }
        if info is not None:
            entry.update(
                request_id=info.id,
                action=info.action,
                summary=info.summary,
                fingerprint=info.fingerprint,
                status=info.status.value,
                channel=info.channel,
                latency_ms=info.latency_ms,
                reason=info.reason or None,
                code=info.code,
                cell_id=info.origin.cell_id,
                username=info.origin.username,
                agent=info.origin.agent,
            )
            if event in _DECISION_EVENTS:
                entry["decided_by"] = self._decided_by.pop(info.id, None)
        entry.update(fields)
        self.journal.append(event, **{k: v for k, v in entry.items() if v is not None})

    # -- requests ------------------------------------------------------------------------

    def origin(self) -> Origin:
        """Where a call being made now comes from."""
        context = frontend.caller_context()
        return Origin(
            kernel_id=self.kernel_id,
            notebook_path=self.notebook_path,
            cell_id=context["cell_id"],
            username=context["username"],
            session=context["session"],
            agent=context["agent"],
        )

    def show(self, info: RequestInfo) -> None:
        """Display the card of ``info`` in the current output; start its answer clock."""
        if self.shell is None or getattr(self.shell, "kernel", None) is None:
            self.store.mark_shown(info.id)
            return
        from IPython.display import display

        from .card import ApprovalCard

        with self._cards_lock:
            card = self.cards.get(info.id)
            if card is None:
                card = ApprovalCard(self, info)
                self.cards[info.id] = card
        # One card per request per cell run: a loop of identical calls shows it once.
        execution = (frontend.current_parent().get("header") or {}).get("msg_id")
        if card.shown_in != execution or execution is None:
            card.shown_in = execution
            display(card)  # type: ignore[no-untyped-call]
        self.store.mark_shown(info.id)

    def decide(
        self,
        request_id: object,
        decision: object,
        fingerprint: object,
        reason: object = "",
        channel: str = "card",
        decided_by: str | None = None,
    ) -> RequestInfo:
        """Apply a decision carried by the frontend message being handled now.

        The store's guard refuses it unless that message is a frontend's comm message to
        this request's card or to a ``jupyter_approvals`` comm carrying exactly this decision.
        Refusals are journaled.
        """
        try:
            if not isinstance(request_id, str):
                raise errors.ApprovalMalformedDecision("The request id must be text.", field="id")
            # Who decided: the server's stamp on a card's message, or what the server says
            # it authenticated for a sidebar decision (a hint for the journal, not a check).
            who = frontend.caller_context()["person"] or decided_by
            if who:
                self._decided_by[request_id] = who[:200]
            return self.store.decide(request_id, decision, fingerprint, reason, channel)
        except errors.ApprovalError as exc:
            # The store journals its own refusals (mismatch, auto-answered), the guard its own.
            if not isinstance(
                exc,
                errors.ApprovalFingerprintMismatch
                | errors.ApprovalAutoAnswered
                | errors.ApprovalNotFromFrontend,
            ):
                self._journal_refusal(str(request_id)[:64], exc.code, channel=channel)
            raise

    def _decision_comms(self, request_id: str) -> set[str]:
        comms = set(self.endpoint.comm_ids()) if self.endpoint is not None else set()
        with self._cards_lock:
            card = self.cards.get(request_id)
        if card is not None and card.comm is not None:
            comms.add(card.comm.comm_id)
        return comms

    def _guard_refused(self, request_id: str, why: str, message_type: str | None) -> None:
        self._journal_refusal(
            request_id,
            errors.ApprovalNotFromFrontend.code,
            why=why,
            message_type=message_type,
        )

    def journal_refused_late(self, request_id: str, channel: str) -> None:
        """Record a decision that arrived after the deadline its sender gave it."""
        self._journal_refusal(
            request_id, errors.ApprovalKernelUnavailable.code, channel=channel, why="late"
        )

    def _journal_refusal(self, request_id: str, code: str, **fields: Any) -> None:
        # A loop of refused attempts must not flood the journal with fsynced lines.
        seen = self._refusals.get(request_id, 0) + 1
        self._refusals[request_id] = seen
        if len(self._refusals) > 1000:
            self._refusals.pop(next(iter(self._refusals)))
        if seen > _REFUSALS_JOURNALED:
            return
        if seen == _REFUSALS_JOURNALED:
            fields["further_refusals_not_journaled"] = True
        info = self.store.get(request_id)
        self.journal_event(
            "refused", info, code=code, **({} if info else {"request_id": request_id}), **fields
        )

    def dismiss(self, request_id: str, channel: str) -> None:
        """The card was closed: a pending request ends without running.

        No frontend check: dismissing only ever stops a run, so any caller may do it; the
        journal records who (the channel and the message type).
        """
        info = self.store.get(request_id)
        if info is not None and info.status is Status.PENDING:
            self._dismissed_by[request_id] = (channel, frontend.current_message_type())
            self.store.dismiss(request_id)

    async def until_ended(self, request_id: str, timeout: float | None) -> None:
        """Wait until the request is no longer pending (decided, ended, or timed out)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        self._waiters.setdefault(request_id, []).append((loop, future))
        info = self.store.get(request_id)
        if info is None or info.status is not Status.PENDING:
            self._wake(request_id)
        remaining = max(0.0, info.expires_at - self.store.clock.wall()) if info else 0.0
        limit = remaining + 0.5 if timeout is None else min(timeout, remaining + 0.5)
        try:
            await asyncio.wait_for(future, limit)
        except asyncio.TimeoutError:
            self.store.sweep()
        finally:
            waiters = self._waiters.get(request_id, [])
            if (loop, future) in waiters:
                waiters.remove((loop, future))
            if not waiters:
                self._waiters.pop(request_id, None)

    # -- events --------------------------------------------------------------------------

    def _on_event(self, event: str, info: RequestInfo, fields: dict[str, Any]) -> None:
        if event == "dismissed" and info.id in self._dismissed_by:
            channel, msg_type = self._dismissed_by.pop(info.id)
            fields = {**fields, "channel": channel, "message_type": msg_type}
        self.journal_event(event, info, **fields)
        with self._cards_lock:
            card = self.cards.get(info.id)
        if card is not None:
            card.refresh(info, event=event, fields=fields)
        if info.status is not Status.PENDING:
            self._wake(info.id)
        if self.endpoint is not None:
            self.endpoint.broadcast_changed()
        self._trim_cards()

    def _wake(self, request_id: str) -> None:
        for loop, future in list(self._waiters.get(request_id, [])):
            loop.call_soon_threadsafe(_resolve, future)

    def _trim_cards(self) -> None:
        live = {info.id for info in self.store.live()}
        with self._cards_lock:
            ended = [rid for rid in self.cards if rid not in live]
            dropped = [
                self.cards.pop(rid) for rid in ended[: max(0, len(ended) - _ENDED_CARDS_KEPT)]
            ]
        for card in dropped:
            card.close_quietly()

    def _sweep_forever(self) -> None:
        while not self._stop.wait(_SWEEP_INTERVAL_S):
            try:
                self.store.sweep()
            except Exception:  # a sweep must never kill the thread that ends stale requests
                log.exception("approval sweep failed")

    def describe_ignored(self) -> list[IgnoredSetting]:
        """Configured values that were too loose and were not applied."""
        return list(self.ignored_settings)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _show_approval_errors_briefly(shell: Any) -> None:
    """Show an approval error as its one-line message, without the gate's internal frames.

    The message is what a person and an agent act on; the frames are ours, not theirs. Left
    alone when the shell already has a custom exception handler (there is a single slot).
    """
    if getattr(shell, "custom_exceptions", ()) or not hasattr(shell, "set_custom_exc"):
        return

    def one_line(
        shell: Any, etype: type[BaseException], value: BaseException, tb: Any, tb_offset: Any = None
    ) -> list[str]:
        # IPython leaves the display of custom exceptions to the handler.
        stb = list(shell.InteractiveTB.get_exception_only(etype, value))
        shell._showtraceback(etype, value, stb)
        return stb

    shell.set_custom_exc((errors.ApprovalError,), one_line)
