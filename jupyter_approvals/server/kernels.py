"""How the server asks running kernels about approvals: the comm contract, over kernel clients.

One :class:`KernelLink` per kernel keeps an async client connected (so a poll costs one round
trip, not a new connection) and a ``jupyter_approvals`` comm open once the kernel serves
approvals. Replies are matched to requests by their parent message id. Every question has a
timeout: a busy or dead kernel is reported as unanswered and never blocks the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from jupyter_client.session import Session

from ..core.model import iso_utc
from ..core.protocol import COMM_TARGET

#: Where the web app's settings keep the server's :class:`KernelLinks`.
LINKS_SETTING = "jupyter_approvals.links"


class KernelUnavailable(Exception):
    """The kernel did not answer in time, or stopped."""


class NoApprovals(Exception):
    """The kernel has not loaded jupyter-approvals (nothing can be pending there)."""


class KernelLink:
    """A connection to one kernel, speaking the ``jupyter_approvals`` comm contract."""

    def __init__(self, kernel_id: str, client: Any) -> None:
        self.kernel_id = kernel_id
        self._client = client
        self._comm_id: str | None = None
        self._waiting: dict[str, _Waiter] = {}
        self._lock = asyncio.Lock()
        self._ready = False
        self._closed = False
        self._readers: list[asyncio.Task[None]] = []

    async def _start(self, deadline: float) -> None:
        # Called under the lock: two first requests must not start the channels twice.
        if self._ready:
            return
        if not self._readers:
            self._client.start_channels(
                shell=True, iopub=True, stdin=False, hb=False, control=False
            )
            self._readers = [
                asyncio.create_task(self._read(self._client.get_iopub_msg)),
                asyncio.create_task(self._read(self._client.get_shell_msg)),
            ]
        # A subscriber can miss what is sent right after it connects: ask until iopub answers.
        while True:
            try:
                await self._ask("kernel_info_request", {}, _until(deadline, cap=1.0))
                break
            except KernelUnavailable:
                if _until(deadline) <= 0:
                    raise
        self._ready = True

    def close(self) -> None:
        """Close our comm in the kernel, stop reading and disconnect."""
        self._closed = True
        self._forget_comm()
        for task in self._readers:
            task.cancel()
        with contextlib.suppress(Exception):
            self._client.stop_channels()
        for waiter in self._waiting.values():
            if not waiter.future.done():
                waiter.future.set_exception(KernelUnavailable("the connection was closed"))

    async def request(self, data: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Send ``data`` on the approvals comm and return the kernel's reply data.

        ``timeout`` bounds the whole exchange. On no answer the comm is closed and forgotten
        (the kernel may be busy, or restarted and no longer know it); the next request opens
        a new one. The connection itself is kept.
        """
        deadline = asyncio.get_running_loop().time() + timeout
        expected = _REPLY_OPS.get(str(data.get("op")), set()) | {"error"}
        try:
            try:
                await asyncio.wait_for(self._lock.acquire(), _until(deadline))
            except asyncio.TimeoutError:
                raise KernelUnavailable("another request to this kernel is still waiting") from None
            try:
                await self._start(deadline)
                if self._comm_id is None:
                    first = data if data.get("op") == "list" else {"op": "list"}
                    opened = await self._open_comm(deadline, first)
                    if data.get("op") == "list":
                        return _data(opened)
                comm_id = self._comm_id
            finally:
                self._lock.release()
            reply = await self._ask(
                "comm_msg",
                {"comm_id": comm_id, "data": data},
                _until(deadline),
                comm_id=comm_id,
                ops=expected,
            )
        except KernelUnavailable:
            self._forget_comm()
            raise
        if reply["msg_type"] == "comm_close":
            self._comm_id = None
            raise NoApprovals(self.kernel_id)
        return _data(reply)

    async def _open_comm(self, deadline: float, listing: dict[str, Any]) -> dict[str, Any]:
        reply = await self._ask("comm_info_request", {"target_name": COMM_TARGET}, _until(deadline))
        if not (reply.get("content") or {}).get("comms"):
            raise NoApprovals(self.kernel_id)
        comm_id = uuid.uuid4().hex
        self._comm_id = comm_id  # so that a timeout below closes it in the kernel
        opened = await self._ask(
            "comm_open",
            {"comm_id": comm_id, "target_name": COMM_TARGET, "data": listing},
            _until(deadline),
            comm_id=comm_id,
            ops={"pending", "error"},
        )
        if opened["msg_type"] == "comm_close":
            self._comm_id = None
            raise NoApprovals(self.kernel_id)
        return opened

    def _forget_comm(self) -> None:
        # Close it in the kernel too: a busy kernel handles this after the cell, a restarted
        # one ignores it; either way no orphan comm keeps receiving "changed" messages.
        comm_id, self._comm_id = self._comm_id, None
        if comm_id is not None and self._readers:
            with contextlib.suppress(Exception):
                self._client.shell_channel.send(
                    self._client.session.msg("comm_close", {"comm_id": comm_id, "data": {}})
                )

    async def _ask(
        self,
        msg_type: str,
        content: dict[str, Any],
        timeout: float,
        comm_id: str | None = None,
        ops: set[str] | None = None,
    ) -> dict[str, Any]:
        message = self._client.session.msg(msg_type, content)
        msg_id = message["header"]["msg_id"]
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[msg_id] = _Waiter(future, msg_type, comm_id, ops)
        try:
            self._client.shell_channel.send(message)
            return await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            raise KernelUnavailable(f"no answer within {timeout:g} s") from None
        finally:
            self._waiting.pop(msg_id, None)

    async def _read(self, receive: Any) -> None:
        while not self._closed:
            try:
                msg = await receive()
            except asyncio.CancelledError:
                raise
            except Exception:
                # A message that fails to parse or verify is dropped; a closed socket ends.
                if self._closed:
                    return
                await asyncio.sleep(0.05)
                continue
            self._dispatch(msg)

    def _dispatch(self, msg: dict[str, Any]) -> None:
        parent_id = (msg.get("parent_header") or {}).get("msg_id")
        waiter = self._waiting.get(parent_id) if parent_id else None
        if waiter is not None and not waiter.future.done() and waiter.accepts(msg):
            waiter.future.set_result({"msg_type": msg["msg_type"], "content": msg["content"]})


