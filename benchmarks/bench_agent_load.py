"""Is the person slowed by an agent, or by the gate? The person's p95 under an agent's load.

    python benchmarks/bench_agent_load.py [--write-mb 150] [--edits 100] [--notebook-mb 12]
        [--requests 200] [--rounds 5]

Run with a Python that has jupyter-collaboration (the agent virtualenv: ``make agents``), since
the agent edits a notebook through a collaboration room. One real ``jupyter server`` with the
extension, one notebook of about NOTEBOOK_MB in its root, and an agent with a token of its own.
In one run:

- the agent (a process of its own, as an agent client is) opens the notebook's room first, as
  the person would open the notebook: the room's loading is jupyter-collaboration's, not
  measured here;
- idle: the person's ``GET /api/contents`` (the root listing), REQUESTS in a row;
- under load: the same, while the agent PUTs a WRITE_MB file through the contents API (refused
  past the agent's body limit, or held) and sends EDITS one-character edits of the notebook's
  first cell through its room, as fast as the room takes them.

Both are repeated ROUNDS times on the same server (idle, then under load, in turn), since one
autosave of the notebook more or less inside a window of about a second moves a single p95 by
2-3x; the ratio reported is the median of the rounds' ratios. Target: under load <= 1.5x idle.
The same load on a plain server (no extension; the agent then holds the person's token) is
measured in the same run, for what jupyter_server and jupyter-collaboration cost by themselves
(its ratio is info). Reports; never gates (exits 0).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from server_process import ServerProcess

TARGET = 1.5
REPO = Path(__file__).resolve().parent.parent


def p95(samples: list[float]) -> float:
    """The 95th percentile (nearest rank) of ``samples``."""
    ordered = sorted(samples)
    return ordered[max(0, round(0.95 * len(ordered)) - 1)]


def write_notebook(path: Path, megabytes: float) -> None:
    """A notebook of about ``megabytes``: cells with sources and stream outputs."""
    cells = []
    chunk = "x" * 10_000
    count = max(2, int(megabytes * 1e6 / 20_000))
    for n in range(count):
        cells.append(
            {
                "id": f"cell-{n}",
                "cell_type": "code",
                "metadata": {},
                "execution_count": None,
                "source": f"# cell {n}\n{chunk}",
                "outputs": [{"output_type": "stream", "name": "stdout", "text": chunk}],
            }
        )
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(notebook))


async def person_requests(server: ServerProcess, count: int) -> list[float]:
    """Seconds of each of ``count`` GET /api/contents in a row, made off the loop."""
    loop = asyncio.get_running_loop()
    times = []
    for _ in range(count):
        start = time.perf_counter()
        await loop.run_in_executor(None, server.request, "api/contents")
        times.append(time.perf_counter() - start)
    return times


def agent_write(server: ServerProcess, token: str, megabytes: float) -> int:
    """The status of the agent's PUT of a file of ``megabytes``."""
    body = json.dumps(
        {"type": "file", "format": "text", "content": "y" * int(megabytes * 1e6)}
    ).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{server.port}/api/contents/big.csv",
        data=body,
        method="PUT",
        headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=600) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


