"""The server's copy of what kernels have pending (docs/protocol.md 3.2, 6.1): fed by what the
kernels publish, so the list never waits on a busy kernel and busy rows stay."""

from __future__ import annotations

import asyncio

from tests.kernel.helpers import HUMAN_PAUSE_S, SETUP
from tests.server.test_rest import get_json, listed_idle, post_decision


async def rows_until(jp_fetch, predicate, timeout: float = 20.0) -> dict:
    """GET pending until ``predicate(listing)`` holds; return that listing."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        listing = await get_json(jp_fetch, "pending")
        if predicate(listing) or loop.time() > deadline:
            return listing
        await asyncio.sleep(0.1)


async def test_a_request_made_in_a_running_cell_is_listed_while_the_cell_runs(jp_fetch, kernels):
    # Given a kernel whose cell opens a request and then keeps running
    kernel = await kernels()
    await kernel.run(SETUP)
    running = kernel.client.execute(
        "try:\n    save('x', 'x.txt')\nexcept ja.ApprovalPending:\n    pass\n"
        "import time; time.sleep(4)"
    )
    # When the sidebar lists what is pending while the cell runs
    listing = await rows_until(jp_fetch, lambda found: found["pending"])
    # Then the request is there, from the server's copy, marked as not decidable now
    [row] = listing["pending"]
    assert row["summary"] == "Overwrite x.txt"
    assert (row["kernel_busy"], row["decide_now"]) == (True, False)
    assert listing["busy_kernels"] == [kernel.id]
    assert listing["unanswered_kernels"] == []
    # And after the cell the row is still the same request, now decidable
    await kernel.client._async_recv_reply(running, timeout=30)
    listing = await rows_until(jp_fetch, lambda found: not found["busy_kernels"])
    assert [(r["id"], r["kernel_busy"], r["decide_now"]) for r in listing["pending"]] == [
        (row["id"], False, True)
    ]


async def test_a_control_message_does_not_make_a_running_cell_look_idle(jp_fetch, kernels):
    # Given a cell that opens a request and keeps running, the sidebar showing it busy
    kernel = await kernels()
    await kernel.run(SETUP)
    running = kernel.client.execute(
        "try:\n    save('x', 'x.txt')\nexcept ja.ApprovalPending:\n    pass\n"
        "import time; time.sleep(6)"
    )
    listing = await rows_until(jp_fetch, lambda found: found["busy_kernels"] and found["pending"])
    [row] = listing["pending"]
    # When another client sends the kernel a message on its control channel (as JupyterLab's
    # debugger and resource monitors do), which the kernel answers busy, then idle, at once
    await ask_on_control(kernel, "usage_request")
    await asyncio.sleep(0.5)  # (jupyter_server has read the control message's idle by now)
    # Then the server still sees the cell running: the row is not offered for a decision,
    # and a decision is told to wait for the cell rather than sent to a kernel that cannot
    # read it
    listing = await get_json(jp_fetch, "pending")
    assert [(r["id"], r["kernel_busy"], r["decide_now"]) for r in listing["pending"]] == [
        (row["id"], True, False)
    ]
    await asyncio.sleep(HUMAN_PAUSE_S)
    status, verdict = await post_decision(
        jp_fetch, kernel.id, row["id"], {"decision": "approve", "fingerprint": row["fingerprint"]}
    )
    assert (status, verdict["code"], verdict["retry"]) == (503, "APPROVAL_KERNEL_BUSY", "when_idle")
    # And once the cell ends, the same row is decidable
    await kernel.client._async_recv_reply(running, timeout=30)
    listing = await rows_until(jp_fetch, lambda found: not found["busy_kernels"])
    assert [(r["id"], r["decide_now"]) for r in listing["pending"]] == [(row["id"], True)]


async def ask_on_control(kernel, msg_type: str, content: dict | None = None) -> dict:
    """Send ``msg_type`` on the kernel's control channel; return the reply's content."""
    message = kernel.client.session.msg(msg_type, content or {})
    kernel.client.control_channel.send(message)
    while True:
        reply = await kernel.client.control_channel.get_msg(timeout=10)
        if reply["parent_header"].get("msg_id") == message["header"]["msg_id"]:
            return reply["content"]


async def test_a_cell_running_in_a_subshell_leaves_the_request_decidable(
    jp_fetch, kernels, jp_root_dir
):
    # Given a pending request, and a long cell running in a subshell of the kernel (ipykernel
    # 7 runs it in a thread of its own; the main shell stays free)
    kernel = await kernels()
    await kernel.run(SETUP)
    pending = await kernel.pending_call("save('data', 'sub.txt')")
    subshell = (await ask_on_control(kernel, "create_subshell_request"))["subshell_id"]
    message = kernel.client.session.msg(
        "execute_request", {"code": "import time; time.sleep(6)", "silent": False}
    )
    message["header"]["subshell_id"] = subshell
    kernel.client.shell_channel.send(message)
    listing = await rows_until(jp_fetch, lambda found: found["pending"])
    assert listing["busy_kernels"] == []
    # When a person approves in the sidebar while the subshell's cell runs
    await asyncio.sleep(HUMAN_PAUSE_S)
    status, verdict = await post_decision(
        jp_fetch,
        kernel.id,
        pending["request_id"],
        {"decision": "approve", "fingerprint": pending["fingerprint"]},
    )
    # Then the main shell takes the decision at once, and the call runs once
    assert (status, verdict["status"]) == (200, "approved")
    assert (await kernel.run("save('data', 'sub.txt')"))["status"] == "ok"
    assert (jp_root_dir / "sub.txt").read_text() == "data"


async def test_a_cell_awaiting_wait_is_decided_from_the_sidebar(jp_fetch, kernels, jp_root_dir):
    # Given a kernel that starts approvals inside a cell which then awaits the decision
    kernel = await kernels()
    awaiting = kernel.client.execute(
        SETUP + "\nresult = await save.wait('waited', 'w.txt')\nprint(result)"
    )
    listing = await rows_until(
        jp_fetch, lambda found: any(r["decide_now"] for r in found["pending"])
    )
    [row] = listing["pending"]
    assert row["kernel_busy"] is True
    # When a person approves it in the sidebar while the cell awaits
    await asyncio.sleep(HUMAN_PAUSE_S)
    status, verdict = await post_decision(
        jp_fetch, kernel.id, row["id"], {"decision": "approve", "fingerprint": row["fingerprint"]}
    )
    # Then the decision is delivered and applied, and the awaiting cell runs the call once
    assert (status, verdict["status"]) == (200, "approved")
    reply = await kernel.client._async_recv_reply(awaiting, timeout=30)
    assert reply["content"]["status"] == "ok"
    assert (jp_root_dir / "w.txt").read_text() == "waited"
    listing = await rows_until(jp_fetch, lambda found: not found["pending"])
    assert listing["pending"] == []


async def test_a_restarted_kernel_drops_its_rows_at_once(jp_fetch, jp_serverapp, kernels):
    # Given a kernel with a pending request the sidebar shows
    kernel = await kernels()
    await kernel.run(SETUP)
    await kernel.pending_call("save('data', 'a.txt')")
    shown = await rows_until(jp_fetch, lambda listing: len(listing["pending"]) == 1)
    assert len(shown["pending"]) == 1
    # When the kernel is restarted
    await jp_serverapp.kernel_manager.restart_kernel(kernel.id)
    # Then the next list has no row of its old process
    listing = await get_json(jp_fetch, "pending")
    assert listing["pending"] == []
    assert kernel.id not in listing["busy_kernels"]


async def test_a_stopped_kernel_drops_its_rows_at_once(jp_fetch, jp_serverapp, kernels):
    # Given two kernels with a pending request each
    stopping = await kernels("a.ipynb")
    staying = await kernels("b.ipynb")
    for kernel in (stopping, staying):
        await kernel.run(SETUP)
        await kernel.pending_call("save('data', 'a.txt')")
    # (each kernel tells the server of its request on its own iopub, a moment after its cell)
    shown = await rows_until(jp_fetch, lambda listing: len(listing["pending"]) == 2)
    assert len(shown["pending"]) == 2
    # When one of them is shut down
    await jp_fetch("api", "kernels", stopping.id, method="DELETE")
    # Then the next list has only the other's row
    listing = await get_json(jp_fetch, "pending")
    assert [row["kernel_id"] for row in listing["pending"]] == [staying.id]


async def until_the_link_asked(jp_fetch, link) -> None:
    """Wait until the server's link asked its kernel once (its own comm is open): a listing
    the kernel published on its own can reach the server before the kernel is idle to ask,
    and the next listing would then ask it."""
    for _ in range(300):
        if link.comm_open and link.heard_at is not None:
            return
        await get_json(jp_fetch, "pending")
        await asyncio.sleep(0.02)
    raise AssertionError("the server never asked the kernel for its pending list")


def count_questions(link, monkeypatch) -> list[str]:
    """Record the type of every message the server's link sends its kernel from now on."""
    sent: list[str] = []
    original = link._ask

    async def counting(msg_type, *args, **kwargs):
        sent.append(msg_type)
        return await original(msg_type, *args, **kwargs)

    monkeypatch.setattr(link, "_ask", counting)
    return sent