# Which reply op answers which request op (the kernel also broadcasts "changed" meanwhile).
_REPLY_OPS = {"list": {"pending"}, "decide": {"decided"}}


class _Waiter:
    """A request waiting for its reply, and how to recognise that reply."""

    def __init__(
        self,
        future: asyncio.Future[dict[str, Any]],
        msg_type: str,
        comm_id: str | None,
        ops: set[str] | None,
    ) -> None:
        self.future = future
        self._reply_type = msg_type.replace("_request", "_reply")
        self._comm_id = comm_id
        self._ops = ops or set()

    def accepts(self, msg: dict[str, Any]) -> bool:
        msg_type = msg.get("msg_type")
        content = msg.get("content") or {}
        if self._comm_id is None:
            return bool(msg_type == self._reply_type)
        if content.get("comm_id") != self._comm_id:
            return False
        if msg_type == "comm_close":
            return True
        data = content.get("data") or {}
        return msg_type == "comm_msg" and isinstance(data, dict) and data.get("op") in self._ops


def _until(deadline: float, cap: float | None = None) -> float:
    """Seconds left before ``deadline`` (loop time), at most ``cap``, never negative."""
    left = max(0.0, deadline - asyncio.get_running_loop().time())
    return min(left, cap) if cap is not None else left


def _data(reply: dict[str, Any]) -> dict[str, Any]:
    data = (reply.get("content") or {}).get("data") or {}
    return dict(data) if isinstance(data, dict) else {}


def _outside(path: object, state_dir: Path | None) -> str | None:
    """``path`` when it is a journal path that is not below ``state_dir`` (resolved), else
    None."""
    if state_dir is None or not isinstance(path, str) or not path:
        return None
    return None if Path(path).resolve().is_relative_to(state_dir) else path


