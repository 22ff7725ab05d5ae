"""The ``jupyter_approvals`` comm contract that the sidebar and the server speak."""

from __future__ import annotations

import time

import pytest

from tests.conftest import journal_lines
from tests.kernel.helpers import SETUP, let_a_person_read, pending_call, run, value

pytestmark = pytest.mark.kernel


def test_list_returns_pending_requests_with_the_documented_fields(frontend):
    # Given a pending call
    run(frontend, SETUP)
    card = pending_call(frontend, "save('x', 'x.txt')")
    # When a frontend lists
    reply = frontend.list_pending()
    # Then it sees the request as documented
    assert reply["op"] == "pending"
    (request,) = reply["requests"]
    assert request["id"] == card.state["request_id"]
    assert request["fingerprint"] == card.state["fingerprint"]
    assert request["action"] == "table.write"
    assert request["summary"] == "Overwrite x.txt"
    assert request["preview"] == "text = 'x'\npath = 'x.txt'"
    for key in ("created_at", "expires_at"):
        assert request[key].endswith("Z")
        assert "T" in request[key]
    assert request["cell_id"]


def test_changes_are_pushed_without_asking(frontend):
    # Given a frontend listening on the endpoint
    run(frontend, SETUP)
    frontend.list_pending()
    # When a new request appears
    pending_call(frontend, "save('x', 'x.txt')")
    # Then a changed message with it arrives unasked
    changed = frontend.endpoint_messages("changed", timeout=1)
    assert changed
    assert len(changed[-1]["requests"]) == 1


def test_decision_from_the_sidebar_runs_the_call_once(frontend, state_dir):
    # Given a pending call
    run(frontend, SETUP)
    card = pending_call(frontend, "save('x', 'x.txt')")
    request_id, fp = card.state["request_id"], card.state["fingerprint"]
    # When the sidebar approves it after a person's pause
    let_a_person_read(frontend)
    reply = frontend.decide(request_id, "approve", fp)
    # Then it is approved, the card follows, and the call runs
    assert reply == {
        "op": "decided",
        "id": request_id,
        "ok": True,
        "code": None,
        "message": "",
        "status": "approved",
    }
    assert run(frontend, "save('x', 'x.txt')").status == "ok"
    approved = [e for e in journal_lines(state_dir) if e["event"] == "approved"]
    assert approved[0]["channel"] == "sidebar"


def test_decision_naming_another_fingerprint_is_refused(frontend):
    run(frontend, SETUP)
    card = pending_call(frontend, "save('x', 'x.txt')")
    let_a_person_read(frontend)
    reply = frontend.decide(card.state["request_id"], "approve", "sha256:" + "0" * 64)
    assert reply["ok"] is False
    assert reply["code"] == "APPROVAL_FINGERPRINT_MISMATCH"
    assert reply["status"] == "pending"
    assert run(frontend, "save('x', 'x.txt')").ename == "ApprovalPending"


def test_second_decision_is_refused(frontend):
    run(frontend, SETUP)
    card = pending_call(frontend, "save('x', 'x.txt')")
    let_a_person_read(frontend)
    request_id, fp = card.state["request_id"], card.state["fingerprint"]
    assert frontend.decide(request_id, "reject", fp, reason="no")["ok"] is True
    second = frontend.decide(request_id, "approve", fp)
    assert second["code"] == "APPROVAL_ALREADY_DECIDED"
    assert run(frontend, "save('x', 'x.txt')").ename == "ApprovalRejected"


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        ({"op": "dance"}, "APPROVAL_MALFORMED_MESSAGE"),
        ("not an object", "APPROVAL_MALFORMED_MESSAGE"),
        ({"op": "list", "padding": "x" * 70_000}, "APPROVAL_TOO_LARGE"),
        ({"op": "decide", "id": None, "decision": "approve"}, "APPROVAL_MALFORMED_DECISION"),
        # A deadline without a time zone, or not a time at all, cannot be honoured
        (
            {"op": "decide", "id": "0123456789abcdef", "not_after": "2026-12-01T10:00:00"},
            "APPROVAL_MALFORMED_DECISION",
        ),
        (
            {"op": "decide", "id": "0123456789abcdef", "not_after": 1764583200},
            "APPROVAL_MALFORMED_DECISION",
        ),
    ],
)
def test_malformed_messages_get_a_coded_error(frontend, payload, code):
    run(frontend, SETUP)
    frontend.list_pending()
    frontend.send_endpoint(payload)
    deadline = time.monotonic() + 5
    replies = []
    while time.monotonic() < deadline and not replies:
        replies = [m for m in frontend.endpoint_messages() if m.get("code")]
    assert replies
    assert replies[-1]["code"] == code


def test_magic_reports_pending_and_journal(frontend, state_dir):
    run(frontend, SETUP)
    pending_call(frontend, "save('x', 'x.txt')")
    report = run(frontend, "%load_ext jupyter_approvals\n%approvals").stdout
    assert "Pending approvals in this kernel: 1" in report
    assert "table.write  Overwrite x.txt" in report
    assert f"Journal: {state_dir}" in report
    assert value(frontend, "len(ja.pending())") == "1"
