"""Replays (T2): a decision message sent again, an old decision or approval after a restart,
an approval used twice, late, or copied, and things that look like approvals but are not."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from jupyter_approvals.core.protocol import SHOWN_FIELDS
from jupyter_approvals.testing import KernelFrontend, Widget
from tests.kernel.helpers import HUMAN_PAUSE_S, run, wait_for_state

from .conftest import PRELUDE, WRITER, Target, approve, journal_entries

pytestmark = pytest.mark.kernel


def card_message(fe: KernelFrontend, card: Widget, decision: str = "approve") -> dict:
    """The signed comm_msg the card view sends for ``decision`` (not sent yet)."""
    state = fe.card(card.model_id).state
    content = {
        "op": "decide",
        "id": state["request_id"],
        "decision": decision,
        "fingerprint": state["fingerprint"],
        "reason": "",
        "shown": {k: state.get(k) for k in SHOWN_FIELDS},
    }
    return fe.client.session.msg(
        "comm_msg", {"comm_id": card.model_id, "data": {"method": "custom", "content": content}}
    )


def test_the_approving_message_sent_again_decides_nothing(target: Target) -> None:
    # Given an approval made by one card message, and the run it allowed
    fe = target.fe
    card = target.ask_and_read()
    message = card_message(fe, card)
    fe.client.shell_channel.send(message)
    wait_for_state(fe, card, lambda s: s["state"] == "approved")
    assert target.again().status == "ok"
    target.marker.unlink()
    # When the very same message is sent again, byte for byte, and then re-signed with the
    # same message id (the kernel's session drops exact duplicates)
    fe.client.shell_channel.send(message)
    resent = {**message, "metadata": {"replayed": True}}
    fe.client.shell_channel.send(resent)
    fe.pump(0.5)
    # Then neither decides: the guard saw that message id already; nothing runs again
    assert target.status() == "executed"
    assert target.still_waits()
    assert target.refusals() == ["APPROVAL_NOT_FROM_FRONTEND"]


def test_a_new_message_with_an_old_decision_is_refused(target: Target) -> None:
    # Given a request approved and run once
    fe = target.fe
    card = target.ask_and_read()
    approve(fe, card, wait=False)
    assert target.again().status == "ok"
    target.marker.unlink()
    # When the sidebar sends the same decision again in a new message
    reply = fe.decide(target.request_id, "approve", target.fingerprint)
    # Then it is refused as decided, journaled, and the call needs a new approval
    assert reply["code"] == "APPROVAL_ALREADY_DECIDED"
    assert target.still_waits()
    assert "APPROVAL_ALREADY_DECIDED" in target.refusals()


def test_an_approval_is_used_once(target: Target) -> None:
    fe = target.fe
    approve(fe, target.ask_and_read(), wait=False)
    assert target.again().status == "ok"
    target.marker.unlink()
    # When the same call is made again on the same approval
    # Then it asks again and runs nothing
    assert target.still_waits()
    assert target.events().count("executed") == 1


def test_a_copy_of_a_live_approval_is_not_one(target: Target) -> None:
    # Given an unused approval
    fe = target.fe
    approve(fe, target.ask_and_read(), wait=False)
    # When cell code redeems a copy of it (same fields, another object)
    result = run(
        fe,
        f"""
import copy
_real = session.store.approval({target.request_id!r})
session.store.redeem(copy.copy(_real), _real.action, _real.fingerprint, _real.owner)
""",
    )
    # Then it is not issued, and nothing ran; the real one still runs once
    assert result.ename == "ApprovalNotIssued"
    assert not target.ran()
    assert target.again().status == "ok"


def test_journal_lines_files_and_variables_never_approve(target: Target) -> None:
    # Given a pending request
    fe = target.fe
    target.ask_and_read()
    # When cell code writes an "approved" line for it into the journal, an approvals file in
    # the project, and an environment variable naming its fingerprint
    line = {
        "event": "approved",
        "request_id": target.request_id,
        "fingerprint": target.fingerprint,
        "channel": "card",
        "latency_ms": 5000,
    }
    run(
        fe,
        f"""
import json, os
with open(session.journal.path, "a") as _f:
    _f.write(json.dumps({line!r}) + "\\n")
