"""Kernels holding pending approval requests, for the benchmarks that need many of them."""

from __future__ import annotations

import asyncio
import queue
import time
from pathlib import Path

from jupyter_client.asynchronous import AsyncKernelClient

#: Run in each kernel: ``per_kernel`` protected calls, each left pending (``{preview}`` is
#: empty, or names the preview function PREVIEW defines).
SETUP = """
import jupyter_approvals as ja

@ja.protected("bench.write", summary="Write item {{n}} of kernel {kernel}"{preview})
def write(n):
    return n

for n in range({per_kernel}):
    try:
        write(n)
    except ja.ApprovalPending:
        pass
"""

#: Run before SETUP to give each request a preview like a real file write's: a 40-line diff
#: with 3 hunks and a changed-rows table, as text only (``text``) or with its structured form
#: too (``structured``), so the sidebar benchmark compares the two on the same content.
PREVIEW = """
from jupyter_approvals.previews.structured import Preview, StructuredPreview

def preview(n):
    text = [f"--- data/file-{{n}}.csv", f"+++ data/file-{{n}}.csv (new)"]
    built = StructuredPreview()
    built.count("lines added", 3, "added")
    built.count("lines removed", 3, "removed")
    diff = built.diff(f"data/file-{{n}}.csv", f"data/file-{{n}}.csv (new)")
    for start in (1, 40, 80):
        diff.hunk(start, start)
        text.append(f"@@ -{{start}},7 +{{start}},7 @@")
        for line in range(start, start + 7):
            if line == start + 3:
                diff.line("removed", line, None, [(f"{{line}},north,", False), ("120", True)])
                diff.line("added", None, line, [(f"{{line}},north,", False), ("125", True)])
                text += [f"-{{line}},north,120", f"+{{line}},north,125"]
            else:
                diff.line("context", line, line, [(f"{{line}},south,95", False)])
                text.append(f" {{line}},south,95")
    table = built.table([("id", "int64", True), ("units", "int64", False)], "Changed rows")
    for key in range(5):
        table.row("changed", [str(key), (str(key * 10), str(key * 10 + 1))])
        text.append(f"  id {{key}}: units {{key * 10}} -> {{key * 10 + 1}}")
    return Preview("\\n".join(text), built.document() if {structured} else None)
"""


async def connect(runtime_dir: Path, kernel_id: str, timeout: float = 120) -> AsyncKernelClient:
    """A ready client of a server's kernel, from its connection file in ``runtime_dir``.

    Ready means it answered ``kernel_info`` and its iopub reaches us. jupyter_client's own
    ``wait_for_ready`` declares a client without a manager dead when one heartbeat goes
    unanswered for a second, which a kernel still starting on a loaded machine often does;
    here only ``timeout`` ends the wait.
    """
    client = AsyncKernelClient(connection_file=str(runtime_dir / f"kernel-{kernel_id}.json"))
    client.load_connection_file()
    client.start_channels()
    try:
        await until_ready(client, timeout)
    except BaseException:
        client.stop_channels()
        raise
    return client


async def until_ready(client: AsyncKernelClient, timeout: float) -> None:
    """Ask for ``kernel_info`` until the kernel answers it on shell and publishes on iopub."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        client.kernel_info()
        try:
            reply = await client.get_shell_msg(timeout=1)
        except queue.Empty:
            continue
        # Any kernel_info reply will do: the kernel may be answering an earlier ask.
        if reply["msg_type"] != "kernel_info_reply":
            continue
        try:
            # Its status messages on iopub: the subscription is in place.
            await client.get_iopub_msg(timeout=1)
        except queue.Empty:
            continue
        while True:  # what is left of this exchange on iopub is not for the caller
            try:
                await client.get_iopub_msg(timeout=0.2)
            except queue.Empty:
                return
    raise TimeoutError(f"the kernel did not answer kernel_info in {timeout:g} s")


async def make_pending(
    clients: list[AsyncKernelClient], per_kernel: int, previews: str | None = None
) -> None:
    """Have every kernel make ``per_kernel`` protected calls that stay pending; ``previews``
    ("text" or "structured") gives them the previews of PREVIEW."""
    setup = SETUP if previews is None else PREVIEW + SETUP
    await asyncio.gather(
        *(
            client.execute_interactive(
                setup.format(
                    per_kernel=per_kernel,
                    kernel=index,
                    structured=previews == "structured",
                    preview="" if previews is None else ", preview=preview",
                ),
                timeout=600,  # setup on a busy machine: only a hang should end it
                output_hook=lambda _msg: None,
            )
            for index, client in enumerate(clients)
        )
    )