class KernelLinks:
    """Links to every running kernel of a server, created on demand and pruned as kernels go."""

    def __init__(
        self,
        kernel_manager: Any,
        timeout: float,
        log: logging.Logger | logging.LoggerAdapter[Any],
        state_dir: Path | None = None,
    ) -> None:
        self._kernel_manager = kernel_manager
        self.timeout = timeout
        self._log = log
        # The server's state directory: a kernel journaling elsewhere is flagged.
        self._state_dir = state_dir.resolve() if state_dir is not None else None
        self._links: dict[str, KernelLink] = {}

    def running(self) -> list[str]:
        """Ids of the kernels running now."""
        return list(self._kernel_manager.list_kernel_ids())

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
            link = KernelLink(kernel_id, kernel.client(session=session))
            self._links[kernel_id] = link
        return link

    def prune(self, running: Iterable[str]) -> None:
        """Close the links of kernels that are gone."""
        alive = set(running)
        for kernel_id in [k for k in self._links if k not in alive]:
            self._links.pop(kernel_id).close()

    def close(self) -> None:
        """Close every link (server shutdown)."""
        self.prune(())

    async def decide(
        self,
        kernel_id: str,
        request_id: str,
        decision: str,
        fingerprint: object,
        reason: str,
        channel: str,
        decided_by: str | None,
    ) -> dict[str, Any]:
        """Send a person's decision to a kernel's endpoint; return its ``decided`` reply."""
        message = {
            "op": "decide",
            "id": request_id,
            "decision": decision,
            "fingerprint": fingerprint,
            "reason": reason,
            "channel": channel,
            "decided_by": decided_by,
            # If the kernel is busy, the message waits in its queue; past this moment the
            # kernel refuses it, so a decision we report as not made cannot happen later.
            "not_after": iso_utc(time.time() + self.timeout),
        }
        return await self.ask(kernel_id, message)

    async def ask(self, kernel_id: str, data: dict[str, Any]) -> dict[str, Any]:
        """Send one comm message to a kernel and return its reply (raises on no answer)."""
        if kernel_id not in self.running():
            raise KeyError(kernel_id)
        link = self._link(kernel_id)
        return await link.request(data, self.timeout)

    async def list_all(
        self, notebook_of: Callable[[str], str | None] | None = None
    ) -> dict[str, Any]:
        """Every kernel's pending requests, asked concurrently; see docs/protocol.md 6.1.

        ``notebook_of(kernel_id)`` names the notebook a kernel's session has, which the list
        message tells the kernel (for display: a kernel started over REST and given a session
        afterwards knows no notebook of its own). A kernel whose journal is not below the
        server's state directory is listed in ``journal_errors`` with ``elsewhere``: the
        History tab, which reads the server's, would not show what it records.
        """
        running = self.running()
        self.prune(running)

        def listing(kernel_id: str) -> dict[str, Any]:
            path = notebook_of(kernel_id) if notebook_of is not None else None
            return {"op": "list", "notebook_path": path} if path else {"op": "list"}

        answers = await asyncio.gather(
            *(self.ask(kernel_id, listing(kernel_id)) for kernel_id in running),
            return_exceptions=True,
        )
        pending: list[dict[str, Any]] = []
        unanswered: list[str] = []
        without: list[str] = []
        journal_errors: list[dict[str, str]] = []
        for kernel_id, answer in zip(running, answers, strict=True):
            if isinstance(answer, NoApprovals):
                without.append(kernel_id)
            elif isinstance(answer, BaseException):
                if not isinstance(answer, KernelUnavailable | KeyError):
                    self._log.warning("asking kernel %s failed: %r", kernel_id, answer)
                unanswered.append(kernel_id)
            else:
                for request in answer.get("requests") or []:
                    if isinstance(request, dict):
                        pending.append({**request, "kernel_id": kernel_id})
                journal = answer.get("journal") or {}
                error = journal.get("error")
                if error:
                    journal_errors.append({"kernel_id": kernel_id, "error": str(error)})
                elsewhere = _outside(journal.get("path"), self._state_dir)
                if elsewhere is not None:
                    journal_errors.append(
                        {
                            "kernel_id": kernel_id,
                            "error": f"this kernel records its decisions in {elsewhere}, "
                            f"outside this server's state directory {self._state_dir}",
                            "elsewhere": elsewhere,
                        }
                    )
        pending.sort(key=lambda item: str(item.get("created_at", "")))
        return {
            "pending": pending,
            "unanswered_kernels": unanswered,
            "kernels_without_approvals": without,
            "journal_errors": journal_errors,
        }
