"""The REST API against a real jupyter_server and real kernels (docs/protocol.md section 6)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from tornado.httpclient import HTTPClientError

from jupyter_approvals.core.project import make_git_top_level

# The kernel tests' protected writer, and a person's pause (faster answers are auto-answered).
from tests.kernel.helpers import HUMAN_PAUSE_S, SETUP

API = "jupyter-approvals/api"


async def get_json(jp_fetch, *parts, **kwargs) -> dict:
    response = await jp_fetch(API, *parts, **kwargs)
    return json.loads(response.body)


async def post_decision(jp_fetch, kernel_id, request_id, body, **kwargs):
    """POST a decision; return (status, body) also for error statuses."""
    try:
        response = await jp_fetch(
            API, "pending", kernel_id, request_id, method="POST", body=json.dumps(body), **kwargs
        )
    except HTTPClientError as error:
        return error.code, json.loads(error.response.body)
    return response.code, json.loads(response.body)


async def test_no_kernels_no_pending(jp_fetch):
    # Given a server with no kernels, when the sidebar asks
    listing = await get_json(jp_fetch, "pending")
    # Then the answer is empty but complete
    assert listing == {
        "pending": [],
        "unanswered_kernels": [],
        "busy_kernels": [],
        "kernels_without_approvals": [],
        "journal_errors": [],
        "last_decision": None,
    }


async def test_pending_requests_of_every_kernel_are_listed(jp_fetch, kernels):
    # Given two kernels with a pending request each, and one without approvals
    first = await kernels("sales/clean.ipynb")
    second = await kernels("report.ipynb")
    plain = await kernels("plain.ipynb")
    for kernel, path in ((first, "a.txt"), (second, "b.txt")):
        await kernel.run(SETUP)
        await kernel.pending_call(f"save('x', {path!r})")
    # When the sidebar asks
    listing = await get_json(jp_fetch, "pending")
    # Then both requests are there with their kernel and notebook, oldest first
    assert [(p["kernel_id"], p["summary"]) for p in listing["pending"]] == [
        (first.id, "Overwrite a.txt"),
        (second.id, "Overwrite b.txt"),
    ]
    item = listing["pending"][0]
    assert item["notebook_path"] == "sales/clean.ipynb"
    assert item["fingerprint"].startswith("sha256:")
    assert item["function"] == "__main__.save"
    assert listing["kernels_without_approvals"] == [plain.id]
    assert listing["unanswered_kernels"] == []


#: A cell that keeps its kernel busy until the test lets it end (creates ``go``): no test
#: may rest on how long a cell takes on a loaded machine.
UNTIL_GO = "import time, pathlib\nwhile not pathlib.Path('go').exists():\n    time.sleep(0.05)"


async def listing_until(jp_fetch, predicate, timeout: float = 30.0) -> dict:
    """GET pending until ``predicate(listing)`` holds (fails after ``timeout``)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        listing = await get_json(jp_fetch, "pending")
        if predicate(listing):
            return listing
        assert loop.time() < deadline, f"the listing never turned as expected: {listing}"
        await asyncio.sleep(0.1)


async def test_a_busy_kernel_does_not_block_the_list(jp_fetch, kernels, jp_root_dir):
    # Given one kernel with a pending request and one busy in a long cell
    ready = await kernels("ready.ipynb")
    busy = await kernels("busy.ipynb")
    await ready.run(SETUP)
    await ready.pending_call("save('x', 'r.txt')")
    await busy.run(SETUP)
    running = busy.client.execute(UNTIL_GO)
    # When the sidebar asks (until the server has seen the busy kernel start its cell)
    listing = await listing_until(jp_fetch, lambda found: found["busy_kernels"])
    # Then the ready kernel's request is listed and the busy kernel is named as busy
    assert [p["kernel_id"] for p in listing["pending"]] == [ready.id]
    assert listing["busy_kernels"] == [busy.id]
    assert listing["unanswered_kernels"] == []
    (Path(jp_root_dir) / "go").touch()
    await busy.client._async_recv_reply(running, timeout=60)


