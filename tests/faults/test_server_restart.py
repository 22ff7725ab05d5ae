"""The server restarts while requests are pending: afterwards nothing that was pending or
approved runs, a decision replayed from before is refused, and the journal shows what was
asked and decided, in whole lines."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from jupyter_client.blocking import BlockingKernelClient

from jupyter_approvals.testing import connect
from tests.kernel.helpers import HUMAN_PAUSE_S, SETUP, run

from .conftest import Server, journal_files, whole_lines

pytestmark = pytest.mark.kernel

API = "jupyter-approvals/api"


def start_notebook_kernel(server: Server) -> str:
    status, session = server.request(
        "POST",
        "api/sessions",
        # As JupyterLab sends it: the name is the file's (an empty one makes jupyter_server
        # pass the directory as JPY_SESSION_NAME, see the fault report).
        {
            "path": "notebook.ipynb",
            "type": "notebook",
            "name": "notebook.ipynb",
            "kernel": {"name": "python3"},
        },
    )
    assert status == 201, session
    kernel_id = str(session["kernel"]["id"])
    # As JupyterLab does on opening the notebook, a client asks the kernel for its info (the
    # server itself leaves a kernel nobody talked to alone, "starting"); attach only once the
    # kernel answers the server (its sockets are bound by then). Generous bounds, never
    # expectations: a loaded 2-core machine is slow, not wrong.
    info = BlockingKernelClient(connection_file=str(server.runtime / f"kernel-{kernel_id}.json"))
    info.load_connection_file()
    info.start_channels(hb=False)
    try:
        info.wait_for_ready(timeout=120)
        # The server follows the kernel's status on an iopub subscription of its own, which
        # can join after the kernel's first status messages went out (ZeroMQ drops what is
        # published before a subscriber joined): its record then stays "starting" until the
        # kernel publishes again. So the kernel is asked for its info again now and then.
        deadline = time.monotonic() + 120
        asked = time.monotonic()
        while server.request("GET", f"api/kernels/{kernel_id}")[1]["execution_state"] != "idle":
            assert time.monotonic() < deadline, "the kernel never became idle"
            if time.monotonic() - asked > 1.0:
                info.kernel_info()
                asked = time.monotonic()
            time.sleep(0.1)
    finally:
        info.stop_channels()
    return kernel_id


def pending_rows(server: Server, kernel_id: str, count: int, timeout: float = 120) -> list[dict]:
    deadline = time.monotonic() + timeout
    while True:
        status, body = server.request("GET", f"{API}/pending")
        assert status == 200, body
        rows = [r for r in body["pending"] if r.get("kernel_id") == kernel_id]
        if len(rows) >= count or time.monotonic() > deadline:
            return rows
        time.sleep(0.2)


#: Answers that say "not now" rather than anything about the decision.
RETRIED = frozenset({"APPROVAL_KERNEL_BUSY", "APPROVAL_KERNEL_UNAVAILABLE"})


def replay_until_idle(server: Server, kernel_id: str, row: dict) -> tuple[int, str]:
    """POST the approval of ``row`` to ``kernel_id`` again, retrying while the server says
    the kernel is busy (it may not have seen the last cell end yet) or did not answer in time
    (a loaded machine); (status, code)."""
    deadline = time.monotonic() + 120
    while True:
        status, answer = server.request(
            "POST",
            f"{API}/pending/{kernel_id}/{row['id']}",
            {"decision": "approve", "fingerprint": row["fingerprint"]},
        )
        if answer.get("code") not in RETRIED or time.monotonic() > deadline:
            return status, answer.get("code")
        time.sleep(0.2)


def test_after_a_restart_nothing_pending_runs_and_old_decisions_are_refused(
    tmp_path: Path, project: Path, state_dir: Path
):
    # Given a server whose kernel holds a pending request and an approved, unused one
    first = Server(tmp_path / "first", project, state_dir)
    try:
        kernel_id = start_notebook_kernel(first)
        cell = connect(first.runtime / f"kernel-{kernel_id}.json")
        try:
            assert run(cell, SETUP).status == "ok"
            assert run(cell, "save('x', 'precious.txt')").ename == "ApprovalPending"
            assert run(cell, "save('y', 'other.txt')").ename == "ApprovalPending"
            rows = pending_rows(first, kernel_id, 2)
            assert len(rows) == 2, rows
            waiting, approved = sorted(rows, key=lambda r: r["summary"])
            time.sleep(HUMAN_PAUSE_S)
            status, verdict = first.request(
                "POST",
                f"{API}/pending/{kernel_id}/{approved['id']}",
                {"decision": "approve", "fingerprint": approved["fingerprint"]},
            )
            assert (status, verdict["status"]) == (200, "approved"), verdict
        finally:
            cell.client.stop_channels()
    finally:
        # When the server is stopped (it shuts its kernels down) and started again
        first.stop()
    second = Server(tmp_path / "second", project, state_dir)
    try:
        # Then nothing of before is pending, and a decision replayed from before is refused
        status, body = second.request("GET", f"{API}/pending")
        assert (status, body["pending"]) == (200, []), body
        status, replay = second.request(
            "POST",
            f"{API}/pending/{kernel_id}/{waiting['id']}",
            {"decision": "approve", "fingerprint": waiting["fingerprint"]},
        )
        assert (status, replay["code"]) == (404, "APPROVAL_UNKNOWN_KERNEL"), replay
        # And in the notebook's new kernel the same ids mean nothing, and the approved call
        # asks again instead of running
        new_kernel = start_notebook_kernel(second)
        cell = connect(second.runtime / f"kernel-{new_kernel}.json")
        try:
            assert run(cell, SETUP).status == "ok"
            replay = replay_until_idle(second, new_kernel, waiting)
            assert replay == (404, "APPROVAL_UNKNOWN_REQUEST")
            assert run(cell, "save('y', 'other.txt')").ename == "ApprovalPending"
            assert run(cell, "runs").data()[-1] == "[]"
        finally:
            cell.client.stop_channels()
    finally:
        second.stop()
    assert not (project / "precious.txt").exists()
    assert not (project / "other.txt").exists()
    # And the journal shows, in whole lines, what was asked and decided before, that it was
    # lost with the kernel the server shut down, the replay the new kernel refused, and the
    # new request; nothing ran
    [path] = journal_files(state_dir)
    lines = whole_lines(path)
    by_request: dict[str, list[str]] = {}
    for line in lines:
        if line.get("request_id"):
            by_request.setdefault(line["request_id"], []).append(line["event"])
    assert by_request[waiting["id"]][:2] == ["requested", "lost"]
    # The replay is refused once, as unknown: by the new kernel, or by the server itself when
    # its list of the new kernel's requests came first (then the id it was sent is journaled
    # as attempted, not as a request of the server's). Refusals of the retries while the new
    # kernel was busy carry their own code.
    [replayed] = [
        e for e in lines if e["event"] == "refused" and e["code"] == "APPROVAL_UNKNOWN_REQUEST"
    ]
    assert replayed["kernel_id"] == new_kernel
    assert waiting["id"] in (replayed.get("request_id"), replayed.get("attempted_request_id"))
    # (the server's record of the approval it relayed, then the kernel's lines; the loss is
    # recorded by the stopping server, then by the kernel as it ends)
    assert by_request[approved["id"]] == ["requested", "relayed", "approved", "lost", "lost"]
    # (each stopping server records what its kernels lose: the first, the pending request and
    # the unused approval; the second, the request the new kernel made)
    lost_by_server = [
        e["request_id"] for e in lines if e["event"] == "lost" and e.get("recorded_by") == "server"
    ]
    assert sorted(lost_by_server[:2]) == sorted([waiting["id"], approved["id"]])
    assert len(lost_by_server) == 3
    assert [e for e in lines if e["event"] == "executed"] == []
    assert len([e for e in lines if e["event"] == "requested"]) == 3
