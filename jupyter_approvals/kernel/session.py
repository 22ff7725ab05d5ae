"""The approvals state of one kernel process: it wires the store to the journal, the cards,
the waiters and the comm endpoint.

There is one :class:`KernelSession` per process, created on first use. Store events fan out
from here: a journal line (:mod:`.journaling`), the card's new state
(:mod:`.card.registry`), waiters woken (:mod:`.waiting`) and a ``changed`` message to
frontends (:mod:`.comm`). Decisions reach the store only through :mod:`.decisions`, after the
frontend check. Where a request comes from is read in :mod:`.request_origin`.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from traitlets import TraitError

from ..config import ApprovalsConfig
from ..core.model import Origin, RequestInfo, Status, decided_recently
from ..core.policy import Clock, IgnoredSetting, Limits
from ..core.project import project_root_for
from ..core.store.approval_store import ApprovalStore
from . import frontend
from .card.registry import CardRegistry
from .card.widget import ApprovalCard
from .comm import CommEndpoint
from .decisions import Decisions
from .error_display import show_approval_errors_briefly
from .journaling import KernelJournal
from .request_origin import call_origin, kernel_id, notebook_path
from .verified_messages import VerifiedMessages
from .waiting import Waiters

log = logging.getLogger("jupyter_approvals")

_SWEEP_INTERVAL_S = 1.0


def _project_dir(notebook_path: str | None, cwd: Path) -> Path:
    if notebook_path and os.path.isabs(notebook_path):
        return Path(notebook_path).parent
    return cwd


def _configured_limits(shell: Any) -> tuple[Limits, list[IgnoredSetting]]:
    try:
        limits, ignored = ApprovalsConfig(config=getattr(shell, "config", None)).limits()
    except TraitError as exc:
        # A value of the wrong type must not take approvals down: keep the promises.
        nan = float("nan")
        return Limits(), [IgnoredSetting("ApprovalsConfig", nan, nan, f"invalid: {exc}")]
    for setting in ignored:
        log.warning(
            "jupyter-approvals ignored %s=%s: %s (using %s)",
            setting.name,
            setting.requested,
            setting.why,
            setting.applied,
        )
    return limits, ignored


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
        configured, self.ignored_settings = _configured_limits(shell)
        self.limits: Limits = limits or configured
        self.kernel_id = kernel_id() if shell is not None else None
        self.notebook_path = notebook_path(self.environ)
        #: The notebook the server says this kernel's session names, when the kernel was
        #: started without one (display only: the journal's place never follows it).
        self.session_path: str | None = None
        self.project_root = project_root_for(_project_dir(self.notebook_path, cwd or Path.cwd()))
        self._journal = KernelJournal(
            self.environ, self.project_root, self.kernel_id, self.notebook_path
        )
        self.journal = self._journal.journal
        #: What frontend messages carrying a decision said, as the kernel's session verified
        #: them (recorded from the first message on, in a kernel).
        self.verified = VerifiedMessages()
        kernel = getattr(shell, "kernel", None) if shell is not None else None
        if kernel is not None and getattr(kernel, "session", None) is not None:
            self.verified.install(kernel.session)
        guard = frontend.FrontendGuard(self._decision_comms, self._guard_refused, self.verified)
        self._journal.frontend_message_of = guard.opened_for
        self.store = ApprovalStore(self.limits, clock, decision_guard=guard)
        self.decisions = Decisions(self.store, self._journal)
        self._cards = CardRegistry(
            self.decisions, self._journal.health, self.project_root, self.limits.min_answer_s
        )
        self._waiters = Waiters(self.store, self._broadcast_changed)
        self.store.subscribe(self._on_event)
        self.endpoint: CommEndpoint | None = None
        self._stop = threading.Event()
        if shell is not None and getattr(shell, "kernel", None) is not None:
            self.endpoint = CommEndpoint(self.decisions, self._listing, self._learn_session_path)
            # Announce: the server learns that approvals are served here, even mid-cell.
            self.endpoint.broadcast_changed()
            show_approval_errors_briefly(shell, self._cards.stopped)
            # A cell that runs again has its outputs cleared: a card shown there is gone.
            shell.events.register("pre_run_cell", self._cards.cell_runs)
            threading.Thread(
                target=self._sweep_forever, name="approvals-sweeper", daemon=True
            ).start()
            # What is pending or approved when the kernel's process ends is lost with it
            # (not when a child forked from it exits: the kernel still holds its requests).
            self._pid = os.getpid()
            atexit.register(self._journal_lost)

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
        atexit.unregister(self._journal_lost)
        self._stop.set()
        events = getattr(self.shell, "events", None)
        if self.endpoint is not None and events is not None:
            with contextlib.suppress(ValueError):
                events.unregister("pre_run_cell", self._cards.cell_runs)
        if self.endpoint is not None:
            self.endpoint.close()

    # -- what the gate uses --------------------------------------------------------------

    @property
    def cards(self) -> OrderedDict[str, ApprovalCard]:
        """The cards of this kernel's requests, by request id, oldest first."""
        return self._cards.cards

    def check_journal_location(self) -> None:
        """Refuse protected operations while the journal would be inside the project."""
        self._journal.check_location()

    def origin(self) -> Origin:
        """Where a call being made now comes from."""
        return call_origin(self.shell, self.kernel_id, self.shown_notebook_path)

    def show(self, info: RequestInfo) -> None:
        """Display the card of ``info`` in the current output; start its answer clock."""
        if self.shell is not None and getattr(self.shell, "kernel", None) is not None:
            self._cards.show(info, self.origin())
        self.store.mark_shown(info.id)

    def journal_refusal(self, budget: str, code: str, **fields: Any) -> None:
        """Journal a refusal that belongs to no request (a call past the pending limit),
        counted against the refusal budget named ``budget``."""
        self._journal.refused(None, code, None, budget=budget, **fields)

    async def until_ended(self, request_id: str, timeout: float | None) -> None:
        """Wait until the request is no longer pending (decided, ended, or timed out)."""
        await self._waiters.until_ended(request_id, timeout)

    # -- wiring --------------------------------------------------------------------------

    def _decision_comms(self, request_id: str) -> set[str]:
        comms = set(self.endpoint.comm_ids()) if self.endpoint is not None else set()
        card_comm = self._cards.comm_of(request_id)
        if card_comm is not None:
            comms.add(card_comm)
        return comms

    def _guard_refused(self, request_id: str, why: str, message_type: str | None) -> None:
        self.decisions.guard_refused(request_id, why, message_type)

    @property
    def shown_notebook_path(self) -> str | None:
        """The notebook named in cards and listings: the kernel's own, else its session's."""
        return self.notebook_path or self.session_path

    def _learn_session_path(self, path: str) -> None:
        if self.notebook_path is None:
            self.session_path = path[:1000]

    def _listing(self) -> dict[str, Any]:
        problem = self._journal.health()
        return {
            "kernel_id": self.kernel_id,
            "notebook_path": self.shown_notebook_path,
            "requests": [info.to_wire() for info in self.store.pending()],
            "journal": {"path": str(self.journal.path), "error": problem or None},
            "awaited": self._waiters.awaited(),
            "decided": decided_recently(self.store.live() + self.store.recent()),
            # The reading floor in force here, so a frontend's buttons wait as long as it.
            "min_answer_ms": self.limits.min_answer_ms,
        }

    def _on_event(self, event: str, info: RequestInfo, fields: dict[str, Any]) -> None:
        if event == "dismissed":
            fields = {**fields, **self.decisions.dismissal(info.id)}
        self._journal.event(event, info, **fields)
        if self.store.forked:
            # A child forked from the kernel: its record goes to the journal; the sockets it
            # shares with the kernel are the kernel's to speak on.
            return
        self._cards.refresh(info, event, fields)
        if info.status is not Status.PENDING:
            self._waiters.wake(info.id)
        self._broadcast_changed()
        self._cards.trim(live.id for live in self.store.live())

    def _journal_lost(self) -> None:
        if os.getpid() != self._pid:
            return
        for info in self.store.live():
            self._journal.event("lost", info)

    def _broadcast_changed(self) -> None:
        if self.endpoint is not None:
            self.endpoint.broadcast_changed()

    def _sweep_forever(self) -> None:
        while not self._stop.wait(_SWEEP_INTERVAL_S):
            try:
                self.store.sweep()
            except Exception:  # a sweep must never kill the thread that ends stale requests
                log.exception("approval sweep failed")