async def test_approving_from_the_sidebar_lets_the_call_run_once(jp_fetch, kernels, jp_root_dir):
    # Given a pending call
    kernel = await kernels()
    await kernel.run(SETUP)
    pending = await kernel.pending_call("save('data', 'out.txt')")
    # When a person approves it in the sidebar after reading it
    await asyncio.sleep(HUMAN_PAUSE_S)
    status, verdict = await post_decision(
        jp_fetch,
        kernel.id,
        pending["request_id"],
        {"decision": "approve", "fingerprint": pending["fingerprint"]},
    )
    # Then the kernel approved it, and the call runs exactly once
    assert status == 200
    assert verdict == {
        "ok": True,
        "code": None,
        "message": "",
        "status": "approved",
        "kernel_id": kernel.id,
        "id": pending["request_id"],
    }
    assert (await kernel.run("save('data', 'out.txt')"))["status"] == "ok"
    assert (jp_root_dir / "out.txt").read_text() == "data"
    assert (await kernel.run("save('data', 'out.txt')"))["ename"] == "ApprovalPending"
    # And it is gone from the list
    listing = await get_json(jp_fetch, "pending")
    assert [p["id"] for p in listing["pending"]] != [pending["request_id"]]


async def test_rejection_reason_reaches_the_caller(jp_fetch, kernels):
    kernel = await kernels()
    await kernel.run(SETUP)
    pending = await kernel.pending_call("save('data', 'out.txt')")
    await asyncio.sleep(HUMAN_PAUSE_S)
    status, _ = await post_decision(
        jp_fetch,
        kernel.id,
        pending["request_id"],
        {"decision": "reject", "fingerprint": pending["fingerprint"], "reason": "wrong table"},
    )
    assert status == 200
    result = await kernel.run("save('data', 'out.txt')")
    assert result["ename"] == "ApprovalRejected"
    assert "wrong table" in result["evalue"]


async def listed_idle(jp_fetch, request_id: str) -> dict:
    """The row of ``request_id``, once the server lists it in an idle kernel: the cell's reply
    can reach the test's client before the server's link has read the kernel's idle status,
    and a decision the server thinks a busy kernel cannot take is answered 503 unsent."""
    for _ in range(300):
        rows = (await get_json(jp_fetch, "pending"))["pending"]
        for row in rows:
            if row["id"] == request_id and not row["kernel_busy"]:
                return row
        await asyncio.sleep(0.02)
    raise AssertionError(f"the server never listed {request_id} in an idle kernel")


async def seen_idle(jp_fetch, kernel_id: str) -> None:
    """Wait until the server's record of kernel ``kernel_id`` has it idle again: the reply of a
    cell can reach the test before the server's link has read the kernel's idle status."""
    for _ in range(300):
        if kernel_id not in (await get_json(jp_fetch, "pending"))["busy_kernels"]:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"the server still has kernel {kernel_id} busy")


@pytest.mark.realtime
async def test_fast_answer_from_the_sidebar_is_auto_answered(jp_fetch, kernels):
    kernel = await kernels()
    await kernel.run(SETUP)
    pending = await kernel.pending_call("save('data', 'out.txt')")
    await listed_idle(jp_fetch, pending["request_id"])
    status, verdict = await post_decision(
        jp_fetch,
        kernel.id,
        pending["request_id"],
        {"decision": "approve", "fingerprint": pending["fingerprint"]},
    )
    assert (status, verdict["code"], verdict["status"]) == (
        409,
        "APPROVAL_AUTO_ANSWERED",
        "auto_answered",
    )
    assert (await kernel.run("save('data', 'out.txt')"))["ename"] == "ApprovalAutoAnswered"


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (
            {"decision": "approve", "fingerprint": "sha256:" + "0" * 64},
            409,
            "APPROVAL_FINGERPRINT_MISMATCH",
        ),
        ({"decision": "yes", "fingerprint": "FP"}, 400, "APPROVAL_MALFORMED_DECISION"),
        ({"decision": "approve"}, 400, "APPROVAL_MALFORMED_DECISION"),
        (
            {"decision": "approve", "fingerprint": "FP", "approved": True},
            400,
            "APPROVAL_MALFORMED_DECISION",
        ),
        (
            {"decision": "reject", "fingerprint": "FP", "reason": "x" * 5000},
            413,
            "APPROVAL_TOO_LARGE",
        ),
        ("not json", 400, "APPROVAL_MALFORMED_DECISION"),
    ],
)
async def test_bad_decisions_decide_nothing(jp_fetch, kernels, body, status, code):
    # Given a pending call, shown long enough ago
    kernel = await kernels()
    await kernel.run(SETUP)
    pending = await kernel.pending_call("save('data', 'out.txt')")
    await asyncio.sleep(HUMAN_PAUSE_S)
    if isinstance(body, dict) and body.get("fingerprint") == "FP":
        body["fingerprint"] = pending["fingerprint"]
    # When the decision is malformed or names other content
    try:
        response = await jp_fetch(
            API,
            "pending",
            kernel.id,
            pending["request_id"],
            method="POST",
            body=body if isinstance(body, str) else json.dumps(body),
        )
        got_status, verdict = response.code, json.loads(response.body)
    except HTTPClientError as error:
        got_status, verdict = error.code, json.loads(error.response.body)
    # Then it is refused with its code, and the request is still pending
    assert (got_status, verdict["code"]) == (status, code)
    listing = await get_json(jp_fetch, "pending")
    assert [p["id"] for p in listing["pending"]] == [pending["request_id"]]


