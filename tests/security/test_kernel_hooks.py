"""Code on the kernel's main thread that runs while a frontend message is handled (T2).

A profile or trace hook, a signal handler, an asyncio task, a callback scheduled with an empty
context, or a second handler on the card's own comm: each runs on the main thread at a moment
when the message being handled is a real frontend ``comm_msg``. None of them may make a decision
that message was not admitted for.
"""

from __future__ import annotations

import ast
import time

import pytest

from jupyter_approvals.testing import KernelFrontend
from tests.kernel.helpers import card_decision, run, value, wait_for_state

from .conftest import WRITER, Target, send_comm

pytestmark = pytest.mark.kernel

#: ``decide_from_here(request_id, fingerprint)``: make a decision with what the message being
#: handled carries (or the given request and fingerprint), and log how it went.
DECIDER = """
from jupyter_approvals.kernel import frontend as _f
from jupyter_approvals.core.decision import decision_payload as _payload
def decide_from_here(request_id=None, fingerprint=None, decision=None):
    data = (_f.current_parent().get("content") or {}).get("data")
    payload = _payload(data) or {}
    try:
        session.decisions.decide(
            request_id or payload.get("id"), decision or payload.get("decision", "approve"),
            fingerprint or payload.get("fingerprint"), payload.get("reason", ""))
        attack_log.append("decided")
    except Exception as exc:
        attack_log.append(type(exc).__name__)
"""


def attack_log(fe: KernelFrontend) -> list[str]:
    return list(ast.literal_eval(value(fe, "attack_log")))