async def test_the_list_answers_from_memory_after_the_first_contact(
    jp_fetch, approvals, kernels, monkeypatch
):
    # Given a kernel the server has listed once
    kernel = await kernels()
    await kernel.run(SETUP)
    pending = await kernel.pending_call("save('x', 'x.txt')")
    await listed_idle(jp_fetch, pending["request_id"])
    links = approvals.parts.links
    await until_the_link_asked(jp_fetch, links.link_of(kernel.id))
    sent = count_questions(links.link_of(kernel.id), monkeypatch)
    # When the sidebar polls again, and a second request appears meanwhile
    await get_json(jp_fetch, "pending")
    await kernel.pending_call("save('y', 'y.txt')")
    listing = await rows_until(jp_fetch, lambda found: len(found["pending"]) == 2)
    # Then both rows are listed and the kernel was not asked anything
    assert [row["summary"] for row in listing["pending"]] == ["Overwrite x.txt", "Overwrite y.txt"]
    assert sent == []


async def test_a_busy_kernel_never_heard_from_is_named_unanswered_not_asked(
    jp_fetch, approvals, kernels, monkeypatch
):
    # Given a kernel busy in a long cell, whose link knows nothing of it (as after a restart)
    kernel = await kernels()
    running = kernel.client.execute("import time; time.sleep(3)")
    await asyncio.sleep(0.5)
    links = approvals.parts.links
    links.kernel_restarted(kernel.id)
    sent = count_questions(links.link_of(kernel.id), monkeypatch)
    # When the sidebar lists
    listing = await get_json(jp_fetch, "pending")
    # Then the kernel is named as unanswered, and nothing was sent to wait in its queue
    assert listing["unanswered_kernels"] == [kernel.id]
    assert sent == []
    await kernel.client._async_recv_reply(running, timeout=30)
    # And once idle it is asked and known again
    listing = await rows_until(jp_fetch, lambda found: not found["unanswered_kernels"])
    assert listing["kernels_without_approvals"] == [kernel.id]