async def test_unknown_kernel_and_request_are_404(jp_fetch, kernels):
    kernel = await kernels()
    await kernel.run(SETUP)
    body = {"decision": "approve", "fingerprint": "sha256:" + "a" * 64}
    assert (await post_decision(jp_fetch, "no-such-kernel", "0123456789abcdef", body))[1][
        "code"
    ] == "APPROVAL_UNKNOWN_KERNEL"
    status, verdict = await post_decision(jp_fetch, kernel.id, "0123456789abcdef", body)
    assert (status, verdict["code"]) == (404, "APPROVAL_UNKNOWN_REQUEST")


async def test_kernel_without_approvals_cannot_be_decided(jp_fetch, kernels):
    kernel = await kernels()
    status, verdict = await post_decision(
        jp_fetch,
        kernel.id,
        "0123456789abcdef",
        {"decision": "approve", "fingerprint": "sha256:" + "a" * 64},
    )
    assert (status, verdict["code"]) == (504, "APPROVAL_KERNEL_UNAVAILABLE")


async def test_journal_lists_request_decision_and_outcome(jp_fetch, kernels):
    # Given a call approved from the sidebar and run
    kernel = await kernels()
    await kernel.run(SETUP)
    pending = await kernel.pending_call("save('data', 'j.txt')")
    await asyncio.sleep(HUMAN_PAUSE_S)
    await post_decision(
        jp_fetch,
        kernel.id,
        pending["request_id"],
        {"decision": "approve", "fingerprint": pending["fingerprint"]},
    )
    await kernel.run("save('data', 'j.txt')")
    # When the history is read
    page = await get_json(jp_fetch, "journal")
    # Then it shows the three lines newest first, and filters work
    mine = [e for e in page["entries"] if e.get("request_id") == pending["request_id"]]
    assert [e["event"] for e in mine] == ["executed", "approved", "relayed", "requested"]
    assert mine[1]["channel"] == "sidebar"
    # And the server's own record of the decision it relayed names the row the person saw
    relayed = mine[2]
    assert (relayed["recorded_by"], relayed["channel"], relayed["decision"]) == (
        "server",
        "sidebar",
        "approve",
    )
    assert relayed["shown_summary"] == mine[3]["summary"]
    assert relayed["shown_fingerprint"] == relayed["fingerprint"] == pending["fingerprint"]
    approved = await get_json(jp_fetch, "journal", params={"outcome": "approved"})
    assert {e["event"] for e in approved["entries"]} == {"approved"}
    assert approved["has_more"] is False


@pytest.mark.parametrize("params", [{"limit": "0"}, {"limit": "x"}, {"path": "../.."}])
async def test_journal_refuses_bad_parameters(jp_fetch, params):
    with pytest.raises(HTTPClientError) as caught:
        await jp_fetch(API, "journal", params=params)
    assert caught.value.code == 400
    assert json.loads(caught.value.response.body)["code"] == "APPROVAL_MALFORMED_MESSAGE"


