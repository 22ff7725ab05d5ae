"""``GET pending`` over many kernels, some busy in a running cell, against the server's own
``GET /api/kernels``.

Measured in one run, alternating, from a real ``jupyter server`` with the extension:

- baseline: ``GET /api/kernels`` (the server lists its kernels from memory, asking none);
- ``GET /jupyter-approvals/api/pending`` while each kernel holds ``--per-kernel`` pending
  requests and ``--busy`` of the kernels run a cell that sleeps.

Both are the same request each round from the same client (urllib, a new connection each
time, for both). Every round also checks that every request is
listed, the busy kernels' too. Reported: min, median and p95 of each; target: p95 ratio at
most 3x (the median ratio is printed beside it). The script starts the server and the kernels
itself, in a temporary directory, and stops them (and reaps every kernel) at the end.

    python benchmarks/bench_pending.py [--kernels 50] [--per-kernel 5] [--busy 10] [--rounds 60]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from pending_kernels import connect, make_pending
from server_process import ServerProcess

TARGET_RATIO = 3.0
#: Kernels started together during setup.
START_AT_ONCE = 5
#: Long enough to outlast every round: the busy kernels stay busy while measured.
BUSY_CELL = "import time; time.sleep(3600)"


def p95(samples: list[float]) -> float:
    """The 95th percentile of ``samples`` (at least two)."""
    return statistics.quantiles(samples, n=20, method="inclusive")[-1]


def spread(samples: list[float]) -> str:
    """Min and median of ``samples`` (seconds), in milliseconds."""
    return f"min {min(samples) * 1000:.1f} ms, median {statistics.median(samples) * 1000:.1f} ms"


def timed(server: ServerProcess, path: str) -> tuple[float, object]:
    start = time.perf_counter()
    answer = server.request(path)
    return time.perf_counter() - start, answer


async def main_async(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(Path(tmp), Path(tmp) / "project")
        clients: list = []
        try:
            print(f"starting {args.kernels} kernels ...", flush=True)
            ids: list[str] = []
            # A few at a time: fifty kernels starting at once on two busy cores take minutes
            # before any answers, and each start is setup, not what is measured.
            for _ in range(0, args.kernels, START_AT_ONCE):
                started = [
                    str(server.request("api/kernels", "POST", b"{}")["id"])
                    for _ in range(min(START_AT_ONCE, args.kernels - len(ids)))
                ]
                ids += started
                clients += await asyncio.gather(
                    *(connect(server.runtime, kernel_id, timeout=300) for kernel_id in started)
                )
            await make_pending(clients, args.per_kernel)
            for client in clients[: args.busy]:
                client.execute(BUSY_CELL)
            expected = args.kernels * args.per_kernel
            busy = set(ids[: args.busy])
            # Wait until the server has seen the busy cells start.
            deadline = time.monotonic() + 30
            while True:
                listing = await asyncio.to_thread(server.request, "jupyter-approvals/api/pending")
                if set(listing["busy_kernels"]) == busy or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.2)
            base: list[float] = []
            pending: list[float] = []
            for _ in range(args.rounds):
                seconds, _ = await asyncio.to_thread(timed, server, "api/kernels")
                base.append(seconds)
                seconds, listing = await asyncio.to_thread(
                    timed, server, "jupyter-approvals/api/pending"
                )
                pending.append(seconds)
                assert isinstance(listing, dict)
                if len(listing["pending"]) != expected or set(listing["busy_kernels"]) != busy:
                    raise SystemExit(
                        f"not every request listed: {len(listing['pending'])} of {expected}; "
                        f"busy {sorted(listing['busy_kernels'])}, expected {sorted(busy)}; "
                        f"unanswered {listing['unanswered_kernels']}"
                    )
            base_ms, pending_ms = p95(base) * 1000, p95(pending) * 1000
            ratio = pending_ms / base_ms
            median_ratio = statistics.median(pending) / statistics.median(base)
            print(
                f"kernels: {args.kernels} ({args.busy} busy), pending requests: {expected}, "
                f"rounds: {args.rounds}"
            )
            print(f"GET /api/kernels, {spread(base)}, p95: {base_ms:.1f} ms")
            print(
                f"GET pending, {spread(pending)}, p95: {pending_ms:.1f} ms "
                "(every request listed in every round)"
            )
            print(f"median ratio: {median_ratio:.2f}x (info)")
            verdict = "PASS" if ratio <= TARGET_RATIO else "FAIL"
            print(f"p95 ratio: {ratio:.2f}x (target <= {TARGET_RATIO:g}x) {verdict}")
        finally:
            for client in clients:
                client.stop_channels()
            server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=50)
    parser.add_argument("--per-kernel", type=int, default=5)
    parser.add_argument("--busy", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=60)
    args = parser.parse_args()
    if not 0 <= args.busy <= args.kernels or args.rounds < 2:
        parser.error("--busy must be between 0 and --kernels, and --rounds at least 2")
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
