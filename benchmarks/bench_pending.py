"""``GET pending`` across 20 kernels, against the floor of asking those kernels anything.

Measured in one run:

- baseline: a bare ``kernel_info`` round trip sent to the same 20 kernels concurrently, from
  clients already connected (the least it can cost to hear from every kernel);
- ``GET /jupyter-approvals/api/pending`` over HTTP from a real ``jupyter server`` with the
  extension, while each of the 20 kernels holds 5 pending requests (100 in all).

Target: median ratio at most 2x. The script starts the server and the kernels itself, in a
temporary directory, and stops them at the end.

    python benchmarks/bench_pending.py [--kernels 20] [--per-kernel 5] [--rounds 30]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from jupyter_client.asynchronous import AsyncKernelClient
from pending_kernels import connect, make_pending
from server_process import ServerProcess

TARGET_RATIO = 2.0


async def kernel_info_round(clients: list[AsyncKernelClient]) -> float:
    start = time.perf_counter()
    await asyncio.gather(*(client.kernel_info(reply=True, timeout=30) for client in clients))
    return time.perf_counter() - start


async def main_async(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(Path(tmp), Path(tmp) / "project")
        try:
            print(f"starting {args.kernels} kernels ...", flush=True)
            ids = [server.request("api/kernels", "POST", b"{}")["id"] for _ in range(args.kernels)]
            clients = [await connect(server.runtime, kernel_id) for kernel_id in ids]
            await make_pending(clients, args.per_kernel)
            listing = await asyncio.to_thread(server.request, "jupyter-approvals/api/pending")
            expected = args.kernels * args.per_kernel
            if len(listing["pending"]) != expected or listing["unanswered_kernels"]:
                raise SystemExit(
                    f"setup failed: {len(listing['pending'])} pending, expected "
                    f"{expected}; unanswered {listing['unanswered_kernels']}"
                )
            base: list[float] = []
            pending: list[float] = []
            for _ in range(args.rounds):
                base.append(await kernel_info_round(clients))
                start = time.perf_counter()
                await asyncio.to_thread(server.request, "jupyter-approvals/api/pending")
                pending.append(time.perf_counter() - start)
            base_ms = statistics.median(base) * 1000
            pending_ms = statistics.median(pending) * 1000
            ratio = pending_ms / base_ms
            print(f"kernels: {args.kernels}, pending requests: {expected}, rounds: {args.rounds}")
            print(f"kernel_info to every kernel concurrently, median: {base_ms:.1f} ms")
            print(f"GET pending, median: {pending_ms:.1f} ms")
            verdict = "PASS" if ratio <= TARGET_RATIO else "FAIL"
            print(f"ratio: {ratio:.2f}x (target <= {TARGET_RATIO:g}x) {verdict}")
            for client in clients:
                client.stop_channels()
        finally:
            server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=20)
    parser.add_argument("--per-kernel", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=30)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