async def test_doctor_reports_checks_limits_and_what_is_not_guaranteed(jp_fetch):
    # When the sidebar (or a person) asks the server for the doctor's report
    report = await get_json(jp_fetch, "doctor")
    # Then it names each check and the limits in force
    names = [check["name"] for check in report["checks"]]
    assert names == [
        "server_extension",
        "labextension",
        "widgets",
        "journal",
        "limits",
        "sandbox",
        "hub_kernel_token",
        "agent_gate",
        "ungated_agents",
        "cross_origin",
        "jupyter_ai_bridge",
        "kernel_journals",
    ]
    # (without Jupyter AI here, its bridge has nothing to do and says so)
    [bridge] = [check for check in report["checks"] if check["name"] == "jupyter_ai_bridge"]
    assert (bridge["ok"], bridge["detail"]) == (True, "Jupyter AI 3 is not installed")
    assert all({"name", "ok", "detail"} <= set(check) for check in report["checks"])
    assert report["limits"]["request_timeout_s"] == 600
    assert report["limits"]["min_answer_s"] == 1.0
    assert report["not_guaranteed"]
    assert isinstance(report["ok"], bool)


async def test_a_busy_kernel_keeps_its_rows_and_a_decision_is_told_to_retry(
    jp_fetch, kernels, jp_root_dir
):
    # Given a pending call, and then a long cell that keeps the kernel busy
    kernel = await kernels()
    await kernel.run(SETUP)
    pending = await kernel.pending_call("save('data', 'late.txt')")
    await asyncio.sleep(HUMAN_PAUSE_S)
    busy = kernel.client.execute(UNTIL_GO)
    # When the sidebar lists (once the server has seen the cell start), then a person approves
    # while the kernel is busy
    listing = await listing_until(jp_fetch, lambda found: found["busy_kernels"])
    response = await jp_fetch(
        API,
        "pending",
        kernel.id,
        pending["request_id"],
        method="POST",
        body=json.dumps({"decision": "approve", "fingerprint": pending["fingerprint"]}),
        raise_error=False,
    )
    verdict = json.loads(response.body)
    # Then the row stays, marked busy, and the answer says when to retry; nothing was sent
    [row] = listing["pending"]
    assert (row["id"], row["kernel_busy"], row["decide_now"]) == (
        pending["request_id"],
        True,
        False,
    )
    assert listing["busy_kernels"] == [kernel.id]
    assert (response.code, verdict["code"], verdict["retry"]) == (
        503,
        "APPROVAL_KERNEL_BUSY",
        "when_idle",
    )
    assert response.headers["Retry-After"] == str(verdict["retry_after_s"])
    # And when the cell has ended the request is still pending, and the retry decides it
    (Path(jp_root_dir) / "go").touch()
    await kernel.client._async_recv_reply(busy, timeout=60)
    assert (await kernel.run("save('data', 'late.txt')"))["ename"] == "ApprovalPending"
    # (the server learns the kernel is idle from its iopub, a moment after the reply)
    await listing_until(jp_fetch, lambda found: not found["busy_kernels"])
    status, verdict = await post_decision(
        jp_fetch,
        kernel.id,
        pending["request_id"],
        {"decision": "approve", "fingerprint": pending["fingerprint"]},
    )
    assert (status, verdict["status"]) == (200, "approved")
    assert (await kernel.run("save('data', 'late.txt')"))["status"] == "ok"


async def test_a_decision_the_kernel_reads_too_late_is_never_applied(
    jp_fetch, approvals, kernels, monkeypatch
):
    # Given a pending call in a kernel that turns busy right after the server sent a decision
    kernel = await kernels()
    await kernel.run(SETUP)
    pending = await kernel.pending_call("save('data', 'late.txt')")
    await asyncio.sleep(HUMAN_PAUSE_S)
    links = approvals.parts.links
    monkeypatch.setattr(links, "timeout", 0.5)
    busy = kernel.client.execute("import time; time.sleep(2)")
    # The race: the server has not yet seen the cell start when it sends the decision.
    monkeypatch.setattr(links, "busy", lambda _kernel_id: False)
    # When the decision waits in the kernel's queue past its deadline
    status, verdict = await post_decision(
        jp_fetch,
        kernel.id,
        pending["request_id"],
        {"decision": "approve", "fingerprint": pending["fingerprint"]},
    )
    # Then the server says nothing was decided...
    assert (status, verdict["code"]) == (504, "APPROVAL_KERNEL_UNAVAILABLE")
    # ...and when the kernel reads the queued message, it refuses it too
    await kernel.client._async_recv_reply(busy, timeout=30)
    assert (await kernel.run("save('data', 'late.txt')"))["ename"] == "ApprovalPending"
    # And the timed-out comm was closed in the kernel: none is left behind, at most the one
    # the server's link may have opened again since
    comms = await kernel.run(
        "from jupyter_approvals.kernel.session import KernelSession\n"
        "print(len(KernelSession.current().endpoint.comm_ids()))"
    )
    printed = "".join(
        m["content"].get("text", "") for m in comms["outputs"] if m["msg_type"] == "stream"
    )
    assert int(printed.strip()) <= 1


