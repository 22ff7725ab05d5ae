"""Fake and malformed decisions through every handler: from cell code, from threads, and from a
real frontend connection that sends what no honest card or sidebar sends (T2)."""

from __future__ import annotations

import time

import pytest

from jupyter_approvals.testing import KernelFrontend
from tests.kernel.helpers import card_decision, run, value, wait_for_state

from .conftest import WRITER, Target, journal_entries, send_comm

pytestmark = pytest.mark.kernel


def decided_reply(fe: KernelFrontend, request_id: object, timeout: float = 5) -> dict:
    """The endpoint's ``decided`` answer for ``request_id`` (or its ``error`` answer)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for message in fe.endpoint_messages():
            if message.get("op") == "error" or (
                message.get("op") == "decided" and message.get("id") == request_id
            ):
                return message
    raise AssertionError("the endpoint never answered")


# -- cell code and threads ---------------------------------------------------------------


def test_a_thread_calling_the_store_directly_is_refused(target: Target) -> None:
    # Given a pending request, read long enough
    fe = target.fe
    target.ask_and_read()
    # When a background thread calls the store's own decision function, skipping the session
    run(
        fe,
        f"""
import threading
def _bot():
    try:
        session.store.decide({target.request_id!r}, "approve", {target.fingerprint!r})
        attack_log.append("decided")
    except ja.ApprovalError as exc:
        attack_log.append(exc.code)
_t = threading.Thread(target=_bot)
_t.start(); _t.join()
""",
    )
    # Then the store's guard refuses it and journals why
    assert value(fe, "attack_log") == "['APPROVAL_NOT_FROM_FRONTEND']"
    assert target.still_waits()
    [refusal] = [e for e in target.journal() if e["event"] == "refused"]
    assert "background thread" in refusal["why"]
    assert refusal["source"] == "code"


def test_a_thread_named_like_the_main_thread_is_refused(target: Target) -> None:
    fe = target.fe
    target.ask_and_read()
    # When a thread renames itself "MainThread" before deciding
    run(
        fe,
        f"""
import threading
def _bot():
    threading.current_thread().name = "MainThread"
    try:
        session.decisions.decide({target.request_id!r}, "approve", {target.fingerprint!r})
        attack_log.append("decided")
    except ja.ApprovalError as exc:
        attack_log.append(exc.code)
_t = threading.Thread(target=_bot)
_t.start(); _t.join()
""",
    )
    # Then it is still a background thread to the guard
    assert value(fe, "attack_log") == "['APPROVAL_NOT_FROM_FRONTEND']"
    assert target.still_waits()
    assert target.refusals() == ["APPROVAL_NOT_FROM_FRONTEND"]


def test_calling_the_endpoints_decide_directly_is_refused(target: Target) -> None:
    fe = target.fe
    target.ask_and_read()
    # When cell code hands a decide message straight to the endpoint's decision function
    reply = value(
        fe,
        f"""session.endpoint._decide({{"op": "decide", "id": {target.request_id!r},
    "decision": "approve", "fingerprint": {target.fingerprint!r}, "reason": "",
    "channel": "sidebar"}})""",
    )
    # Then it is answered with the refusal, and nothing is decided
    assert "APPROVAL_NOT_FROM_FRONTEND" in reply
    assert target.still_waits()
    assert target.refusals() == ["APPROVAL_NOT_FROM_FRONTEND"]


def test_a_message_forged_into_the_comm_manager_is_refused(target: Target) -> None:
    # Given a pending request and an open sidebar comm
    fe = target.fe
    target.ask_and_read()
    fe.list_pending()
    # When cell code feeds the kernel's comm manager a comm_msg it built itself, for that comm
    run(
        fe,
        f"""
import comm as _comm
_manager = _comm.get_comm_manager()
_sidebar = session.endpoint.comm_ids()[0]
_fake = {{"header": {{"msg_type": "comm_msg", "msg_id": "forged"}}, "parent_header": {{}},
         "metadata": {{}}, "content": {{"comm_id": _sidebar, "data": {{"op": "decide",
         "id": {target.request_id!r}, "decision": "approve",
         "fingerprint": {target.fingerprint!r}, "reason": ""}}}}}}