def wait_for_log(fe: KernelFrontend, timeout: float = 5) -> list[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        log = attack_log(fe)
        if log:
            return log
        fe.pump(0.1)
    return []


def test_a_trace_hook_cannot_apply_a_refused_card_decision(target: Target) -> None:
    # Given a pending request, and a global trace hook that decides when the card's check runs
    fe = target.fe
    card = target.ask_and_read()
    run(
        fe,
        DECIDER
        + """
import sys
def _tracer(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "_check_shown":
        sys.settrace(None)
        decide_from_here()
    return None
sys.settrace(_tracer)
""",
    )
    # When a card message arrives whose shown summary is not the request's
    card_decision(fe, card, summary="Write scratch.txt")
    notice = target.card_notice()
    # Then the card refuses it, and so is the hook's decision made while it was handled
    assert "APPROVAL_FINGERPRINT_MISMATCH" in notice
    assert wait_for_log(fe) == ["ApprovalNotFromFrontend"]
    assert target.still_waits()
    assert {"APPROVAL_FINGERPRINT_MISMATCH", "APPROVAL_NOT_FROM_FRONTEND"} <= set(target.refusals())


def test_a_profile_hook_cannot_decide_during_a_sidebar_listing(target: Target) -> None:
    # Given a pending request, and a profile hook that decides it while the endpoint lists
    fe = target.fe
    target.ask_and_read()
    run(
        fe,
        DECIDER
        + f"""
import sys
def _profiler(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "_listing":
        sys.setprofile(None)
        decide_from_here({target.request_id!r}, {target.fingerprint!r})
sys.setprofile(_profiler)
""",
    )
    # When a frontend asks the endpoint for its pending list (a real frontend comm_msg)
    fe.list_pending()
    # Then the hook's decision is refused: that message carries no decision
    assert wait_for_log(fe) == ["ApprovalNotFromFrontend"]
    assert target.still_waits()
    [refusal] = [e for e in target.journal() if e["event"] == "refused"]
    assert refusal["code"] == "APPROVAL_NOT_FROM_FRONTEND"
    assert "does not carry this decision" in refusal["why"]


def test_a_hook_riding_a_genuine_approval_cannot_approve_another_request(
    target: Target,
) -> None:
    # Given two pending requests, and a hook that, while the person's approval of the first is
    # handled, approves the second with its own fingerprint
    fe = target.fe
    run(fe, WRITER.format(name="w_hidden"))
    hidden = run(fe, "w_hidden('gone', 'precious.csv')")
    assert hidden.ename == "ApprovalPending"
    hidden_card = fe.cards()[-1]
    card = target.ask_and_read()
    run(
        fe,
        DECIDER
        + f"""
import sys
def _profiler(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "_check_shown":
        sys.setprofile(None)
        decide_from_here({hidden_card.state["request_id"]!r}, {hidden_card.state["fingerprint"]!r})
sys.setprofile(_profiler)
""",
    )
    # When the person approves the first request in its card
    fe.click(card, "approve")
    wait_for_state(fe, card, lambda s: s["state"] != "pending")
    # Then the first is approved, the hidden one is refused and still waits
    assert wait_for_log(fe) == ["ApprovalNotFromFrontend"]
    assert target.status() == "approved"
    hidden_state = value(fe, f"session.store.get({hidden_card.state['request_id']!r}).status.value")
    assert hidden_state == "'pending'"
    assert run(fe, "w_hidden('gone', 'precious.csv')").ename == "ApprovalPending"
    assert not (target.project / "precious.csv").exists()


def test_a_hook_cannot_turn_a_persons_rejection_into_an_approval(target: Target) -> None:
    # Given a pending request, and a hook that answers "approve" while a rejection is handled
    fe = target.fe
    card = target.ask_and_read()
    run(
        fe,
        DECIDER
        + """
import sys
def _profiler(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "_check_shown":
        sys.setprofile(None)
        decide_from_here(decision="approve")
sys.setprofile(_profiler)
""",
    )
    # When the person rejects it
    fe.click(card, "reject", reason="no")
    wait_for_state(fe, card, lambda s: s["state"] != "pending")
    # Then the hook's approval is refused, the request ends rejected, and nothing runs
    assert wait_for_log(fe) == ["ApprovalNotFromFrontend"]
    assert target.status() == "rejected"
    assert target.again().ename == "ApprovalRejected"
    assert not target.ran()
    assert target.events()[-2:] == ["refused", "rejected"]


def test_a_signal_handler_firing_inside_a_refused_message_cannot_decide(target: Target) -> None:
    # Given a pending request; a signal handler that decides with what the message being
    # handled carries; and a hook that makes the card's check last long enough for the
    # signal to arrive in the middle of it
    fe = target.fe
    card = target.ask_and_read()
    run(
        fe,
        DECIDER
        + """
import signal, sys, time
signal.signal(signal.SIGALRM, lambda signum, frame: decide_from_here())
def _profiler(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "_check_shown":
        sys.setprofile(None)
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        time.sleep(0.3)
sys.setprofile(_profiler)
""",
    )
    # When a card message with rewritten text arrives
    card_decision(fe, card, preview="nothing to see")
    target.card_notice()
    # Then the handler ran inside it and was refused; nothing is decided
    assert wait_for_log(fe) == ["ApprovalNotFromFrontend"]
    assert target.still_waits()
    assert "APPROVAL_NOT_FROM_FRONTEND" in target.refusals()


def test_a_signal_handler_after_a_refused_message_cannot_decide(target: Target) -> None:
    # Given a pending request and a timer signal, due in a second, whose handler decides with
    # whatever message the kernel handled last
    fe = target.fe
    card = target.ask_and_read()
    run(
        fe,
        DECIDER
        + f"""
import signal
signal.signal(signal.SIGALRM, lambda signum, frame: decide_from_here(
    {target.request_id!r}, {target.fingerprint!r}, "approve"))
signal.setitimer(signal.ITIMER_REAL, 1.0)
""",
    )
    # When a refused card message is the kernel's last message and the kernel sits idle
    card_decision(fe, card, summary="Write scratch.txt")
    target.card_notice()
    # Then the handler's attempt is refused
    assert wait_for_log(fe) == ["ApprovalNotFromFrontend"]
    assert target.still_waits()


def test_an_asyncio_task_cannot_decide_while_frontends_talk(target: Target) -> None:
    # Given a pending request and an asyncio task on the kernel's loop that keeps deciding it
    fe = target.fe
    target.ask_and_read()
    run(
        fe,
        DECIDER
        + f"""
import asyncio
_running = [True]
async def _bot():
    while _running[0]:
        decide_from_here({target.request_id!r}, {target.fingerprint!r}, "approve")
        await asyncio.sleep(0.01)
_task = asyncio.ensure_future(_bot())
stop_attackers.append(lambda: _running.__setitem__(0, False))
""",
    )
    # When frontends send real comm messages meanwhile
    for _ in range(5):
        fe.list_pending()
        time.sleep(0.05)
    run(fe, "_running[0] = False")
    # Then no attempt decided anything
    log = attack_log(fe)
    assert log
    assert set(log) == {"ApprovalNotFromFrontend"}
    assert target.still_waits()


def test_a_callback_with_an_empty_context_cannot_decide(target: Target) -> None:
    # Given a pending request, and a loop callback run in an empty context (where the kernel
    # falls back on the last message it handled), rescheduling itself
    fe = target.fe
    card = target.ask_and_read()
    run(
        fe,
        DECIDER
        + """
import asyncio, contextvars
_loop = asyncio.get_event_loop()
_running = [True]
def _tick():
    if _running[0]:
        decide_from_here()
        _loop.call_later(0.01, _tick, context=contextvars.Context())
_loop.call_later(0.01, _tick, context=contextvars.Context())
stop_attackers.append(lambda: _running.__setitem__(0, False))
""",
    )
    # When refused card messages and listings are handled meanwhile
    card_decision(fe, card, summary="Write scratch.txt")
    for _ in range(3):
        fe.list_pending()
    time.sleep(0.2)
    run(fe, "_running[0] = False")
    # Then nothing was decided
    log = attack_log(fe)
    assert log
    assert "decided" not in log
    assert target.still_waits()


def test_a_second_handler_on_the_cards_own_comm_cannot_decide(target: Target) -> None:
    # Given a pending request, and cell code that adds its own handler to the card's comm
    fe = target.fe
    card = target.ask_and_read()
    run(
        fe,
        DECIDER
        + f"""
_card = session.cards[{target.request_id!r}]
_card.on_msg(lambda widget, content, buffers: decide_from_here(
    {target.request_id!r}, {target.fingerprint!r}, "approve"))
""",
    )
    # When the person presses the card's close button (a real message to that very comm)
    fe.dismiss(card)
    wait_for_state(fe, card, lambda s: s["state"] != "pending")
    # Then the extra handler's decision is refused, the request ends dismissed, nothing runs
    assert wait_for_log(fe) == ["ApprovalNotFromFrontend"]
    assert target.status() == "dismissed"
    assert target.again().ename == "ApprovalDismissed"
    assert not target.ran()
    assert "dismissed" in target.events()
    assert target.refusals() == ["APPROVAL_NOT_FROM_FRONTEND"]


def test_a_widget_observer_cannot_decide_when_the_person_types(target: Target) -> None:
    # Given a pending request, and a text box whose observer approves it
    fe = target.fe
    target.ask_and_read()
    run(
        fe,
        DECIDER
        + f"""
import ipywidgets as _w
box = _w.Text(description="Your name")
box.observe(lambda change: decide_from_here({target.request_id!r}, {target.fingerprint!r}),
            names="value")
display(box)
""",
    )
    box_id = value(fe, "box.model_id").strip("'")
    # When the person types into it (a real widget update from the frontend)
    send_comm(fe, box_id, {"method": "update", "state": {"value": "Ada"}})
    # Then the observer's decision is refused: the message went to another widget
    assert wait_for_log(fe) == ["ApprovalNotFromFrontend"]
    assert target.still_waits()
    [refusal] = [e for e in target.journal() if e["event"] == "refused"]
    assert "another widget or comm" in refusal["why"]
