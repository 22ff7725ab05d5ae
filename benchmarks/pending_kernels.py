"""Kernels holding pending approval requests, for the benchmarks that need many of them."""

from __future__ import annotations

import asyncio
from pathlib import Path

from jupyter_client.asynchronous import AsyncKernelClient

#: Run in each kernel: ``per_kernel`` protected calls, each left pending.
SETUP = """
import jupyter_approvals as ja

@ja.protected("bench.write", summary="Write item {{n}} of kernel {kernel}")
def write(n):
    return n

for n in range({per_kernel}):
    try:
        write(n)
    except ja.ApprovalPending:
        pass
"""


async def connect(runtime_dir: Path, kernel_id: str) -> AsyncKernelClient:
    """A ready client of a server's kernel, from its connection file in ``runtime_dir``."""
    client = AsyncKernelClient(connection_file=str(runtime_dir / f"kernel-{kernel_id}.json"))
    client.load_connection_file()
    client.start_channels()
    await client.wait_for_ready(timeout=60)
    return client


async def make_pending(clients: list[AsyncKernelClient], per_kernel: int) -> None:
    """Have every kernel make ``per_kernel`` protected calls that stay pending."""
    await asyncio.gather(
        *(
            client.execute_interactive(
                SETUP.format(per_kernel=per_kernel, kernel=index),
                timeout=120,
                output_hook=lambda _msg: None,
            )
            for index, client in enumerate(clients)
        )
    )