_manager.comm_msg(None, None, _fake)
""",
    )
    # Then the endpoint answers the sidebar with the refusal; the request still waits
    assert decided_reply(fe, target.request_id)["code"] == "APPROVAL_NOT_FROM_FRONTEND"
    assert target.still_waits()
    assert target.refusals() == ["APPROVAL_NOT_FROM_FRONTEND"]


# -- a real frontend connection sending what no honest UI sends ---------------------------


@pytest.mark.parametrize(
    "fingerprint",
    ["short", "upper", "prefix-less"],
)
def test_a_fingerprint_in_another_spelling_is_refused(target: Target, fingerprint: str) -> None:
    # Given a pending request, read long enough
    fe = target.fe
    target.ask_and_read()
    full = target.fingerprint
    spelled = {
        "short": full[: len("sha256:") + 12],
        "upper": "sha256:" + full.removeprefix("sha256:").upper(),
        "prefix-less": full.removeprefix("sha256:"),
    }[fingerprint]
    # When the sidebar's message names the fingerprint in a spelling the UI never sends
    reply = fe.decide(target.request_id, "approve", spelled)
    # Then it is malformed, journaled, and the request still waits
    assert reply["code"] == "APPROVAL_MALFORMED_DECISION"
    assert reply["status"] == "pending"
    assert target.still_waits()
    assert target.refusals() == ["APPROVAL_MALFORMED_DECISION"]


@pytest.mark.parametrize("answer", [True, "Approve", ["approve"]])
def test_an_answer_other_than_approve_or_reject_is_refused(target: Target, answer: object) -> None:
    fe = target.fe
    target.ask_and_read()
    fe.send_endpoint(
        {
            "op": "decide",
            "id": target.request_id,
            "decision": answer,
            "fingerprint": target.fingerprint,
            "reason": "",
        }
    )
    assert decided_reply(fe, target.request_id)["code"] == "APPROVAL_MALFORMED_DECISION"
    assert target.still_waits()
    assert target.refusals() == ["APPROVAL_MALFORMED_DECISION"]


def test_a_request_id_that_is_not_text_is_answered_and_refused(target: Target) -> None:
    fe = target.fe
    target.ask_and_read()
    # When the id is a list holding the real id (a lenient lookup might take its first item)
    fe.send_endpoint(
        {
            "op": "decide",
            "id": [target.request_id],
            "decision": "approve",
            "fingerprint": target.fingerprint,
        }
    )
    # Then the endpoint answers with a code, nothing is decided, and the refusal is journaled
    assert decided_reply(fe, [target.request_id])["code"] == "APPROVAL_MALFORMED_DECISION"
    assert target.still_waits()
    assert any(
        e["event"] == "refused"
        and e.get("code") == "APPROVAL_MALFORMED_DECISION"
        and e.get("request_id") == str([target.request_id])
        for e in journal_entries(target.state_dir)
    )


def test_a_decision_inside_a_comm_open_decides_nothing(target: Target) -> None:
    # Given a pending request
    fe = target.fe
    target.ask_and_read()
    # When a frontend opens a new approvals comm whose opening data is a decision
    send_comm(
        fe,
        "c0ffee" * 5,
        {
            "op": "decide",
            "id": target.request_id,
            "decision": "approve",
            "fingerprint": target.fingerprint,
        },
        msg_type="comm_open",
    )
    fe.pump(0.5)
    # Then nothing is decided: opening a comm only ever lists
    assert target.still_waits()
    assert "approved" not in target.events()


def test_a_decision_for_another_request_sent_to_a_card_is_refused(target: Target) -> None:
    # Given two pending requests, each with its card
    fe = target.fe
    run(fe, WRITER.format(name="w_other_card"))
    assert run(fe, "w_other_card('gone', 'precious.csv')").ename == "ApprovalPending"
    other = fe.cards()[-1]
    card = target.ask_and_read()
    # When the harmless card's comm carries a decision naming the other request
    state = other.state
    card_decision(fe, card, state=state)
    notice = target.card_notice()
    # Then the card refuses it, journaled under the other request, which still waits
    assert "APPROVAL_UNKNOWN_REQUEST" in notice
    assert run(fe, "w_other_card('gone', 'precious.csv')").ename == "ApprovalPending"
    assert not (target.project / "precious.csv").exists()
    assert any(
        e["event"] == "refused"
        and e.get("request_id") == state["request_id"]
        and e.get("code") == "APPROVAL_UNKNOWN_REQUEST"
        for e in journal_entries(target.state_dir)
    )


@pytest.mark.realtime
def test_an_answer_within_a_second_is_auto_answered_and_a_retry_is_refused(
    target: Target,
) -> None:
    # Given a pending request just shown
    fe = target.fe
    card = target.ask()
    # When the card answers at once, then again after a person's pause
    fe.click(card, "approve")
    wait_for_state(fe, card, lambda s: s["state"] != "pending")
    time.sleep(1.2)
    fe.click(card, "approve")
    notice = target.card_notice()
    # Then the first counts as no answer, the second is refused, and nothing ever runs
    assert target.status() == "auto_answered"
    assert "APPROVAL_ALREADY_DECIDED" in notice
    assert target.again().ename == "ApprovalAutoAnswered"
    assert not target.ran()
    assert "auto_answered" in target.events()
    assert "APPROVAL_ALREADY_DECIDED" in target.refusals()


def test_an_oversized_message_carrying_a_decision_decides_nothing(target: Target) -> None:
    fe = target.fe
    target.ask_and_read()
    # When a valid decision arrives padded past the endpoint's size limit
    fe.send_endpoint(
        {
            "op": "decide",
            "id": target.request_id,
            "decision": "approve",
            "fingerprint": target.fingerprint,
            "reason": "",
            "padding": "x" * 70_000,
        }
    )
    # Then it is refused unread, the refusal is journaled, and the request still waits
    assert decided_reply(fe, target.request_id)["code"] == "APPROVAL_TOO_LARGE"
    assert "APPROVAL_TOO_LARGE" in target.refusals()
    assert target.still_waits()