async def test_a_busy_kernel_is_not_told_to_retry_a_request_it_does_not_have(jp_fetch, kernels):
    # Given a kernel with approvals loaded, busy in a long cell
    kernel = await kernels()
    await kernel.run(SETUP)
    await kernel.pending_call("save('x', 'x.txt')")
    running = kernel.client.execute("import time; time.sleep(3)")
    await rows_until(jp_fetch, lambda found: found["busy_kernels"])
    # When a decision names a request the kernel does not list
    status, verdict = await post_decision(
        jp_fetch,
        kernel.id,
        "0123456789abcdef",
        {"decision": "approve", "fingerprint": "sha256:" + "a" * 64},
    )
    # Then it is an unknown request, not a busy kernel to retry
    assert (status, verdict["code"]) == (404, "APPROVAL_UNKNOWN_REQUEST")
    await kernel.client._async_recv_reply(running, timeout=30)


async def test_what_one_kernel_publishes_cannot_break_the_list_of_the_others(jp_fetch, kernels):
    # Given a kernel with a pending request, and a second kernel whose cell publishes listings
    # of the wrong shape on its marker comm (code in a kernel can publish anything there)
    honest = await kernels("honest.ipynb")
    await honest.run(SETUP)
    pending = await honest.pending_call("save('x', 'x.txt')")
    forger = await kernels("forger.ipynb")
    await forger.run(SETUP)
    forged = [
        {"op": "changed", "requests": 7, "journal": {"path": ["not", "text"]}},
        {"op": "changed", "requests": [{"id": ["a", "list"]}, {"id": "../../held/0123"}, 5]},
        {"op": "changed", "requests": [{"id": "0123456789abcdef", "summary": "forged"}]},
    ]
    for message in forged:
        await forger.run(
            "from jupyter_approvals.kernel.session import KernelSession\n"
            f"KernelSession.current().endpoint._marker.send({message!r})"
        )
    # When the sidebar lists
    listing = await get_json(jp_fetch, "pending")
    # Then the list is answered with the honest kernel's row, and of the forger's only what
    # has a request's shape (a decision for such a row is the kernel's to refuse)
    rows = {(r["kernel_id"], r["id"]) for r in listing["pending"]}
    assert (honest.id, pending["request_id"]) in rows
    assert rows <= {(honest.id, pending["request_id"]), (forger.id, "0123456789abcdef")}


