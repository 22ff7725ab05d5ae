"""What the sandbox costs: a sandboxed kernel's start and round trip against a plain one's, and
a change set's computation on a small and a large project.

Measured in one run, from one real ``jupyter server`` with the extension, over its kernel
websocket as a browser speaks to it (the same client for both kinds of kernel):

1. start: ``POST api/kernels`` for "python3" and for "python3-sandboxed", alternately
   (``--starts`` each), until the kernel answers a ``kernel_info_request`` on its websocket;
   target: sandboxed median at most 1.5x plain;
2. round trip: ``execute_request`` of ``pass`` until its reply and idle, ``--executes`` each,
   on one kernel of each kind, the client socket with TCP_NODELAY and TCP_QUICKACK (without
   them each round trip waits about 40 ms for Nagle and a delayed ACK, on both kinds alike);
   target: median at most 1.1x; then a cell that rewrites a file (``--executes`` / 4 each),
   which in a sandboxed kernel makes the server send the change card's notice: the ratio
   shows the notice's cost per execute (no target);
3. change set: the same 3 files changed (one modified, one created, one deleted) through a
   real bubblewrap overlay of a project of ``--small`` and of ``--large`` files (100 and
   100,000), the server's computation timed ``--repeat`` times; target: large / small at most
   1.2x (the work follows what changed, not the project's size).

    python benchmarks/bench_sandbox.py [--starts 10] [--executes 200] [--small 100]
        [--large 100000] [--repeat 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

from jupyter_client.session import Session
from server_process import ServerProcess
from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect

from jupyter_approvals.core.bubblewrap import find_bubblewrap
from jupyter_approvals.server.sandbox.changes import compute_change_set

START_TARGET = 1.5
ROUND_TRIP_TARGET = 1.1
CHANGE_SET_TARGET = 1.2


class Socket:
    """A kernel websocket speaking the JSON protocol, as a simple client does."""

    def __init__(self, connection) -> None:
        self.connection = connection
        self.session = Session(username="bench")
        #: Change card notices received (the server's, for a sandboxed kernel's changes).
        self.notices = 0
        # Small frames go out at once, as a browser's do (bench_agent_gate.py says why).
        connection.stream.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def ack_at_once(self) -> None:
        """Acknowledge what arrived now, not up to 40 ms later (Linux resets it)."""
        quickack = getattr(socket, "TCP_QUICKACK", None)
        if quickack is not None and self.connection.stream.socket is not None:
            self.connection.stream.socket.setsockopt(socket.IPPROTO_TCP, quickack, 1)

    @classmethod
    async def open(cls, server: ServerProcess, kernel_id: str) -> Socket:
        url = (
            f"ws://127.0.0.1:{server.port}/api/kernels/{kernel_id}/channels"
            f"?session_id={uuid.uuid4().hex}"
        )
        headers = {"Authorization": f"token {server.token}"}
        return cls(await websocket_connect(HTTPRequest(url, headers=headers)))

    async def ask(self, msg_type: str, content: dict, timeout: float = 60) -> None:
        """Send one shell request and wait for its reply and the kernel's idle."""
        message = self.session.msg(msg_type, content)
        message["channel"] = "shell"
        msg_id = message["header"]["msg_id"]
        await self.connection.write_message(json.dumps(message, default=str))
        reply = idle = False
        deadline = time.monotonic() + timeout
        while not (reply and idle):
            frame = await asyncio.wait_for(
                self.connection.read_message(), max(0.01, deadline - time.monotonic())
            )
            self.ack_at_once()
            if frame is None:
                raise RuntimeError("the kernel websocket closed")
            answer = json.loads(frame)
            if answer.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind = answer["header"]["msg_type"]
            if kind == "display_data" and NOTICE_MIME in answer["content"].get("data", {}):
                self.notices += 1
            reply = reply or kind.endswith("_reply")
            idle = idle or (kind == "status" and answer["content"]["execution_state"] == "idle")

    async def until_answers(self, timeout: float = 120) -> None:
        """Ask for the kernel's info until it answers (it may still be starting)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                await self.ask("kernel_info_request", {}, timeout=1.0)
                return
            except asyncio.TimeoutError:
                if time.monotonic() > deadline:
                    raise

    def close(self) -> None:
        self.connection.close()


async def start_time(server: ServerProcess, name: str) -> tuple[float, str]:
    """Seconds from ``POST api/kernels`` until the kernel answers on its websocket."""
    begin = time.perf_counter()
    model = await asyncio.to_thread(
        server.request, "api/kernels", "POST", json.dumps({"name": name}).encode()
    )
    socket = await Socket.open(server, str(model["id"]))
    try:
        await socket.until_answers()
    finally:
        socket.close()
    return time.perf_counter() - begin, str(model["id"])


NOTICE_MIME = "application/vnd.jupyter-approvals.changes+json"
#: A cell that changes a file each time: in a sandboxed kernel the server then sends the
#: change card's notice before the idle (it compares the upper folder after each execute).
WRITING_CELL = "open('bench-notice.txt', 'w').write(str(id(object())))"


async def round_trips(
    server: ServerProcess, kernel_id: str, count: int, code: str = "pass", notices: int = 0
) -> list[float]:
    """Seconds of each execute of ``code`` on ``kernel_id``, which must bring ``notices``
    change card notices in all."""
    socket = await Socket.open(server, kernel_id)
    samples = []
    try:
        await socket.until_answers()
        for _ in range(count):
            begin = time.perf_counter()
            await socket.ask("execute_request", {"code": code, "silent": False})
            samples.append(time.perf_counter() - begin)
    finally:
        socket.close()
    if socket.notices != notices:
        raise RuntimeError(f"{socket.notices} change notices, {notices} expected")
    return samples


def change_set_times(base: Path, files: int, repeat: int) -> list[float]:
    """Seconds of each computation of a 3-file change set over a project of ``files``."""
    project, upper, work = base / "project", base / "upper", base / "work"
    for folder in (project, upper, work):
        folder.mkdir(parents=True)
    per_folder = 1000
    for index in range(files):
        folder = project / f"d{index // per_folder}"
        if index % per_folder == 0:
            folder.mkdir()
        (folder / f"f{index}.csv").write_text(f"id,value\n{index},1\n")
    script = "echo changed > d0/f0.csv; echo new > d0/new.csv; rm d0/f1.csv"
    subprocess.run(
        [
            find_bubblewrap().path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--overlay-src", str(project), "--overlay", str(upper), str(work), str(project),
            "--unshare-all", "--die-with-parent", "--chdir", str(project),
            "--", "/bin/sh", "-ec", script,
        ],
        check=True,
    )  # fmt: skip
    samples = []
    for _ in range(repeat):
        begin = time.perf_counter()
        change_set = compute_change_set(project, upper)
        samples.append(time.perf_counter() - begin)
    assert change_set.counts == {"created": 1, "modified": 1, "deleted": 1}, change_set.counts
    return samples


def verdict(ratio: float, target: float) -> str:
    return "PASS" if ratio <= target else "FAIL"


async def main_async(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        with ServerProcess(base / "server", base / "server" / "project") as server:
            plain_starts: list[float] = []
            sandboxed_starts: list[float] = []
            kernels: dict[str, str] = {}
            for _ in range(args.starts):
                for name, samples in (
                    ("python3", plain_starts),
                    ("python3-sandboxed", sandboxed_starts),
                ):
                    took, kernel_id = await start_time(server, name)
                    samples.append(took)
                    if name in kernels:
                        await asyncio.to_thread(
                            server.request, f"api/kernels/{kernel_id}", "DELETE"
                        )
                    else:
                        kernels[name] = kernel_id
            plain_trips = await round_trips(server, kernels["python3"], args.executes)
            sandboxed_trips = await round_trips(server, kernels["python3-sandboxed"], args.executes)
            writes = args.executes // 4 or 1
            plain_writes = await round_trips(server, kernels["python3"], writes, WRITING_CELL)
            sandboxed_writes = await round_trips(
                server, kernels["python3-sandboxed"], writes, WRITING_CELL, notices=writes
            )
        small = change_set_times(base / "small", args.small, args.repeat)
        large = change_set_times(base / "large", args.large, args.repeat)

    start_ratio = statistics.median(sandboxed_starts) / statistics.median(plain_starts)
    trip_ratio = statistics.median(sandboxed_trips) / statistics.median(plain_trips)
    change_ratio = statistics.median(large) / statistics.median(small)
    write_ratio = statistics.median(sandboxed_writes) / statistics.median(plain_writes)
    ms = 1000
    print(f"kernel starts: {args.starts} each; pass executes: {args.executes} each")
    print(
        f"start, plain: min {min(plain_starts) * ms:.0f} ms, median "
        f"{statistics.median(plain_starts) * ms:.0f} ms; sandboxed: min "
        f"{min(sandboxed_starts) * ms:.0f} ms, median "
        f"{statistics.median(sandboxed_starts) * ms:.0f} ms"
    )
    print(
        f"pass round trip, plain: median {statistics.median(plain_trips) * ms:.2f} ms; "
        f"sandboxed: median {statistics.median(sandboxed_trips) * ms:.2f} ms"
    )
    print(
        f"writing cell round trip ({writes} each), plain: median "
        f"{statistics.median(plain_writes) * ms:.2f} ms; sandboxed, with the change notice: "
        f"median {statistics.median(sandboxed_writes) * ms:.2f} ms"
    )
    print(
        f"change set of 3 files: project of {args.small} files median "
        f"{statistics.median(small) * ms:.2f} ms; of {args.large} files median "
        f"{statistics.median(large) * ms:.2f} ms"
    )
    print(
        f"sandboxed / plain start: {start_ratio:.2f}x (target <= {START_TARGET}x) "
        f"{verdict(start_ratio, START_TARGET)}"
    )
    print(
        f"sandboxed / plain round trip: {trip_ratio:.2f}x (target <= {ROUND_TRIP_TARGET}x) "
        f"{verdict(trip_ratio, ROUND_TRIP_TARGET)}"
    )
    print(
        f"sandboxed / plain writing round trip: {write_ratio:.2f}x (the notice's cost; no target)"
    )
    print(
        f"change set, large / small project: {change_ratio:.2f}x (target <= "
        f"{CHANGE_SET_TARGET}x) {verdict(change_ratio, CHANGE_SET_TARGET)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--executes", type=int, default=200)
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    if min(args.starts, args.executes, args.small, args.large, args.repeat) < 1:
        parser.error("every count must be at least 1")
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
