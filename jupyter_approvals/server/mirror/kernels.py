"""The server's view of every running kernel's approvals, kept from what the kernels publish.

One :class:`~.kernel_link.KernelLink` per kernel reads its iopub from the moment the kernel
starts, so what is pending is known without asking (docs/protocol.md 6.1): a busy kernel's
rows stay, marked busy. A kernel is asked only when nothing is known of it yet, or when it has
a notebook path to be told, and only while it is not running a cell. Restarted and stopped
kernels drop their rows at once.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from jupyter_client.session import Session

from ...core.model import iso_utc
from .kernel_activity import execution_state
from .kernel_link import (
    KernelBusy,
    KernelLink,
    KernelUnavailable,
    NoApprovals,
    NotListed,
    async_client,
)

#: The jupyter_server event telling that a kernel started, restarted or was shut down.
KERNEL_ACTIONS_EVENT = "https://events.jupyter.org/jupyter_server/kernel_actions/v1"
#: An idle kernel not heard from for this many seconds is asked for its list again.
RELIST_AFTER_S = 30.0
#: At most this many journal files outside the state directory are remembered.
MAX_ELSEWHERE = 100
#: Seconds after which a client told the kernel is busy should try a decision again.
RETRY_AFTER_S = 2


def _reply_margin(timeout: float) -> float:
    """How long before the server stops waiting the kernel must have read a decision."""
    return min(0.5, timeout / 4)


def _outside(path: object, state_dir: Path | None) -> str | None:
    """``path`` when it is a journal path that is not below ``state_dir`` (resolved), else
    None. What a kernel lists is checked here, before the cache, which takes only strings."""
    if state_dir is None or not isinstance(path, str) or not path:
        return None
    return _outside_resolved(path, state_dir)


@functools.lru_cache(maxsize=1024)
def _outside_resolved(path: str, state_dir: Path) -> str | None:
    # Cached: a kernel's journal path is fixed when its approvals start, and resolving it on
    # every poll of every kernel would cost more than the rest of the list.
    return None if Path(path).resolve().is_relative_to(state_dir) else path


class KernelLinks:
    """Links to every running kernel of a server, made as kernels start, dropped as they go."""

    def __init__(
        self,
        kernel_manager: Any,
        timeout: float,
        log: logging.Logger | logging.LoggerAdapter[Any],
        state_dir: Path | None = None,
        notebook_of: Callable[[str], str | None] | None = None,
    ) -> None:
        self._kernel_manager = kernel_manager
        self.timeout = timeout
        self._log = log
        # The server's state directory: a kernel journaling elsewhere is flagged.
        self._state_dir = state_dir.resolve() if state_dir is not None else None
        #: The notebook a kernel's session names (told to the kernel, for display only).
        self._notebook_of = notebook_of or (lambda _kernel_id: None)
        self._links: dict[str, KernelLink] = {}
        self._elsewhere: set[str] = set()
        self._telling: set[asyncio.Task[Any]] = set()

    # -- which kernels ---------------------------------------------------------------------

    def running(self) -> list[str]:
        """Ids of the kernels running now."""
        return list(self._kernel_manager.list_kernel_ids())

    def sync(self) -> list[str]:
        """Link every running kernel, drop the links of kernels that are gone; return the
        running ids. Cheap (no message is sent): the server's sweep calls it every second."""
        running = self.running()
        self.prune(running)
        for kernel_id in running:
            if not _ready(self._kernel_manager, kernel_id):
                continue  # a pending kernel has no ports yet: link it once it has
            if execution_state(self._kernel_manager, kernel_id) in _GONE_STATES:
                self._link(kernel_id).forget_kernel_state()
            self._link(kernel_id).start()
        return running

    def kernel_restarted(self, kernel_id: str) -> None:
        """Forget what the kernel's previous process had pending (its rows drop at once)."""
        link = self._links.get(kernel_id)
        if link is not None:
            link.forget_kernel_state()

    async def on_kernel_action(self, logger: Any, schema_id: str, data: dict[str, Any]) -> None:
        """Listener of jupyter_server's kernel action events: follow starts, restarts and
        shutdowns as they happen rather than at the next sweep."""
        kernel_id = data.get("kernel_id")
        if data.get("status") != "success" or not isinstance(kernel_id, str):
            return
        if data.get("action") == "restart":
            self.kernel_restarted(kernel_id)
        self.sync()

    def link_of(self, kernel_id: str) -> KernelLink | None:
        """The link to kernel ``kernel_id``, if the server has one."""
        return self._links.get(kernel_id)

    def busy(self, kernel_id: str) -> bool:
        """Whether the kernel runs a cell now, as the link reads the kernel's own status
        messages (each busy matched with the idle of the same message, the link's own
        questions left out); jupyter_server's record only while the link has read none.

        jupyter_server keeps the state of the last status it tracked, whatever its message:
        the idle of a control-channel ``usage_request`` (resource monitors send one every few
        seconds) makes it report a kernel idle while a cell still runs, and a decision sent
        then would wait unread in the kernel's queue.
        """
        link = self._links.get(kernel_id)
        others = link.busy_with_others() if link is not None else None
        if others is not None:
            return others
        return execution_state(self._kernel_manager, kernel_id) == "busy"

    def _link(self, kernel_id: str) -> KernelLink:
        link = self._links.get(kernel_id)
        if link is None:
            kernel = self._kernel_manager.get_kernel(kernel_id)
            # A Session of our own: a Session remembers the signatures it has seen and refuses
            # repeats, so sharing the kernel manager's (as its other clients do) would make the
            # second reader of every iopub message fail.
            session = Session(
                key=kernel.session.key,
                signature_scheme=kernel.session.signature_scheme,
                username="jupyter-approvals",
            )
            link = KernelLink(kernel_id, async_client(kernel, session))
            self._links[kernel_id] = link
            # A kernel that dies and is restarted by its restarter is a new process too.
            add_callback = getattr(kernel, "add_restart_callback", None)
            if callable(add_callback):
                add_callback(link.forget_kernel_state, "restart")
                add_callback(link.forget_kernel_state, "dead")
        return link

    def prune(self, running: Iterable[str]) -> None:
        """Close the links of kernels that are gone."""
        alive = set(running)
        for kernel_id in [k for k in self._links if k not in alive]:
            self._links.pop(kernel_id).close()

    def close(self) -> None:
        """Close every link (server shutdown)."""
        for task in self._telling:
            task.cancel()
        self.prune(())

    # -- asking ----------------------------------------------------------------------------

    async def decide(
        self,
        kernel_id: str,
        request_id: str,
        decision: str,
        fingerprint: object,
        reason: str,
        channel: str,
        decided_by: str | None,
        before_sending: Callable[[], None] | None = None,
    ) -> dict[str, Any]:
        """Send a person's decision to a kernel's endpoint; return its ``decided`` reply.
        ``before_sending`` runs once the decision is sure to be sent (the server's record).

        Raises :class:`KernelBusy` without sending anything when the kernel runs a cell that
        does not await a decision: the message would wait in its queue, unseen; and
        :class:`NotListed` when such a kernel does not list the request as pending at all.
        """
        if kernel_id not in self.running():
            raise KeyError(kernel_id)
        link = self._link(kernel_id)
        if link.approvals is False:
            raise NoApprovals(kernel_id)
        if self.busy(kernel_id) and not link.awaited():
            # A busy kernel still publishes every change, so its listing is current.
            if link.listing is not None and link.listed(request_id) is None:
                raise NotListed(request_id)
            raise KernelBusy(kernel_id)
        message = {
            "op": "decide",
            "id": request_id,
            "decision": decision,
            "fingerprint": fingerprint,
            "reason": reason,
            "channel": channel,
            "decided_by": decided_by,
            # If the kernel turns busy meanwhile, the message waits in its queue; past this
            # moment the kernel refuses it, so a decision we report as not made cannot happen
            # later. It lies a margin before our own deadline: a decision the kernel takes
            # just in time still has its reply (after the journal's fsync) reach us in time.
            "not_after": iso_utc(time.time() + self.timeout - _reply_margin(self.timeout)),
        }
        if before_sending is not None:
            before_sending()
        return await self.ask(kernel_id, message)

    async def ask(self, kernel_id: str, data: dict[str, Any]) -> dict[str, Any]:
        """Send one comm message to a kernel and return its reply (raises on no answer)."""
        if kernel_id not in self.running():
            raise KeyError(kernel_id)
        link = self._link(kernel_id)
        link.start()
        return await link.request(data, self.timeout)

    async def _tell(self, kernel_id: str) -> None:
        """Ask the kernel for its list, telling it its session's notebook (3.1)."""
        link = self._link(kernel_id)
        path = self._notebook_of(kernel_id)
        listing = {"op": "list", "notebook_path": path} if path else {"op": "list"}
        await self.ask(kernel_id, listing)
        link.told_path = path

    def _needs_asking(self, kernel_id: str) -> bool:
        link = self._link(kernel_id)
        if link.approvals is False or self.busy(kernel_id):
            return False
        if execution_state(self._kernel_manager, kernel_id) == "starting":
            # No client has sent it anything yet, so no code ran and nothing is pending; asking
            # would be the first message it handles, and change what jupyter_server reports.
            return False
        if link.approvals is None or not link.comm_open:
            return True
        # A change message lost on the way (iopub drops what a slow reader cannot take)
        # would leave the copy wrong until the next change: an idle kernel is asked again,
        # but only once it handled someone else's message since (asking is activity to
        # jupyter_server, and an idle kernel asked every half minute would never be culled).
        if link.heard_at is None:
            return True
        if time.monotonic() - link.heard_at > RELIST_AFTER_S and link.active_since_heard():
            return True
        path = self._notebook_of(kernel_id)
        return path is not None and path != link.told_path

    async def refresh(self) -> dict[str, BaseException]:
        """Ask the idle kernels that need asking (unknown ones, ones to be told a notebook
        path), concurrently, each within the timeout; return what each failed with."""
        running = self.sync()
        asking = [k for k in running if k in self._links and self._needs_asking(k)]
        answers = await asyncio.gather(*(self._tell(k) for k in asking), return_exceptions=True)
        failed = {}
        for kernel_id, answer in zip(asking, answers, strict=True):
            if isinstance(answer, BaseException):
                if not isinstance(answer, KernelUnavailable | NoApprovals | KeyError):
                    self._log.warning("asking kernel %s failed: %r", kernel_id, answer)
                failed[kernel_id] = answer
        return failed

    def refresh_soon(self) -> None:
        """Start :meth:`refresh` without waiting for it (the server's sweep)."""
        if self._telling:
            return
        task = asyncio.ensure_future(self.refresh())
        self._telling.add(task)
        task.add_done_callback(self._telling.discard)

    # -- what is pending -------------------------------------------------------------------

    async def list_all(self) -> dict[str, Any]:
        """Every kernel's pending requests, from memory, oldest first; see docs/protocol.md
        6.1 (the body of ``GET pending`` without the requests the server holds)."""
        rows, listing = await self.snapshot()
        pending = [row.item for row in rows]
        pending.sort(key=lambda item: str(item.get("created_at", "")))
        return {"pending": pending, **listing}

    async def snapshot(self) -> tuple[list[Row], dict[str, Any]]:
        """Every kernel's pending requests as rows, and the rest of the listing.

        Only kernels never heard from are asked (idle ones; a busy one is named in
        ``unanswered_kernels``). A kernel whose journal is not below the server's state
        directory is listed in ``journal_errors`` with ``elsewhere``: the History tab, which
        reads the server's, would not show what it records.
        """
        await self.refresh()
        rows: list[Row] = []
        unanswered: list[str] = []
        busy: list[str] = []
        without: list[str] = []
        journal_errors: list[dict[str, str]] = []
        decided: list[dict[str, Any]] = []
        for kernel_id in self.running():
            link = self._links.get(kernel_id)
            if link is None or link.approvals is None or link.listing is None:
                if link is not None and link.approvals is False:
                    without.append(kernel_id)
                else:
                    unanswered.append(kernel_id)
                continue
            kernel_busy = self.busy(kernel_id)
            if kernel_busy:
                busy.append(kernel_id)
            decide_now = not kernel_busy or link.awaited()
            # The listing has its documented shape (listing_shape.well_formed).
            for request in link.listing["requests"]:
                item = {
                    **request,
                    "kernel_id": kernel_id,
                    "kernel_busy": kernel_busy,
                    "decide_now": decide_now,
                    "min_answer_ms": link.listing["min_answer_ms"],
                }
                key = (kernel_id, request["id"], link.version, kernel_busy, decide_now)
                rows.append(Row(key, item))
            journal_errors.extend(self._journal_errors(kernel_id, link.listing))
            decided.extend({**d, "kernel_id": kernel_id} for d in link.listing["decided"])
        return rows, {
            "last_decision": max(decided, key=lambda d: str(d["decided_at"]), default=None),
            "unanswered_kernels": unanswered,
            "busy_kernels": busy,
            "kernels_without_approvals": without,
            "journal_errors": journal_errors,
        }

    def row_of(self, kernel_id: str, request_id: str) -> dict[str, Any] | None:
        """The pending request ``request_id`` as kernel ``kernel_id``'s last listing shows
        it, with the notebook it names (else the kernel's session's); None if not listed."""
        link = self._links.get(kernel_id)
        request = link.listed(request_id) if link is not None else None
        if request is None:
            return None
        path = request.get("notebook_path")
        return {
            **request,
            "notebook_path": path if isinstance(path, str) else self._notebook_of(kernel_id),
        }

    def request_known(self, kernel_id: str, request_id: str) -> tuple[bool, str | None]:
        """Whether the kernel's last listing has ``request_id`` pending, and the notebook that
        request (else the kernel's session) names."""
        link = self._links.get(kernel_id)
        if link is None:
            return False, None
        request = link.listed(request_id)
        path = request.get("notebook_path") if request is not None else None
        return request is not None, path if isinstance(path, str) else self._notebook_of(kernel_id)

    def journals_elsewhere(self) -> set[str]:
        """Journal files outside the server's state directory that kernels of this server
        wrote to (since the server started: one that stopped is remembered)."""
        for link in self._links.values():
            if link.listing is not None:
                elsewhere = _outside(link.listing["journal"]["path"], self._state_dir)
                if elsewhere is not None and len(self._elsewhere) < MAX_ELSEWHERE:
                    self._elsewhere.add(elsewhere)
        return set(self._elsewhere)

    def _journal_errors(self, kernel_id: str, listing: dict[str, Any]) -> list[dict[str, str]]:
        journal = listing["journal"]
        found = []
        error = journal.get("error")
        if error:
            found.append({"kernel_id": kernel_id, "error": str(error)})
        elsewhere = _outside(journal.get("path"), self._state_dir)
        if elsewhere is not None:
            found.append(
                {
                    "kernel_id": kernel_id,
                    "error": f"this kernel records its decisions in {elsewhere}, "
                    f"outside this server's state directory {self._state_dir}",
                    "elsewhere": elsewhere,
                }
            )
        return found


class Row(NamedTuple):
    """One kernel request of the pending list, with what identifies its content: the kernel,
    the request, the version of the kernel's listing it came from and the kernel's state."""

    key: tuple[object, ...]
    item: dict[str, Any]


def _ready(kernel_manager: Any, kernel_id: str) -> bool:
    """Whether the kernel has started (with ``use_pending_kernels`` it is listed before)."""
    try:
        ready = getattr(kernel_manager.get_kernel(kernel_id), "ready", None)
    except KeyError:
        return False
    done = getattr(ready, "done", None)
    return bool(done()) if callable(done) else True


# States in which a kernel has no process that could hold requests.
_GONE_STATES = frozenset({"dead", "restarting"})
