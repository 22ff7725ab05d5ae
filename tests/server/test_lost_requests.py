"""A request still pending, or approved and unused, when its kernel's process ends is lost
with it, and the journal says so (docs/protocol.md section 5, event ``lost``)."""

from __future__ import annotations

import asyncio

import pytest

from tests.conftest import journal_lines
from tests.kernel.helpers import HUMAN_PAUSE_S, SETUP
from tests.server.test_rest import post_decision


async def one_pending_one_approved(jp_fetch, kernel) -> tuple[str, str]:
    """Open two requests in ``kernel`` and approve the second through REST (not used)."""
    await kernel.run(SETUP)
    pending = await kernel.pending_call("save('a', 'a.txt')")
    approved = await kernel.pending_call("save('b', 'b.txt')")
    await asyncio.sleep(HUMAN_PAUSE_S)
    status, _ = await post_decision(
        jp_fetch,
        kernel.id,
        approved["request_id"],
        {"decision": "approve", "fingerprint": approved["fingerprint"]},
    )
    assert status == 200
    return pending["request_id"], approved["request_id"]


async def lost_lines(state_dir, request_ids, timeout: float = 20.0) -> dict[str, str]:
    """The status each ``lost`` line of these requests records, once all are written."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        lost = {
            line["request_id"]: line["status"]
            for line in journal_lines(state_dir)
            if line["event"] == "lost" and line.get("request_id") in request_ids
        }
        if len(lost) == len(request_ids) or loop.time() > deadline:
            return lost
        await asyncio.sleep(0.1)


@pytest.mark.parametrize("ending", ["shutdown", "restart"])
async def test_what_a_kernel_held_when_it_ended_is_journaled_as_lost(
    jp_fetch, jp_serverapp, kernels, state_dir, ending
):
    # Given a kernel holding a pending request and an approved one not yet used
    kernel = await kernels()
    pending, approved = await one_pending_one_approved(jp_fetch, kernel)
    # When the kernel is shut down, or restarted
    if ending == "shutdown":
        await jp_serverapp.kernel_manager.shutdown_kernel(kernel.id)
    else:
        await jp_serverapp.kernel_manager.restart_kernel(kernel.id)
    # Then the journal says both were lost with the kernel's process, with their status
    lost = await lost_lines(state_dir, {pending, approved})
    assert lost == {pending: "pending", approved: "approved"}
    # And nothing of them ran
    events = {(line.get("request_id"), line["event"]) for line in journal_lines(state_dir)}
    assert (approved, "executed") not in events


async def test_a_child_forked_from_the_kernel_journals_nothing_lost(jp_fetch, kernels, state_dir):
    # Given a kernel holding a pending request
    kernel = await kernels()
    await kernel.run(SETUP)
    pending = await kernel.pending_call("save('a', 'a.txt')")
    # When a cell forks a child that runs the session's exit hook, as its normal exit would
    forked = await kernel.run(
        "import os\n"
        "from jupyter_approvals.kernel.session import KernelSession\n"
        "child = os.fork()\n"
        "if child == 0:\n"
        "    KernelSession.current()._journal_lost()\n"
        "    os._exit(0)\n"
        "os.waitpid(child, 0)"
    )
    # Then the kernel still holds the request, and the journal says nothing was lost
    assert forked["status"] == "ok"
    assert not [line for line in journal_lines(state_dir) if line["event"] == "lost"]
    listing = await kernel.run("print([r.id for r in ja.pending()])")
    assert pending["request_id"] in "".join(
        m["content"].get("text", "") for m in listing["outputs"]
    )