async def agent_load(port: int, token: str, write_mb: float, edits: int, rounds: int) -> None:
    """The agent's side (run in a process of its own): open the room, say ``ready``; then, each
    round, wait for ``go`` on stdin, write and edit at once and print what happened as JSON."""
    from pycrdt import Array, Doc, create_sync_message, create_update_message, handle_sync_message
    from websockets.asyncio.client import connect

    server = ServerProcess.__new__(ServerProcess)
    server.port, server.token = port, token
    url = f"http://127.0.0.1:{port}"
    request = urllib.request.Request(
        f"{url}/api/collaboration/session/work.ipynb",
        data=json.dumps({"format": "json", "type": "notebook"}).encode(),
        method="PUT",
        headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        session = json.loads(response.read())
    room = f"{session['format']}:{session['type']}:{session['fileId']}"
    ws_url = (
        f"ws://127.0.0.1:{port}/api/collaboration/room/{room}"
        f"?sessionId={session['sessionId']}&token={token}"
    )
    doc = Doc()
    loop = asyncio.get_running_loop()
    async with connect(ws_url, max_size=None) as socket:
        await socket.send(create_sync_message(doc))
        synced = False
        while not synced:
            message = await asyncio.wait_for(socket.recv(), 120)
            if message[0] == 0:
                reply = handle_sync_message(message[1:], doc)
                if reply is not None:
                    await socket.send(reply)
                synced = message[1] == 1
        print("ready", flush=True)
        for _ in range(rounds):
            await loop.run_in_executor(None, sys.stdin.readline)
            write = loop.run_in_executor(None, agent_write, server, token, write_mb)
            source = doc.get("cells", type=Array)[0]["source"]
            sent = 0
            for _ in range(edits):
                before = doc.get_state()
                source += "z"
                try:
                    await socket.send(create_update_message(doc.get_update(before)))
                except Exception:
                    break
                sent += 1
                await asyncio.sleep(0)
            status = await write
            print(json.dumps({"status": status, "sent": sent}), flush=True)


async def main_async(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(REPO))
    from jupyter_approvals.core.agents import AgentRegistry, registry_path

    results = {}
    for gated in (True, False):
        with tempfile.TemporaryDirectory() as tmp:
            results[gated] = await one_server(Path(tmp), gated, args, AgentRegistry, registry_path)
    gated, plain = results[True], results[False]
    print(
        f"notebook {args.notebook_mb:g} MB; agent, each of {args.rounds} rounds: a "
        f"{args.write_mb:g} MB write (answered {gated.status} by the gated server) and "
        f"{gated.sent} of {args.edits} room edits sent"
    )
    for name, server in (
        ("gated server", gated),
        ("plain server (the agent with the person's token)", plain),
    ):
        print(f"{name}: person's GET /api/contents, {args.requests} in a row, p95 in ms:")
        for n, (before, during) in enumerate(server.rounds, 1):
            print(
                f"  round {n}: idle {p95(before) * 1000:.1f}, under load "
                f"{p95(during) * 1000:.1f} ({p95(during) / p95(before):.2f}x)"
            )
    ratio, plain_ratio = gated.ratio(), plain.ratio()
    verdict = "PASS" if ratio <= TARGET else "FAIL"
    print(
        f"plain server under the same load / idle, p95, median of rounds: {plain_ratio:.2f}x (info)"
    )
    print(
        f"person under an agent's load / idle, p95, median of rounds: {ratio:.2f}x "
        f"(target <= {TARGET:g}x) {verdict}"
    )


@dataclass
class ServerResult:
    """One server's rounds: (idle times, times under load) each; what the agent's load got."""

    rounds: list[tuple[list[float], list[float]]] = field(default_factory=list)
    status: int = 0
    sent: int = 0

    def ratio(self) -> float:
        """The median over rounds of p95 under load / p95 idle."""
        return statistics.median(p95(during) / p95(before) for before, during in self.rounds)


async def one_server(
    base: Path, gated: bool, args: argparse.Namespace, registry: Any, registry_path: Any
) -> ServerResult:
    """The rounds of idle and loaded requests on one server."""
    root = base / "root"
    root.mkdir()
    write_notebook(root / "work.ipynb", args.notebook_mb)
    server = ServerProcess(base, root, extension=gated)
    result = ServerResult()
    agent: subprocess.Popen[str] | None = None
    try:
        token = registry(registry_path(server.state)).add("bench")[1] if gated else server.token
        agent = subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--agent-of",
                str(server.port),
                token,
                f"--write-mb={args.write_mb}",
                f"--edits={args.edits}",
                f"--rounds={args.rounds}",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        if agent.stdin is None or agent.stdout is None:
            raise SystemExit("the agent process has no pipes")
        if agent.stdout.readline().strip() != "ready":
            raise SystemExit("the agent could not open the notebook's room")
        await person_requests(server, 5)  # warm
        for _ in range(args.rounds):
            idle = await person_requests(server, args.requests)
            agent.stdin.write("go\n")
            agent.stdin.flush()
            loaded = await person_requests(server, args.requests)
            outcome = json.loads(agent.stdout.readline())
            result.rounds.append((idle, loaded))
            result.status, result.sent = int(outcome["status"]), int(outcome["sent"])
            # The room saves the notebook about a second after the last edit: let the round's
            # load end before the next idle window.
            await asyncio.sleep(2)
        agent.wait(60)
        return result
    finally:
        if agent is not None and agent.poll() is None:  # a failed round: never left running
            agent.kill()
            agent.wait(10)
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent-of", nargs=2, metavar=("PORT", "TOKEN"), help=argparse.SUPPRESS)
    parser.add_argument("--write-mb", type=float, default=150.0)
    parser.add_argument("--edits", type=int, default=100)
    parser.add_argument("--notebook-mb", type=float, default=12.0)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if args.agent_of:
        port, token = args.agent_of
        asyncio.run(agent_load(int(port), token, args.write_mb, args.edits, args.rounds))
    else:
        asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
