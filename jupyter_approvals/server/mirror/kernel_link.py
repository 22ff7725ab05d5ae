"""One connection from the server to one kernel: the comm contract over a kernel client, and
the server's copy of what is pending in that kernel.

The link reads the kernel's iopub from the moment it exists. A kernel serving approvals
publishes ``changed`` on its marker comm after every change (docs/protocol.md 3.2), also while
a cell runs, so :attr:`KernelLink.listing` follows the kernel without asking it. Questions
(``list``, ``decide``) go over a ``jupyter_approvals`` comm of the link's own; replies are
matched to requests by their parent message id, and every question has a deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from typing import Any

from ...core.protocol import COMM_TARGET, MARKER_COMM_PREFIX
from .listing_shape import as_first_listed, well_formed


class KernelUnavailable(Exception):
    """The kernel did not answer in time, or stopped."""


class Unanswered(KernelUnavailable):
    """The message itself was sent (it waits in the kernel's queue); no reply came in time."""


class NoApprovals(Exception):
    """The kernel has not loaded jupyter-approvals (nothing can be pending there)."""


class KernelBusy(Exception):
    """The kernel is running a cell that does not await a decision: it cannot take one now."""


class NotListed(Exception):
    """The kernel, which cannot be asked now, does not list that request as pending."""


class KernelLink:
    """A connection to one kernel, and what the kernel last said was pending."""

    def __init__(self, kernel_id: str, client: Any) -> None:
        self.kernel_id = kernel_id
        self._client = client
        self._comm_id: str | None = None
        self._waiting: dict[str, _Waiter] = {}
        self._lock = asyncio.Lock()
        self._closed = False
        self._readers: list[asyncio.Task[None]] = []
        #: True once the kernel said it serves approvals, False once it said it does not,
        #: None while unknown (never asked, or restarted since).
        self.approvals: bool | None = None
        #: The body of the kernel's last ``pending`` or ``changed`` message, else None.
        self.listing: dict[str, Any] | None = None
        #: The notebook path last told to the kernel (display only, docs/protocol.md 3.1).
        self.told_path: str | None = None
        # The session id in the headers of the kernel process the listing came from: another
        # one means the kernel was restarted and the listing is void.
        self._process: str | None = None
        self._heard_iopub = False
        self._listings = 0
        #: Changes whenever :attr:`listing` does (a cache of rendered rows keys on it).
        self.version = 0
        #: When the last listing came (monotonic seconds), else None.
        self.heard_at: float | None = None
        #: When the kernel last started handling a message that was not the link's own.
        self.active_at: float | None = None
        # Ids of the messages (not ours) the kernel said it is busy with and not yet idle;
        # None until a status was seen.
        self._busy_with: set[str] | None = None

    # -- the server's copy ---------------------------------------------------------------

    @property
    def comm_open(self) -> bool:
        """Whether the link has its own comm in the kernel (to send decisions on)."""
        return self._comm_id is not None

    def awaited(self) -> bool:
        """Whether a cell of the kernel awaits a decision (then the kernel takes one although
        it is busy: ipykernel handles comm messages while an async cell awaits)."""
        return bool((self.listing or {}).get("awaited"))

    def busy_with_others(self) -> bool | None:
        """Whether the kernel is busy with a message of another client (a cell), as far as
        its status messages tell; None when the link has seen none yet. The link's own
        questions, which make the kernel busy for a moment, do not count."""
        return None if self._busy_with is None else bool(self._busy_with)

    def listed(self, request_id: str) -> dict[str, Any] | None:
        """The pending request ``request_id`` as the kernel's last listing has it, else None."""
        requests = self.listing["requests"] if self.listing is not None else []
        return next((r for r in requests if r["id"] == request_id), None)

    def forget_kernel_state(self) -> None:
        """Drop everything known of the kernel's process (it restarted or died)."""
        self.approvals = None
        self.listing = None
        self.version += 1
        self.told_path = None
        self._process = None
        self._comm_id = None  # that process's comms are gone with it; nothing to close
        self._heard_iopub = False
        self._busy_with = None

    def active_since_heard(self) -> bool:
        """Whether the kernel handled something of someone else's since its last listing."""
        return self.active_at is not None and (
            self.heard_at is None or self.active_at > self.heard_at
        )

    def _heard_listing(self, data: dict[str, Any], process: object) -> None:
        # Code in the kernel can publish anything on its iopub: keep only what has the
        # listing's shape, so one kernel's message can spoil nothing but its own rows.
        self.listing = as_first_listed(self.listing, well_formed(data))
        self.heard_at = time.monotonic()
        self.approvals = True
        self._listings += 1
        self.version += 1
        if isinstance(process, str):
            self._process = process

    # -- connection ----------------------------------------------------------------------

    def start(self) -> None:
        """Connect and start reading (idempotent; needs the running event loop)."""
        if self._readers or self._closed:
            return
        self._client.start_channels(shell=True, iopub=True, stdin=False, hb=False, control=False)
        subscribe_to_what_the_link_reads(self._client.iopub_channel.socket)
        self._readers = [
            asyncio.create_task(self._read(self._client.get_iopub_msg, "iopub")),
            asyncio.create_task(self._read(self._client.get_shell_msg, "shell")),
        ]

    async def _until_iopub(self, deadline: float) -> None:
        # Called under the lock. A subscriber misses what is published before it is connected:
        # a comm's first reply comes on iopub, so ask until iopub carried something.
        self.start()
        while not self._heard_iopub:
            with contextlib.suppress(KernelUnavailable):
                await self._ask("kernel_info_request", {}, _until(deadline, cap=1.0))
            if self._heard_iopub:
                return
            if _until(deadline) <= 0:
                raise KernelUnavailable("the kernel's iopub carried nothing in time")
            await asyncio.sleep(0.02)

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
                await self._until_iopub(deadline)
                if self._comm_id is None:
                    first = data if data.get("op") == "list" else {"op": "list"}
                    opened = await self._open_comm(deadline, first)
                    if data.get("op") == "list":
                        return _data(opened)
                comm_id = self._comm_id
            finally:
                self._lock.release()
            try:
                reply = await self._ask(
                    "comm_msg",
                    {"comm_id": comm_id, "data": data},
                    _until(deadline),
                    comm_id=comm_id,
                    ops=expected,
                )
            except KernelUnavailable as exc:
                raise Unanswered(str(exc)) from exc
        except KernelUnavailable:
            self._forget_comm()
            raise
        if reply["msg_type"] == "comm_close":
            self._comm_id = None
            self.approvals = False
            raise NoApprovals(self.kernel_id)
        return _data(reply)

    async def _open_comm(self, deadline: float, listing: dict[str, Any]) -> dict[str, Any]:
        # A kernel known to serve approvals is not asked again: ``comm_info_request`` waits
        # while a cell runs, a ``comm_open`` does not while the cell awaits a decision.
        if self.approvals is not True:
            heard = self._listings
            reply = await self._ask(
                "comm_info_request", {"target_name": COMM_TARGET}, _until(deadline)
            )
            if not (reply.get("content") or {}).get("comms"):
                if self._listings == heard:  # not announced meanwhile
                    self.approvals = False
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
            self.approvals = False
            raise NoApprovals(self.kernel_id)
        return opened

    def _forget_comm(self) -> None:
        # Close it in the kernel too: a busy kernel handles this after the cell, a restarted
        # one ignores it; either way no orphan comm is left behind.
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

    async def _read(self, receive: Any, channel: str) -> None:
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
            if channel == "iopub":
                self._observe(msg)
            self._dispatch(msg)

    def _observe(self, msg: dict[str, Any]) -> None:
        self._heard_iopub = True
        process = (msg.get("header") or {}).get("session")
        if self._process is not None and isinstance(process, str) and process != self._process:
            self.forget_kernel_state()
            self._heard_iopub = True
        content = msg.get("content") or {}
        if msg.get("msg_type") == "status":
            self._follow_status(msg, content.get("execution_state"))
        if msg.get("msg_type") != "comm_msg":
            return
        data = content.get("data")
        comm_id = str(content.get("comm_id"))
        ours = comm_id == self._comm_id or comm_id.startswith(MARKER_COMM_PREFIX)
        if ours and isinstance(data, dict) and data.get("op") in ("pending", "changed"):
            self._heard_listing(data, process)

    def _follow_status(self, msg: dict[str, Any], state: object) -> None:
        parent_header = msg.get("parent_header") or {}
        parent = parent_header.get("msg_id")
        busy_with = self._busy_with if self._busy_with is not None else set()
        self._busy_with = busy_with
        if state == "starting" or not isinstance(parent, str):
            busy_with.clear()
        elif parent_header.get("subshell_id") or parent_header.get("msg_type") in _BESIDE_CELLS:
            # Handled in a thread of its own (control channel, subshell): the kernel's main
            # shell, where a decision is read, is not held by it.
            pass
        elif state == "busy" and parent not in self._waiting:
            busy_with.add(parent)
            self.active_at = time.monotonic()
        elif state == "idle":
            busy_with.discard(parent)

    def _dispatch(self, msg: dict[str, Any]) -> None:
        parent_id = (msg.get("parent_header") or {}).get("msg_id")
        waiter = self._waiting.get(parent_id) if parent_id else None
        if waiter is not None and not waiter.future.done() and waiter.accepts(msg):
            waiter.future.set_result({"msg_type": msg["msg_type"], "content": msg["content"]})


_REPLY_OPS = {"list": {"pending"}, "decide": {"decided"}}

#: Messages a kernel handles on its control channel, beside a running cell.
_BESIDE_CELLS = frozenset(
    {
        "usage_request",
        "debug_request",
        "interrupt_request",
        "shutdown_request",
        "create_subshell_request",
        "delete_subshell_request",
        "list_subshell_request",
        "abort_request",
        "clear_request",
    }
)


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


#: iopub topics the link reads: ipykernel publishes status (and execute_input) under
#: ``kernel.<id>.``, comm messages under ``comm-<comm id>``. Outputs (``stream.*``,
#: ``display_data``, ``execute_result``, ``error``) are left out, so a person's output costs the
#: server nothing here whatever its size: the kernel's publisher filters them before sending.
#: (A message published without a topic is left out too; kernels that serve approvals are
#: ipykernels, which always give one. The delimiter cannot be a topic: ipykernel answers each
#: subscription with a welcome message that carries the topic as its first frame.)
LINK_TOPICS = (b"kernel.", b"comm-")


def subscribe_to_what_the_link_reads(socket: Any) -> None:
    """Narrow an iopub SUB socket (subscribed to everything) to :data:`LINK_TOPICS`."""
    import zmq

    socket.setsockopt(zmq.UNSUBSCRIBE, b"")
    for topic in LINK_TOPICS:
        socket.setsockopt(zmq.SUBSCRIBE, topic)


def async_client(kernel: Any, session: Any) -> Any:
    """An asyncio client of ``kernel``'s channels with ``session``, whatever client class its
    manager makes: a blocking client (the synchronous ``KernelManager``) would block the
    server's event loop in every read."""
    from jupyter_client.asynchronous.client import AsyncKernelClient

    info = dict(kernel.get_connection_info(session=True))
    info.update(session=session, parent=kernel)
    for key in ("curve_publickey", "curve_secretkey"):
        if isinstance(info.get(key), str):
            info[key] = info[key].encode("ascii")
    return AsyncKernelClient(**info)
