"""Drive a real kernel from outside, exactly as a browser frontend would.

:class:`KernelFrontend` starts (or attaches to) a kernel through jupyter_client, runs cells,
watches the widget and comm traffic on iopub, and sends the same messages the card view and
the sidebar send: widget ``custom`` messages and ``jupyter_approvals`` comm messages. It
renders nothing. It refuses to drive the kernel it runs inside: a kernel answering its own
approvals is exactly what the product exists to prevent.

    with KernelFrontend.start(cwd=project_dir) as fe:
        fe.execute("import jupyter_approvals as ja ...")
        card = fe.cards()[-1]
        time.sleep(1.1)
        fe.click(card, "approve")
"""

from __future__ import annotations

import os
import queue
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jupyter_client.manager import KernelManager

from .core.protocol import COMM_TARGET, MARKER_COMM_PREFIX, SHOWN_FIELDS

WIDGET_TARGET = "jupyter.widget"
CARD_MODEL = "ApprovalCard"


@dataclass
class Execution:
    """What one executed cell produced."""

    status: str
    outputs: list[dict[str, Any]] = field(default_factory=list)
    #: The exception the cell ended with (``ename``, ``evalue``, ``traceback``), as its
    #: ``execute_reply`` says: a cell can end in error without an error output.
    error: dict[str, Any] | None = None
    #: The error output the cell published (what a notebook shows in red), if any.
    error_output: dict[str, Any] | None = None

    @property
    def ename(self) -> str | None:
        """The exception class name, if the cell raised."""
        return self.error.get("ename") if self.error else None

    @property
    def evalue(self) -> str:
        """The exception text, if the cell raised."""
        return str(self.error.get("evalue", "")) if self.error else ""

    @property
    def stdout(self) -> str:
        """Everything the cell printed."""
        return "".join(o.get("text", "") for o in self.outputs if o.get("name") == "stdout")

    def data(self, mime: str = "text/plain") -> list[str]:
        """The given representation of each display or result output."""
        return [o["data"][mime] for o in self.outputs if mime in o.get("data", {})]


@dataclass
class Widget:
    """A widget model as a frontend knows it: id and synced state."""

    model_id: str
    state: dict[str, Any]


