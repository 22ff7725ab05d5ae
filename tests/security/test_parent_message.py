"""Cell code rewrites the message the kernel is handling (T2): ``kernel.get_parent()`` is a live
dict, and a hook that runs while a frontend message is handled can change what it says before
the approvals read it. Decisions are judged against the record of the message the kernel's
session verified (its signed bytes), taken before any cell code or hook could see it.

Each attack is four or five lines of cell code; each is judged by effect (the request's status,
whether the protected writer ran) and by the journal.
"""

from __future__ import annotations

import pytest

from tests.kernel.helpers import run, value, wait_for_state

from .conftest import WRITER, Target
from .test_kernel_hooks import wait_for_log

pytestmark = pytest.mark.kernel

#: ``rewrite(msg, **fields)``: change a message's decision payload in place (a card's
#: ``custom`` message or an endpoint message), as a hook holding the dict can.
REWRITER = """
import sys
def rewrite(msg, **fields):
    data = msg["content"]["data"]
    payload = data["content"] if data.get("method") == "custom" else data
    payload.update(fields)
"""


def test_a_listing_rewritten_into_a_decision_decides_nothing(target: Target) -> None:
    # Given a pending request, and a hook that, while the endpoint handles a frontend's list
    # message, rewrites that message into an approval and hands it to the endpoint
    fe = target.fe
    target.ask_and_read()
    run(
        fe,
        REWRITER
        + f"""
from jupyter_approvals.kernel import frontend as _f
def _profiler(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "_listing":
        sys.setprofile(None)
        parent = _f.current_parent()
        parent["content"]["data"] = {{"op": "decide", "id": {target.request_id!r},
            "decision": "approve", "fingerprint": {target.fingerprint!r}, "reason": ""}}
        attack_log.append(session.endpoint._decide(parent["content"]["data"]).get("code"))
sys.setprofile(_profiler)
""",
    )
    # When a frontend lists the pending requests
    fe.list_pending()
    # Then the rewritten message decides nothing, and the request still waits
    assert wait_for_log(fe) == ["APPROVAL_NOT_FROM_FRONTEND"]
    assert target.still_waits()
    assert "APPROVAL_NOT_FROM_FRONTEND" in target.refusals()


def test_a_persons_rejection_rewritten_into_an_approval_approves_nothing(target: Target) -> None:
    # Given a pending request, and a hook that turns the card's message into an approval
    # before the card reads it
    fe = target.fe
    card = target.ask_and_read()
    run(
        fe,
        REWRITER
        + """
def _profiler(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "_handle_msg":
        sys.setprofile(None)
        rewrite(frame.f_locals["msg"], decision="approve", reason="")
        attack_log.append("rewritten")
sys.setprofile(_profiler)
""",
    )
    # When the person rejects it
    fe.click(card, "reject", reason="no")
    wait_for_state(fe, card, lambda s: s["state"] != "pending" or s.get("notice"))
    # Then no approval came of it: nothing ran, and the journal has no approval
    assert wait_for_log(fe) == ["rewritten"]
    assert target.status() in ("pending", "rejected")
    assert target.again().ename in ("ApprovalPending", "ApprovalRejected")
    assert not target.ran()
    assert "approved" not in target.events()


def test_a_sidebar_approval_retargeted_at_another_row_approves_neither(target: Target) -> None:
    # Given two pending requests, and a hook that points the sidebar's approval of the first
    # at the second (its id and fingerprint) before the endpoint reads it
    fe = target.fe
    run(fe, WRITER.format(name="w_other"))
    assert run(fe, "w_other('gone', 'precious.csv')").ename == "ApprovalPending"
    other = fe.cards()[-1].state
    target.ask_and_read()
    run(
        fe,
        REWRITER
        + f"""
def _profiler(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "_handle":
        sys.setprofile(None)
        rewrite(frame.f_locals["msg"], id={other["request_id"]!r},
                fingerprint={other["fingerprint"]!r})
        attack_log.append("retargeted")
sys.setprofile(_profiler)
""",
    )
    # When the person approves the first request in the sidebar
    answer = fe.decide(target.request_id, "approve", target.fingerprint)
    # Then neither is approved: the retargeted decision is refused, nothing ran
    assert wait_for_log(fe) == ["retargeted"]
    assert answer["ok"] is False
    assert answer["code"] == "APPROVAL_NOT_FROM_FRONTEND"
    other_status = value(fe, f"session.store.get({other['request_id']!r}).status.value")
    assert other_status == "'pending'"
    assert run(fe, "w_other('gone', 'precious.csv')").ename == "ApprovalPending"
    assert not (target.project / "precious.csv").exists()


def test_a_parent_message_forged_with_set_parent_decides_nothing(target: Target) -> None:
    # Given a pending request, and a cell that makes the kernel's parent a comm message it
    # built for the card, carrying an approval, then decides
    fe = target.fe
    target.ask_and_read()
    run(
        fe,
        f"""
rid, fp = {target.request_id!r}, {target.fingerprint!r}
card_comm = session.cards[rid].comm.comm_id
decide = {{"op": "decide", "id": rid, "decision": "approve", "fingerprint": fp, "reason": ""}}
forged = {{
    "header": {{"msg_id": "forged-1", "msg_type": "comm_msg", "session": "x", "username": "x"}},
    "parent_header": {{}}, "metadata": {{}},
    "content": {{"comm_id": card_comm, "data": {{"method": "custom", "content": decide}}}},
}}
kernel = get_ipython().kernel
own = kernel.get_parent()
kernel.set_parent([], forged)
try:
    session.decisions.decide(rid, "approve", fp, "")
    attack_log.append("decided")
except Exception as error:
    attack_log.append(type(error).__name__)
finally:
    kernel.set_parent([], own)  # the cell's own output goes back to its own request
""",
    )
    # Then no signed message carries it: refused, and the request still waits
    assert wait_for_log(fe) == ["ApprovalNotFromFrontend"]
    assert target.still_waits()
    assert "APPROVAL_NOT_FROM_FRONTEND" in target.refusals()
