"""Refusals at redemption are journaled, and code that provokes refusals at will never
silences the ones that matter (the protected call's own, a frontend's)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import jupyter_approvals as ja
from jupyter_approvals.core import errors
from jupyter_approvals.core.policy import ManualClock
from jupyter_approvals.kernel.journaling import REFUSALS_JOURNALED
from jupyter_approvals.kernel.session import KernelSession
from tests.conftest import journal_lines
from tests.kernel.helpers import (
    SETUP,
    let_a_person_read,
    pending_call,
    run,
    wait_for_state,
)


@pytest.fixture
def session(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("JUPYTER_APPROVALS_STATE_DIR", str(tmp_path / "state"))
    project = tmp_path / "project"
    project.mkdir()
    clock = ManualClock()
    installed = KernelSession.install(KernelSession(None, clock=clock, cwd=project))
    # No frontend exists in this process: decisions are applied directly, guard off.
    installed.store.decision_guard = None
    installed.clock = clock
    yield installed
    installed.close()


@pytest.fixture
def noop(session):
    @ja.protected("x.noop")
    def noop(n: int) -> int:
        return n

    return noop


def approve(session, call) -> str:
    """Ask, let a person's reading time pass, approve; the request id."""
    with pytest.raises(ja.ApprovalPending) as pending:
        call()
    session.clock.advance(2)
    details = pending.value.details
    session.store.decide(details["request_id"], "approve", details["fingerprint"])
    return details["request_id"]


def refusals(session) -> list[dict]:
    lines = [json.loads(line) for line in session.journal.path.read_text().splitlines()]
    return [line for line in lines if line["event"] == "refused"]


def test_a_spent_approval_offered_again_is_refused_on_record(session, noop):
    # Given an approval that ran once
    request_id = approve(session, lambda: noop(1))
    approval = session.store.approval(request_id)
    assert noop(1) == 1
    # When code offers it to the store again
    with pytest.raises(errors.ApprovalAlreadyUsed):
        session.store.redeem(approval, "x.noop", approval.fingerprint, approval.owner)
    # Then the refusal has its line, about that request, from code
    [line] = refusals(session)
    assert line["code"] == "APPROVAL_ALREADY_USED"
    assert line["request_id"] == request_id
    assert line["source"] == "code"
    assert line["attempted_action"] == "x.noop"


def test_look_alike_approvals_are_refused_on_record_without_trusting_their_request_id(
    session, noop
):
    # Given a real approval, and look-alikes of it: a copy with the same fields and a dict
    request_id = approve(session, lambda: noop(2))
    approval = session.store.approval(request_id)
    copy = dataclasses.replace(approval)
    shaped = {"request_id": request_id, "action": "x.noop", "fingerprint": approval.fingerprint}
    # When each is offered
    for fake in (copy, shaped):
        with pytest.raises(errors.ApprovalNotIssued):
            session.store.redeem(fake, "x.noop", approval.fingerprint, approval.owner)
    # Then each refusal is journaled with the offered type, and none names the real request
    lines = refusals(session)
    assert [line["code"] for line in lines] == ["APPROVAL_NOT_ISSUED"] * 2
    assert [line["offered_type"] for line in lines] == [
        "jupyter_approvals.core.model.Approval",
        "builtins.dict",
    ]
    assert all("request_id" not in line and line["source"] == "code" for line in lines)
    # And the real approval still runs once
    assert noop(2) == 2


def test_a_call_on_an_approval_that_lapsed_is_refused_on_record(session, noop):
    # Given an approval not used within its lifetime
    request_id = approve(session, lambda: noop(3))
    session.clock.advance(601)
    # When the protected call comes to run
    with pytest.raises(errors.ApprovalExpired):
        noop(3)
    # Then the journal has the expiry and the call's refusal, both about that request
    lines = [json.loads(line) for line in session.journal.path.read_text().splitlines()]
    events = [(line["event"], line.get("code")) for line in lines if line.get("request_id")]
    assert events[-2:] == [("expired", "APPROVAL_EXPIRED"), ("refused", "APPROVAL_EXPIRED")]
    assert lines[-1]["request_id"] == request_id
    assert lines[-1]["attempted_action"] == "x.noop"
    assert lines[-1]["source"] == "code"


def test_redeem_refusals_are_counted_past_their_budget_and_never_silence_the_call(session, noop):
    # Given an approval that lapsed, which code then offers 30 times
    request_id = approve(session, lambda: noop(4))
    approval = session.store.approval(request_id)
    session.clock.advance(601)
    for _ in range(30):
        with pytest.raises(errors.ApprovalExpired):
            session.store.redeem(approval, "x.noop", approval.fingerprint, approval.owner)
    # When the protected call itself comes to run
    with pytest.raises(errors.ApprovalExpired):
        noop(4)
    # Then the code's refusals stop at the budget with a counted line, and the call's is written
    lines = refusals(session)
    counted = [line for line in lines if line.get("further_refusals_not_journaled")]
    assert len(lines) == REFUSALS_JOURNALED + 1
    assert counted == [lines[REFUSALS_JOURNALED - 1]]
    assert lines[-1]["attempted_action"] == "x.noop"
    assert lines[-1]["fingerprint"] == approval.fingerprint


TRAP = """
import ipywidgets
from IPython.display import display
from jupyter_approvals.kernel.session import KernelSession
session = KernelSession.current()
card = list(session.cards.values())[-1]
trap = ipywidgets.Button(description="Show more")

def spend(_button):
    # Runs while the person's click on the trap is being handled.
    for _ in range(30):
        try:
            session.decisions.decide(card.request_id, "approve", card.fingerprint)
        except Exception:
            pass
        try:
            session.store.redeem({"request_id": card.request_id}, "table.write", card.fingerprint)
        except Exception:
            pass

trap.on_click(spend)
display(trap)
"""


@pytest.mark.kernel
def test_a_trap_widgets_refusals_never_use_up_the_lines_of_a_frontend(frontend, state_dir):
    # Given a pending request, and a button whose callback provokes 60 refusals of it
    run(frontend, SETUP)
    card = pending_call(frontend, "save('x', 'precious.csv')")
    run(frontend, TRAP)
    trap = [w for w in frontend.widgets.values() if w.state.get("description") == "Show more"]
    # When a person clicks the trap, and then presses Approve on a card whose text was rewritten
    frontend.send_widget_message(trap[-1].model_id, {"event": "click"})
    frontend.pump(1.0)
    run(frontend, "card.set_trait('summary', 'Write scratch.txt')")
    frontend.pump(0.5)
    let_a_person_read(frontend)
    frontend.click(card, "approve")
    wait_for_state(frontend, card, lambda s: s.get("notice"))
    # Then the callback's refusals count as code's, and the person's is the frontend's line
    refused = [e for e in journal_lines(state_dir) if e["event"] == "refused"]
    from_frontend = [e for e in refused if e["source"] == "frontend"]
    assert [e["code"] for e in from_frontend] == ["APPROVAL_FINGERPRINT_MISMATCH"]
    from_code = [e for e in refused if e["source"] == "code"]
    assert {e["code"] for e in from_code} == {"APPROVAL_NOT_FROM_FRONTEND", "APPROVAL_NOT_ISSUED"}
    assert len(from_code) == 2 * REFUSALS_JOURNALED
    assert run(frontend, "save('x', 'precious.csv')").ename == "ApprovalPending"