class KernelFrontend:
    """A frontend for tests and tools; see the module docstring."""

    def __init__(self, manager: KernelManager) -> None:
        self.manager = manager
        self.client = manager.client()
        _refuse_own_kernel(self.client.session.key)
        self.client.start_channels()
        self.client.wait_for_ready(timeout=60)
        self.widgets: dict[str, Widget] = {}
        self._endpoint: str | None = None
        self._endpoint_messages: list[dict[str, Any]] = []

    @classmethod
    @contextmanager
    def start(
        cls,
        cwd: str | os.PathLike[str],
        env: Mapping[str, str] | None = None,
        kernel_name: str = "python3",
    ) -> Iterator[KernelFrontend]:
        """Start a kernel in ``cwd`` and drive it; shut it down afterwards."""
        manager = KernelManager(kernel_name=kernel_name)
        manager.start_kernel(cwd=str(cwd), env={**os.environ, **(env or {})})
        try:
            frontend = cls(manager)
            try:
                yield frontend
            finally:
                frontend.client.stop_channels()
        finally:
            manager.shutdown_kernel(now=True)

    # -- cells ---------------------------------------------------------------------------

    def execute(self, code: str, timeout: float = 60, cell_id: str | None = None) -> Execution:
        """Run ``code`` as a cell (with a cell id, as JupyterLab sends) and collect outputs."""
        return self.collect(self.submit(code, cell_id), timeout)

    def submit(self, code: str, cell_id: str | None = None) -> str:
        """Start ``code`` without waiting; pass the returned id to :meth:`collect`."""
        msg = self.client.session.msg(
            "execute_request",
            {
                "code": code,
                "silent": False,
                "store_history": True,
                "user_expressions": {},
                "allow_stdin": False,
                "stop_on_error": True,
            },
            metadata={"cellId": cell_id or uuid.uuid4().hex},
        )
        self.client.shell_channel.send(msg)
        return str(msg["header"]["msg_id"])

    def collect(self, msg_id: str, timeout: float = 60) -> Execution:
        """Outputs of the cell ``msg_id`` until it is idle."""
        result = Execution(status="unknown")
        deadline = time.monotonic() + timeout
        idle = False
        while not idle:
            msg = self._next_iopub(deadline)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind in ("stream", "display_data", "execute_result"):
                result.outputs.append({"output_type": kind, **content})
            elif kind == "error":
                result.error_output = content
            elif kind == "status" and content.get("execution_state") == "idle":
                idle = True
        reply = self._execute_reply(msg_id, deadline)
        if reply.get("status") == "error":
            result.error = {key: reply.get(key) for key in ("ename", "evalue", "traceback")}
        elif reply.get("status") is None:  # no reply in time: what the outputs said
            result.error = result.error_output
        result.status = "error" if result.error else "ok"
        return result

    def _execute_reply(self, msg_id: str, deadline: float) -> dict[str, Any]:
        """The content of the ``execute_reply`` to ``msg_id`` (replies to others are dropped:
        nothing here waits for them), or an empty dict when none came before the deadline."""
        while True:
            try:
                reply = self.client.get_shell_msg(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                return {}
            if reply["parent_header"].get("msg_id") == msg_id:
                return dict(reply["content"])
            if time.monotonic() > deadline:
                return {}

    # -- widgets (the approval card) ----------------------------------------------------

    def cards(self) -> list[Widget]:
        """Approval card models seen so far, in the order they were created."""
        self.pump()
        return [
            w
            for w in self.widgets.values()
            if w.state.get("_anywidget_id", "").endswith(CARD_MODEL)
        ]

    def card(self, model_id: str) -> Widget:
        """The latest synced state of one card."""
        self.pump()
        return self.widgets[model_id]

    def click(
        self, card: Widget, decision: str, reason: str = "", fingerprint: str | None = None
    ) -> None:
        """Press Approve or Reject in a card: the message card.js sends, with what it shows.

        The card's state is what has arrived by now, as a browser's view holds it when a
        person clicks: nothing is waited for.
        """
        self._drain()
        state = self.widgets[card.model_id].state
        self.send_widget_message(
            card.model_id,
            {
                "op": "decide",
                "id": state.get("request_id"),
                "decision": decision,
                "fingerprint": state.get("fingerprint") if fingerprint is None else fingerprint,
                "reason": reason,
                "shown": {name: state.get(name) for name in SHOWN_FIELDS},
            },
        )

    def dismiss(self, card: Widget) -> None:
        """Press the card's close button."""
        self.send_widget_message(card.model_id, {"op": "dismiss"})

    def send_widget_message(self, model_id: str, content: dict[str, Any]) -> None:
        """Send a widget ``custom`` message, as a widget view's ``model.send`` does."""
        self._send(
            "comm_msg", {"comm_id": model_id, "data": {"method": "custom", "content": content}}
        )

    # -- the jupyter_approvals comm -----------------------------------------------------

    def list_pending(self, timeout: float = 10) -> dict[str, Any]:
        """Ask the kernel's endpoint for its pending requests (opens the comm on first use)."""
        return self._request({"op": "list"}, "pending", timeout)

    def decide(
        self,
        request_id: str,
        decision: str,
        fingerprint: str,
        reason: str = "",
        channel: str = "sidebar",
        timeout: float = 10,
    ) -> dict[str, Any]:
        """Send a decision through the endpoint, as the sidebar does; returns ``decided``."""
        return self._request(
            {
                "op": "decide",
                "id": request_id,
                "decision": decision,
                "fingerprint": fingerprint,
                "reason": reason,
                "channel": channel,
            },
            "decided",
            timeout,
        )

    def send_endpoint(self, data: object) -> None:
        """Send any payload on the endpoint comm (tests of malformed messages)."""
        self._ensure_endpoint()
        self._send("comm_msg", {"comm_id": self._endpoint, "data": data})

    def endpoint_messages(
        self, op: str | None = None, timeout: float = 0.2
    ) -> list[dict[str, Any]]:
        """Messages the endpoint sent so far, optionally only those with ``op``."""
        self.pump(timeout)
        return [m for m in self._endpoint_messages if op is None or m.get("op") == op]

    def _ensure_endpoint(self) -> None:
        if self._endpoint is None:
            self._endpoint = uuid.uuid4().hex
            self._send(
                "comm_open",
                {"comm_id": self._endpoint, "target_name": COMM_TARGET, "data": {}},
            )

    def _request(self, data: dict[str, Any], reply_op: str, timeout: float) -> dict[str, Any]:
        self._ensure_endpoint()
        seen = len(self._endpoint_messages)
        self._send("comm_msg", {"comm_id": self._endpoint, "data": data})
        deadline = time.monotonic() + timeout
        while True:
            for message in self._endpoint_messages[seen:]:
                if message.get("op") in (reply_op, "error"):
                    return message
            seen = len(self._endpoint_messages)
            self._absorb(self._next_iopub(deadline))

    # -- plumbing ------------------------------------------------------------------------

    def pump(self, timeout: float = 0.2) -> None:
        """Read all iopub traffic available within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                self._next_iopub(deadline)
            except TimeoutError:
                return

    def _drain(self) -> None:
        """Read the iopub traffic that has already arrived, without waiting for more."""
        while True:
            try:
                msg = self.client.get_iopub_msg(timeout=0)
            except queue.Empty:
                return
            self._absorb(msg)

    def restart(self) -> None:
        """Restart the kernel (everything in its memory is gone)."""
        self.manager.restart_kernel(now=True)
        self.client.wait_for_ready(timeout=60)
        self.widgets.clear()
        self._endpoint = None
        self._endpoint_messages.clear()

    def _send(self, msg_type: str, content: dict[str, Any]) -> None:
        self.client.shell_channel.send(self.client.session.msg(msg_type, content))

    def _next_iopub(self, deadline: float) -> dict[str, Any]:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("no message from the kernel in time")
        try:
            msg = self.client.get_iopub_msg(timeout=remaining)
        except queue.Empty:
            raise TimeoutError("no message from the kernel in time") from None
        self._absorb(msg)
        return msg

    def _absorb(self, msg: dict[str, Any]) -> None:
        kind, content = msg["msg_type"], msg["content"]
        if kind == "comm_open" and content.get("target_name") == WIDGET_TARGET:
            state = (content.get("data") or {}).get("state", {})
            self.widgets[content["comm_id"]] = Widget(content["comm_id"], dict(state))
        elif kind == "comm_msg":
            comm_id, data = content.get("comm_id"), content.get("data") or {}
            # Changes come once, on the kernel's marker comm, to every client (3.2).
            if comm_id == self._endpoint or str(comm_id).startswith(MARKER_COMM_PREFIX):
                self._endpoint_messages.append(data)
            elif comm_id in self.widgets and data.get("method") == "update":
                self.widgets[comm_id].state.update(data.get("state", {}))


def _refuse_own_kernel(key: bytes) -> None:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover
        return
    shell = get_ipython()
    kernel = getattr(shell, "kernel", None)
    own_key = getattr(getattr(kernel, "session", None), "key", None)
    if own_key is not None and own_key == key:
        raise RuntimeError(
            "KernelFrontend refuses to drive the kernel it runs in: a kernel must not answer "
            "its own approvals."
        )


def connect(connection_file: str | os.PathLike[str]) -> KernelFrontend:
    """Attach to a running kernel by its connection file (it is not shut down by us).

    The kernel may still be starting: it gets up to a minute to answer ``kernel_info``.
    """
    # Not the kernel's owner: a manager that owns a kernel it did not start finds no process
    # and calls it dead when kernel_info takes longer than a second (a kernel just started
    # on a loaded machine); one that does not own it waits, and never shuts it down.
    manager = KernelManager(connection_file=str(Path(connection_file)), owns_kernel=False)
    manager.load_connection_file()
    return KernelFrontend(manager)
