"""What the agent gate costs on kernel websockets, against a plain jupyter-server, in one run.

Two real ``jupyter server`` processes, each with one kernel: one plain (jupyter-approvals not
enabled), one with the extension and so the gated kernel websocket connection. Interleaved
batches, medians of the per-batch mean:

1. a person's traffic: ``--requests`` small ``execute_request`` (``pass``) sent one after the
   other on the person's websocket (v1 protocol, as JupyterLab speaks), each awaited until its
   reply and idle; gated server vs plain server. Target: at most 1.1x.
2. an agent's held ``execute_request`` answered by the gate (busy, error, execute_reply, idle;
   nothing reaches the kernel), vs a plain execute of ``pass`` on the plain server. Target: at
   most 2x.
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
from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect

PERSON_TARGET = 1.1
HOLD_TARGET = 2.0
OUTPUT_TARGET = 1.05
#: Outputs are measured as sent: jupyter_server's iopub rate limit would drop them.
NO_RATE_LIMIT = ("--ServerApp.iopub_data_rate_limit=0", "--ServerApp.iopub_msg_rate_limit=0")
V1 = "v1.kernel.websocket.jupyter.org"


def start_server(base: Path, gated: bool) -> ServerProcess:
    """A server with (gated) or without the extension, and one kernel started in it."""
    server = ServerProcess(base, base / "root", extension=gated, extra_args=NO_RATE_LIMIT)
    server.kernel_id = server.request("api/kernels", "POST", b"{}")["id"]  # type: ignore[attr-defined]
    return server


class Socket:
    """A v1 kernel websocket that runs one execute at a time."""

    def __init__(self, connection) -> None:
        self.connection = connection
        self.session = Session(username="bench")

    @classmethod
    async def open(cls, server: ServerProcess, token: str) -> Socket:
        url = f"ws://127.0.0.1:{server.port}/api/kernels/{server.kernel_id}/channels"
        request = HTTPRequest(url, headers={"Authorization": f"token {token}"})
        socket_ = cls(await websocket_connect(request, subprotocols=[V1]))
        await socket_.execute("pass")  # the kernel is ready, and the connection warm
        return socket_

    async def execute(self, code: str) -> str:
        """Send one execute_request; wait for its reply and idle; return the reply's status."""
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
        status, idle = None, False
        while status is None or not idle:
            frame = await self.connection.read_message()
            if frame is None:
                raise RuntimeError("the websocket closed")
            _, parts = deserialize_msg_from_ws_v1(frame)
            if json.loads(parts[1]).get("msg_id") != msg_id:
                continue
            header = json.loads(parts[0])
            content = json.loads(parts[3])
            if header["msg_type"] == "execute_reply":
                status = content["status"]
            elif header["msg_type"] == "status" and content["execution_state"] == "idle":
                idle = True
        return status


async def batch(socket_: Socket, code: str, count: int, expect: str) -> float:
    """Mean seconds of one execute over ``count`` in a row."""
    start = time.perf_counter()
    for _ in range(count):
        status = await socket_.execute(code)
        if status != expect:
            raise SystemExit(f"expected status {expect!r}, got {status!r}")
    return (time.perf_counter() - start) / count


async def executes(socket_: Socket, code: str, count: int) -> list[float]:
    """Seconds of each of ``count`` executes of ``code`` in a row (each must succeed)."""
    times = []
    for _ in range(count):
        start = time.perf_counter()
        status = await socket_.execute(code)
        times.append(time.perf_counter() - start)
        if status != "ok":
            raise SystemExit(f"expected status 'ok', got {status!r}")
    return times


async def main_async(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        plain = start_server(Path(tmp) / "plain", gated=False)
        gated = start_server(Path(tmp) / "gated", gated=True)
        try:
            sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
            from jupyter_approvals.core.agents import AgentRegistry, registry_path

            _, agent_token = AgentRegistry(registry_path(gated.state)).add("bench")
            person_plain = await Socket.open(plain, plain.token)
            person_gated = await Socket.open(gated, gated.token)
            url = f"ws://127.0.0.1:{gated.port}/api/kernels/{gated.kernel_id}/channels"
            request = HTTPRequest(url, headers={"Authorization": f"token {agent_token}"})
            agent = Socket(await websocket_connect(request, subprotocols=[V1]))
            per_batch = max(1, args.requests // args.batches)
            plain_times, gated_times, hold_times = [], [], []
            for _ in range(args.batches):
                plain_times.append(await batch(person_plain, "pass", per_batch, "ok"))
                gated_times.append(await batch(person_gated, "pass", per_batch, "ok"))
                hold_times.append(await batch(agent, "pass", per_batch, "error"))
            plain_ms = statistics.median(plain_times) * 1000
            gated_ms = statistics.median(gated_times) * 1000
            hold_ms = statistics.median(hold_times) * 1000
            person_ratio = gated_ms / plain_ms
            hold_ratio = hold_ms / plain_ms
            print(
                f"execute requests: {per_batch * args.batches} per path, "
                f"{args.batches} interleaved batches"
            )
            print(f"plain jupyter-server, person's execute of pass: {plain_ms:.3f} ms")
            print(f"gated server, person's execute of pass: {gated_ms:.3f} ms")
            print(f"gated server, agent's held execute answered: {hold_ms:.3f} ms")
            for name, ratio, target in (
                ("person through the gate / plain", person_ratio, PERSON_TARGET),
                ("agent held and answered / plain execute", hold_ratio, HOLD_TARGET),
            ):
                verdict = "PASS" if ratio <= target else "FAIL"
                print(f"{name}: {ratio:.2f}x (target <= {target:g}x) {verdict}")
            # Every connection to a kernel gets its own copy of each output: the agent's idle
            # socket (unread here) would make the gated server alone carry a second one.
            agent.connection.close()
            for megabytes in args.output_mb:
                code = f"import sys; sys.stdout.write('x' * {int(megabytes * 1e6)})"
                # Small outputs run more often (one output of the slowest size takes ~0.7 s):
                # the median of single executes, so a stray pause of either server counts once.
                repeats = max(args.output_repeats, round(30 / (megabytes + 1)))
                sizes_plain, sizes_gated = [], []
                for _ in range(args.batches):
                    sizes_plain += await executes(person_plain, code, repeats)
                    sizes_gated += await executes(person_gated, code, repeats)
                plain_s, gated_s = statistics.median(sizes_plain), statistics.median(sizes_gated)
                ratio = gated_s / plain_s
                verdict = "PASS" if ratio <= OUTPUT_TARGET else "FAIL"
                print(
                    f"person's cell printing {megabytes:g} MB: plain {plain_s * 1000:.1f} ms, "
                    f"gated {gated_s * 1000:.1f} ms: {ratio:.2f}x "
                    f"(target <= {OUTPUT_TARGET:g}x) {verdict}"
                )
        finally:
            plain.stop()
            gated.stop()


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