async def test_requests_are_listed_again_after_a_kernel_restart(jp_fetch, kernels, jp_serverapp):
    # Given a kernel the server has talked to, which then restarts
    kernel = await kernels()
    await kernel.run(SETUP)
    await kernel.pending_call("save('data', 'a.txt')")
    assert len((await get_json(jp_fetch, "pending"))["pending"]) == 1
    await jp_serverapp.kernel_manager.restart_kernel(kernel.id)
    await kernel.client.wait_for_ready(timeout=60)
    # When the restarted kernel has a new pending request
    await kernel.run(SETUP)
    pending = await kernel.pending_call("save('data', 'b.txt')")
    # Then the list shows it (after at most one unanswered round while the link reconnects)
    for _ in range(2):
        listing = await get_json(jp_fetch, "pending")
        if listing["pending"]:
            break
    assert [p["id"] for p in listing["pending"]] == [pending["request_id"]]


async def test_a_malformed_request_id_is_an_unknown_request(jp_fetch, kernels):
    kernel = await kernels()
    status, verdict = await post_decision(
        jp_fetch, kernel.id, "NOT-HEX", {"decision": "approve", "fingerprint": "sha256:" + "a" * 64}
    )
    assert (status, verdict["code"]) == (404, "APPROVAL_UNKNOWN_REQUEST")


async def test_a_kernel_given_a_session_after_it_started_shows_its_notebook(
    jp_fetch, jp_serverapp, jp_root_dir, state_dir, kernels
):

    from tests.conftest import journal_lines
    from tests.server.conftest import Kernel

    # Given a kernel started over REST, as MCP agents do, and given a session afterwards
    make_git_top_level(jp_root_dir)
    started = await jp_fetch("api", "kernels", method="POST", body="{}")
    kernel_id = json.loads(started.body)["id"]
    body = {"path": "analysis.ipynb", "type": "notebook", "name": "", "kernel": {"id": kernel_id}}
    await jp_fetch("api", "sessions", method="POST", body=json.dumps(body))
    kernel = Kernel(jp_serverapp, kernel_id)
    try:
        await kernel.client.wait_for_ready(timeout=60)
        await kernel.run(SETUP)
        await kernel.pending_call("save('x', 'x.txt')")
        # When the sidebar lists what is pending
        listing = json.loads((await jp_fetch("jupyter-approvals", "api", "pending")).body)
        # Then the request names the notebook of the kernel's session
        [item] = listing["pending"]
        assert item["notebook_path"] == "analysis.ipynb"
        # And the kernel is told (at once when idle, else within the server's next sweeps):
        # its next request's card and journal line name it too
        for _ in range(50):
            told = await kernel.run(
                "from jupyter_approvals.kernel.session import KernelSession\n"
                "print(KernelSession.current().shown_notebook_path)"
            )
            if "analysis.ipynb" in "".join(m["content"].get("text", "") for m in told["outputs"]):
                break
            await asyncio.sleep(0.1)
        await kernel.pending_call("save('y', 'y.txt')")
        shown = await kernel.run("print(ja.pending()[-1].origin.notebook_path)")
        printed = "".join(m["content"].get("text", "") for m in shown["outputs"])
        assert printed.strip() == "analysis.ipynb"
        requested = [e for e in journal_lines(state_dir) if e["event"] == "requested"]
        assert requested[-1]["notebook_path"] == "analysis.ipynb"
    finally:
        kernel.stop()
        await jp_fetch("api", "kernels", kernel_id, method="DELETE")