Path("approvals.json").write_text(json.dumps({{"approved": [{target.fingerprint!r}]}}))
os.environ["JUPYTER_APPROVALS_APPROVED"] = {target.fingerprint!r}
""",
    )
    # Then the call still waits for a person
    assert target.still_waits()
    run(fe, "del os.environ['JUPYTER_APPROVALS_APPROVED']")


def test_an_old_decision_after_a_restart_decides_nothing(
    fresh_kernel: tuple[KernelFrontend, Path, Path],
) -> None:
    # Given a decision a frontend sent for a request, in a kernel that was then restarted
    fe, project, state = fresh_kernel
    run(fe, PRELUDE + WRITER.format(name="w_restart"))
    assert run(fe, "w_restart('x', 'out.txt')").ename == "ApprovalPending"
    old = fe.cards()[-1].state
    fe.restart()
    # When the identical call asks again, and the old decision is sent once more
    run(fe, PRELUDE + WRITER.format(name="w_restart"))
    assert run(fe, "w_restart('x', 'out.txt')").ename == "ApprovalPending"
    time.sleep(HUMAN_PAUSE_S)
    reply = fe.decide(old["request_id"], "approve", old["fingerprint"])
    # Then the old id is unknown (the new request has another), journaled; nothing runs
    assert reply["code"] == "APPROVAL_UNKNOWN_REQUEST"
    assert run(fe, "w_restart('x', 'out.txt')").ename == "ApprovalPending"
    assert not (project / "out.txt").exists()
    assert any(
        e["event"] == "refused"
        and e.get("request_id") == old["request_id"]
        and e.get("code") == "APPROVAL_UNKNOWN_REQUEST"
        for e in journal_entries(state)
    )


def test_an_approval_saved_before_a_restart_is_not_one_after(
    fresh_kernel: tuple[KernelFrontend, Path, Path],
) -> None:
    # Given an approval pickled to a file by cell code, and a restart
    fe, project, _ = fresh_kernel
    run(fe, PRELUDE + WRITER.format(name="w_pickle"))
    assert run(fe, "w_pickle('x', 'out.txt')").ename == "ApprovalPending"
    card = fe.cards()[-1]
    approve(fe, card)
    run(
        fe,
        f"""
import pickle
_a = session.store.approval({card.state["request_id"]!r})
Path("approval.pickle").write_bytes(pickle.dumps(_a))
""",
    )
    fe.restart()
    run(fe, PRELUDE + WRITER.format(name="w_pickle"))
    assert run(fe, "w_pickle('x', 'out.txt')").ename == "ApprovalPending"
    # When the new kernel's store is offered the saved approval
    result = run(
        fe,
        """
import pickle
_old = pickle.loads(Path("approval.pickle").read_bytes())
session.store.redeem(_old, _old.action, _old.fingerprint, w_pickle._owner)
""",
    )
    # Then it is not issued by this kernel, and nothing ran
    assert result.ename == "ApprovalNotIssued"
    assert not (project / "out.txt").exists()


@pytest.fixture
def short_lived(
    fresh_kernel: tuple[KernelFrontend, Path, Path],
) -> tuple[KernelFrontend, Path, Path]:
    """A kernel whose requests time out after 2 s and approvals expire after 1 s (tightened)."""
    fe, _, _ = fresh_kernel
    run(
        fe,
        "%config ApprovalsConfig.request_timeout = 2.0\n"
        "%config ApprovalsConfig.approval_ttl = 1.0\n" + PRELUDE + WRITER.format(name="w_late"),
    )
    return fresh_kernel


@pytest.mark.realtime  # its click must come within the 2 s timeout
def test_an_approval_used_after_it_expired_runs_nothing(
    short_lived: tuple[KernelFrontend, Path, Path],
) -> None:
    fe, project, state = short_lived
    assert run(fe, "w_late('x', 'out.txt')").ename == "ApprovalPending"
    card = fe.cards()[-1]
    time.sleep(HUMAN_PAUSE_S)
    fe.click(card, "approve")
    # (the card may already show it expired when a loaded machine reports late)
    wait_for_state(fe, card, lambda s: s["state"] in ("approved", "expired"))
    assert "approved" in [e["event"] for e in journal_entries(state)]
    # When the approved call comes after the approval's time
    time.sleep(1.3)
    result = run(fe, "w_late('x', 'out.txt')")
    # Then it is expired, journaled, and nothing ran
    assert result.ename == "ApprovalExpired"
    assert not (project / "out.txt").exists()
    assert "expired" in [e["event"] for e in journal_entries(state)]


def test_a_decision_after_the_request_timed_out_is_refused(
    short_lived: tuple[KernelFrontend, Path, Path],
) -> None:
    fe, project, state = short_lived
    assert run(fe, "w_late('x', 'out.txt')").ename == "ApprovalPending"
    card = fe.cards()[-1]
    # When the answer comes after the request's time
    time.sleep(2.5)
    reply = fe.decide(card.state["request_id"], "approve", card.state["fingerprint"])
    # Then it is refused, the request stays timed out, and nothing runs
    assert reply["code"] == "APPROVAL_TIMED_OUT"
    assert run(fe, "w_late('x', 'out.txt')").ename == "ApprovalTimedOut"
    assert not (project / "out.txt").exists()
    events = [e for e in journal_entries(state) if e.get("request_id") == card.state["request_id"]]
    assert "timed_out" in [e["event"] for e in events]
    assert "APPROVAL_TIMED_OUT" in [e.get("code") for e in events if e["event"] == "refused"]