async def test_an_idle_kernel_is_asked_again_after_activity_of_its_own_only(
    jp_fetch, approvals, kernels, monkeypatch
):
    # Given a kernel the server knows, whose last listing is older than the relist interval
    import jupyter_approvals.server.mirror.kernels as server_kernels

    kernel = await kernels()
    await kernel.run(SETUP)
    pending = await kernel.pending_call("save('x', 'x.txt')")
    await listed_idle(jp_fetch, pending["request_id"])
    links = approvals.parts.links
    await until_the_link_asked(jp_fetch, links.link_of(kernel.id))
    sent = count_questions(links.link_of(kernel.id), monkeypatch)
    monkeypatch.setattr(server_kernels, "RELIST_AFTER_S", 0.0)
    # When the sidebar lists while the kernel did nothing since
    await get_json(jp_fetch, "pending")
    # Then it is not asked: asking is activity, and an idle kernel must stay cullable
    assert sent == []
    # When the kernel runs something later (activity a lost change message would ride on)
    await kernel.run("1 + 1")
    # Then it is asked for its list again (a lost change message heals), once the server
    # has seen that activity (its record of the kernel follows the kernel's messages)
    for _ in range(50):
        await get_json(jp_fetch, "pending")
        if sent:
            break
        await asyncio.sleep(0.1)
    assert sent == ["comm_msg"]


async def test_the_kernel_must_read_a_decision_before_the_server_stops_waiting(
    jp_fetch, approvals, kernels, monkeypatch
):
    # Given a pending request, and the message the server sends the kernel recorded
    from datetime import datetime, timezone

    kernel = await kernels()
    await kernel.run(SETUP)
    pending = await kernel.pending_call("save('x', 'x.txt')")
    links = approvals.parts.links
    sent: list[dict] = []
    original = links.ask

    async def recording(kernel_id, data):
        sent.append(data)
        return await original(kernel_id, data)

    monkeypatch.setattr(links, "ask", recording)
    await asyncio.sleep(HUMAN_PAUSE_S)
    # When a person decides
    body = {"decision": "reject", "fingerprint": pending["fingerprint"]}
    status, _ = await post_decision(jp_fetch, kernel.id, pending["request_id"], body)
    answered = datetime.now(timezone.utc)
    # Then the kernel's deadline lies a margin before the server's own (which is a full
    # timeout after the message was sent): a decision the kernel takes just in time is
    # answered in time, never reported as not made
    assert status == 200
    not_after = datetime.fromisoformat(sent[-1]["not_after"].replace("Z", "+00:00"))
    margin = min(0.5, links.timeout / 4)
    assert (not_after - answered).total_seconds() <= links.timeout - margin + 0.001


async def test_each_row_carries_its_kernels_reading_floor(jp_fetch, kernels):
    # Given a kernel configured with a stricter reading floor (3 s) and one with the default
    strict = await kernels()
    await strict.run("get_ipython().config.ApprovalsConfig.min_answer_seconds = 3\n" + SETUP)
    plain = await kernels()
    await plain.run(SETUP)
    for kernel in (strict, plain):
        await kernel.run("try:\n    save('x', 'x.txt')\nexcept ja.ApprovalPending:\n    pass\n")
    # When the sidebar lists them
    listing = await rows_until(jp_fetch, lambda found: len(found["pending"]) == 2)
    floors = {row["kernel_id"]: row["min_answer_ms"] for row in listing["pending"]}
    # Then each row says how long its buttons must wait: the sidebar waits as the kernel does
    assert floors == {strict.id: 3000, plain.id: 1000}
