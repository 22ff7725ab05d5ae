"""What the agent gate costs on kernel websockets, against a plain jupyter-server, in one run.

Two real ``jupyter server`` processes, each with one kernel: one plain (jupyter-approvals not
enabled), one with the extension and so the gated kernel websocket connection. Every client
socket sets TCP_NODELAY and acknowledges what it reads at once (TCP_QUICKACK), on both servers
alike: otherwise a round trip of small frames on loopback waits about 40 ms for Nagle's
algorithm on the server's side and a delayed ACK on ours, which hid what either server does.
Each execute is timed alone; the paths run in interleaved batches and the figures are the min
and median of all single executes of a path:

1. a person's traffic: ``--requests`` small ``execute_request`` sent one after the other on
   the person's websocket (v1 protocol, as JupyterLab speaks), each awaited until its reply
   and idle; gated server vs plain server, the same code on both. Target: median at most 1.1x.
2. an agent's held ``execute_request`` answered by the gate (busy, error, execute_reply, idle;
   nothing reaches the kernel), vs a person's execute on the plain server. Each held request
   is a new one (its code differs from every other's), so each is fingerprinted, opened,
   journaled and answered; an identical one would only find the pending request. A server
   holds at most 20 pending requests per agent (a limit no setting can raise), so the held
   requests come from a fresh agent identity every 19: each agent's first request is sent
   untimed (it creates that agent's store of held requests), then up to 19 are timed, and
   its socket is closed before the next path runs. No limit is loosened: 20 requests per
   agent stay under the rate limit's burst. Target: median at most 2x.
3. a person's cell printing N MB (``--output-mb``, each size in turn; the person's own kernel
   traffic must pay nothing that grows with its size): gated server vs plain server, the
   execute awaited until its reply and idle with every output read; the median of single
   executes (at least OUTPUT_REPEATS per batch, more for small outputs). Target: at most 1.05x
   for each size. Both servers run without jupyter_server's iopub data rate limit, which would
   drop such outputs instead of sending them.

    python benchmarks/bench_agent_gate.py [--requests 1000] [--batches 5]
        [--output-mb 0,5,50] [--output-repeats 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

from jupyter_client.session import Session
from jupyter_server.services.kernels.connection.base import (
    deserialize_msg_from_ws_v1,
    serialize_msg_to_ws_v1,
)
from server_process import ServerProcess
from tornado.httpclient import HTTPClientError, HTTPRequest
from tornado.websocket import websocket_connect

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jupyter_approvals.core.agents import AgentRegistry, registry_path
from jupyter_approvals.core.policy import MAX_PENDING

PERSON_TARGET = 1.1
HOLD_TARGET = 2.0
OUTPUT_TARGET = 1.05
#: Outputs are measured as sent: jupyter_server's iopub rate limit would drop them.
NO_RATE_LIMIT = ("--ServerApp.iopub_data_rate_limit=0", "--ServerApp.iopub_msg_rate_limit=0")
V1 = "v1.kernel.websocket.jupyter.org"
#: The reply's ename of a held execute.
PENDING = "APPROVAL_PENDING"
#: Timed held requests per agent: the pending requests one agent may have (a limit settings
#: can only lower), less its untimed first one.
HELD_PER_AGENT = MAX_PENDING - 1
QUICKACK = getattr(socket, "TCP_QUICKACK", None)


def start_server(base: Path, gated: bool) -> ServerProcess:
    """A server with (gated) or without the extension, and one kernel started in it."""
    server = ServerProcess(base, base / "root", extension=gated, extra_args=NO_RATE_LIMIT)
    try:
        server.kernel_id = server.request("api/kernels", "POST", b"{}")["id"]  # type: ignore[attr-defined]
    except BaseException:
        server.stop()
        raise
    return server


class Socket:
    """A v1 kernel websocket with TCP_NODELAY that runs one execute at a time."""

    def __init__(self, connection) -> None:
        self.connection = connection
        # Small frames go out at once, as a browser's do (Chromium sets TCP_NODELAY).
        connection.protocol.set_nodelay(True)
        self.session = Session(username="bench")

    def ack_at_once(self) -> None:
        """TCP_QUICKACK: acknowledge what arrived now, not up to 40 ms later. Linux turns it
        off again on its own, so it is set after every read."""
        stream = self.connection.protocol.stream
        if QUICKACK is not None and stream.socket is not None:
            stream.socket.setsockopt(socket.IPPROTO_TCP, QUICKACK, 1)

    @classmethod
    async def open(cls, server: ServerProcess, token: str, warm: bool = True) -> Socket:
        url = f"ws://127.0.0.1:{server.port}/api/kernels/{server.kernel_id}/channels"
        request = HTTPRequest(url, headers={"Authorization": f"token {token}"})
        socket_ = cls(await websocket_connect(request, subprotocols=[V1]))
        if warm:
            await socket_.execute("pass")  # the kernel is ready, and the connection warm
        return socket_

    async def execute(self, code: str) -> tuple[str, str | None]:
        """Send one execute_request; wait for its reply and idle; the reply's status and
        ``ename``."""
        message = self.session.msg(
            "execute_request",
            {
                "code": code,
                "silent": False,
                "store_history": False,
                "user_expressions": {},
                "allow_stdin": False,
                "stop_on_error": True,
            },
        )
        msg_id = message["header"]["msg_id"]
        await self.connection.write_message(
            serialize_msg_to_ws_v1(message, "shell", self.session.pack), binary=True
        )
        reply, idle = None, False
        while reply is None or not idle:
            frame = await self.connection.read_message()
            if frame is None:
                raise RuntimeError("the websocket closed")
            self.ack_at_once()
            _, parts = deserialize_msg_from_ws_v1(frame)
            if json.loads(parts[1]).get("msg_id") != msg_id:
                continue
            header = json.loads(parts[0])
            content = json.loads(parts[3])
            if header["msg_type"] == "execute_reply":
                reply = content
            elif header["msg_type"] == "status" and content["execution_state"] == "idle":
                idle = True
        return reply["status"], reply.get("ename")


async def executes(socket_: Socket, codes: list[str], expect: str = "ok") -> list[float]:
    """Seconds of each execute of ``codes``, one after the other; each must end ``expect``
    (``ok``, or the ename of its error)."""
    times = []
    for code in codes:
        start = time.perf_counter()
        status, ename = await socket_.execute(code)
        times.append(time.perf_counter() - start)
        if (ename if status == "error" else status) != expect:
            raise SystemExit(f"expected {expect!r}, got {status!r} {ename!r}")
    return times


def distinct(path: str, start: int, count: int) -> list[str]:
    """``count`` codes that do the same (nothing) and differ in text: distinct requests."""
    return [f"pass  # {path} {n}" for n in range(start, start + count)]


async def held_batch(gated: ServerProcess, agents: list[str], codes: list[str]) -> list[float]:
    """Seconds of each held execute of ``codes``, sent by fresh agents, HELD_PER_AGENT each."""
    times: list[float] = []
    for first in range(0, len(codes), HELD_PER_AGENT):
        try:
            agent = await Socket.open(gated, agents.pop(), warm=False)
        except HTTPClientError as refused:
            log = gated.log_tail()
            raise SystemExit(f"agent refused ({refused}); server log:\n{log}") from None
        try:
            # Untimed: the first request of an agent makes its store of held requests.
            await executes(agent, [f"pass  # warm {codes[first]}"], PENDING)
            times += await executes(agent, codes[first : first + HELD_PER_AGENT], PENDING)
        finally:
            agent.connection.close()
    return times


def spread(times: list[float]) -> str:
    """Min and median of ``times`` (seconds), in milliseconds."""
    return f"min {min(times) * 1000:.3f} ms, median {statistics.median(times) * 1000:.3f} ms"


async def main_async(args: argparse.Namespace) -> None:
    with (
        tempfile.TemporaryDirectory() as tmp,
        start_server(Path(tmp) / "plain", gated=False) as plain,
        start_server(Path(tmp) / "gated", gated=True) as gated,
    ):
        per_batch = max(1, args.requests // args.batches)
        registry = AgentRegistry(registry_path(gated.state))
        agents = [
            registry.add(f"bench-{n}")[1]
            for n in range(args.batches * -(-per_batch // HELD_PER_AGENT))
        ]
        person_plain = await Socket.open(plain, plain.token)
        person_gated = await Socket.open(gated, gated.token)
        plain_times: list[float] = []
        gated_times: list[float] = []
        hold_times: list[float] = []
        for index in range(args.batches):
            first = index * per_batch
            plain_times += await executes(person_plain, distinct("person", first, per_batch))
            gated_times += await executes(person_gated, distinct("person", first, per_batch))
            hold_times += await held_batch(gated, agents, distinct("agent", first, per_batch))
        plain_ms = statistics.median(plain_times) * 1000
        gated_ms = statistics.median(gated_times) * 1000
        hold_ms = statistics.median(hold_times) * 1000
        person_ratio = gated_ms / plain_ms
        hold_ratio = hold_ms / plain_ms
        print(
            f"execute requests: {per_batch * args.batches} per path, each distinct, "
            f"{args.batches} interleaved batches; TCP_NODELAY on every client socket"
        )
        print(f"plain jupyter-server, person's execute: {spread(plain_times)}")
        print(f"gated server, person's execute: {spread(gated_times)}")
        print(
            f"gated server, agent's held execute answered: {spread(hold_times)} "
            f"(a fresh agent every {HELD_PER_AGENT} requests)"
        )
        print(
            f"min ratios (info): person {min(gated_times) / min(plain_times):.2f}x, "
            f"held {min(hold_times) / min(plain_times):.2f}x"
        )
        for name, ratio, target in (
            ("person through the gate / plain", person_ratio, PERSON_TARGET),
            ("agent held and answered / plain execute", hold_ratio, HOLD_TARGET),
        ):
            verdict = "PASS" if ratio <= target else "FAIL"
            print(f"{name}: {ratio:.2f}x median (target <= {target:g}x) {verdict}")
        # No agent socket is open here: every connection to a kernel gets its own copy of
        # each output, so an idle one would make the gated server alone carry a second one.
        for megabytes in args.output_mb:
            code = f"import sys; sys.stdout.write('x' * {int(megabytes * 1e6)})"
            # Small outputs run more often (one output of the slowest size takes ~0.7 s):
            # the median of single executes, so a stray pause of either server counts once.
            repeats = max(args.output_repeats, round(30 / (megabytes + 1)))
            sizes_plain, sizes_gated = [], []
            for _ in range(args.batches):
                sizes_plain += await executes(person_plain, [code] * repeats)
                sizes_gated += await executes(person_gated, [code] * repeats)
            plain_s, gated_s = statistics.median(sizes_plain), statistics.median(sizes_gated)
            ratio = gated_s / plain_s
            verdict = "PASS" if ratio <= OUTPUT_TARGET else "FAIL"
            print(
                f"person's cell printing {megabytes:g} MB: plain {plain_s * 1000:.1f} ms, "
                f"gated {gated_s * 1000:.1f} ms: {ratio:.2f}x "
                f"(target <= {OUTPUT_TARGET:g}x) {verdict}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument(
        "--output-mb",
        type=lambda text: [float(part) for part in text.split(",")],
        default=[0.0, 5.0, 50.0],
        help="sizes of a person's cell output to compare, in MB, comma-separated",
    )
    parser.add_argument("--output-repeats", type=int, default=3)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