async def test_a_kernel_whose_journal_was_moved_by_a_cell_is_flagged(
    jp_fetch, kernels, tmp_path, state_dir
):
    # Given a kernel whose cell moved the state dir before approvals started in it
    kernel = await kernels()
    hidden = tmp_path / "out-of-sight"
    await kernel.run(f"import os; os.environ['JUPYTER_APPROVALS_STATE_DIR'] = {str(hidden)!r}")
    await kernel.run(SETUP)
    await kernel.pending_call("save('x', 'x.txt')")
    # When the sidebar lists what is pending
    listing = json.loads((await jp_fetch("jupyter-approvals", "api", "pending")).body)
    # Then the kernel is flagged: what it records is not where this server's History reads
    [flagged] = [e for e in listing["journal_errors"] if e.get("elsewhere")]
    assert flagged["kernel_id"] == kernel.id
    assert flagged["elsewhere"].startswith(str(hidden))
    # And the History's journal shows what that kernel recorded, naming the file
    journal = json.loads((await jp_fetch("jupyter-approvals", "api", "journal")).body)
    [other] = journal["other_journals"]
    assert other.startswith(str(hidden))
    requested = [e for e in journal["entries"] if e["event"] == "requested"]
    assert [e["recorded_in"] for e in requested] == [other]
    assert requested[0]["summary"] == "Overwrite x.txt"
    # And the doctor fails its kernel_journals check, with the fix
    report = json.loads((await jp_fetch("jupyter-approvals", "api", "doctor")).body)
    [check] = [c for c in report["checks"] if c["name"] == "kernel_journals"]
    assert check["ok"] is False
    assert "JUPYTER_APPROVALS_STATE_DIR" in check["fix"]


async def test_a_kernel_whose_journal_cannot_be_written_is_reported_by_the_doctor(
    jp_fetch, kernels
):
    from tests.faults.test_journal_disk_full import LIMIT_JOURNAL

    # Given a kernel whose journal's next line does not fit (a real EFBIG from RLIMIT_FSIZE)
    kernel = await kernels()
    await kernel.run(SETUP)
    await kernel.pending_call("save('x', 'x.txt')")
    assert (await kernel.run(LIMIT_JOURNAL))["status"] == "ok"
    await kernel.pending_call("save('y', 'y.txt')")
    # When a person asks the sidebar and the doctor
    listing = json.loads((await jp_fetch("jupyter-approvals", "api", "pending")).body)
    report = json.loads((await jp_fetch("jupyter-approvals", "api", "doctor")).body)
    # Then both say that kernel's journal is failing, and the request is still listed
    [failing] = [e for e in listing["journal_errors"] if not e.get("elsewhere")]
    assert failing["kernel_id"] == kernel.id
    assert [r["summary"] for r in listing["pending"]] == ["Overwrite x.txt", "Overwrite y.txt"]
    [check] = [c for c in report["checks"] if c["name"] == "kernel_journals"]
    assert check["ok"] is False
    assert check["failing"] == [kernel.id]
    assert "Free space" in check["fix"]
    assert (await kernel.run("resource.setrlimit(resource.RLIMIT_FSIZE, (_soft, _hard))"))[
        "status"
    ] == "ok"


async def test_the_list_names_the_latest_decision_wherever_it_was_made(jp_fetch, kernels):
    # Given two pending requests, one rejected from the sidebar and then one approved through
    # another frontend of the kernel (as the card does)
    kernel = await kernels()
    await kernel.run(SETUP)
    first = await kernel.pending_call("save('a', 'a.txt')")
    second = await kernel.pending_call("save('b', 'b.txt')")
    await asyncio.sleep(HUMAN_PAUSE_S)
    body = {"decision": "reject", "fingerprint": first["fingerprint"]}
    assert (await post_decision(jp_fetch, kernel.id, first["request_id"], body))[0] == 200
    listing = await get_json(jp_fetch, "pending")
    assert (listing["last_decision"]["id"], listing["last_decision"]["status"]) == (
        first["request_id"],
        "rejected",
    )
    import uuid

    client, comm_id = kernel.client, uuid.uuid4().hex
    decide = {"op": "decide", "id": second["request_id"], "decision": "approve"}
    decide.update(fingerprint=second["fingerprint"], reason="")
    for msg_type, content in (
        ("comm_open", {"comm_id": comm_id, "target_name": "jupyter_approvals", "data": {}}),
        ("comm_msg", {"comm_id": comm_id, "data": decide}),
    ):
        client.shell_channel.send(client.session.msg(msg_type, content))
    # When the sidebar lists
    for _ in range(50):
        listing = await get_json(jp_fetch, "pending")
        if listing["last_decision"]["id"] == second["request_id"]:
            break
        await asyncio.sleep(0.1)
    # Then it names that latest decision, where it was made, and in which kernel
    last = listing["last_decision"]
    assert (last["id"], last["status"], last["channel"], last["kernel_id"]) == (
        second["request_id"],
        "approved",
        "comm",
        kernel.id,
    )
