"""Tampered card state: the card's synced traits changed from a cell or by a frontend's widget
sync message, a card pointed at another request, a card told it may be answered at once (T2).

What decides is the store's record of the request, never the card's traits.
"""

from __future__ import annotations

import pytest

from tests.kernel.helpers import card_decision, run, wait_for_state

from .conftest import WRITER, Target, send_comm

pytestmark = pytest.mark.kernel


def test_setting_the_cards_state_to_approved_from_a_cell_approves_nothing(target: Target) -> None:
    # Given a pending request
    fe = target.fe
    card = target.ask_and_read()
    # When cell code sets the card's state trait, as the card shows an approval
    run(fe, f"session.cards[{target.request_id!r}].set_trait('state', 'approved')")
    fe.pump(0.3)
    # Then the card shows "approved", but the store still waits for a person
    assert fe.card(card.model_id).state["state"] == "approved"
    assert target.status() == "pending"
    assert target.still_waits()
    assert "approved" not in target.events()


def test_a_widget_sync_message_rewriting_the_card_approves_nothing(target: Target) -> None:
    # Given a pending request
    fe = target.fe
    card = target.ask_and_read()
    # When a frontend sends the card's model an ipywidgets state update: approved, with a
    # harmless summary
    send_comm(
        fe,
        card.model_id,
        {"method": "update", "state": {"state": "approved", "summary": "Write scratch.txt"}},
    )
    fe.pump(0.3)
    # Then the store still waits, and a decision naming what that card now shows is refused
    assert target.still_waits()
    card_decision(fe, card, state=dict(card.state, summary="Write scratch.txt"))
    assert "APPROVAL_FINGERPRINT_MISMATCH" in target.card_notice()
    assert target.still_waits()
    assert target.refusals() == ["APPROVAL_FINGERPRINT_MISMATCH"]


def test_a_harmless_card_pointed_at_a_dangerous_request_decides_nothing(target: Target) -> None:
    # Given a harmless pending request and a dangerous one
    fe = target.fe
    card = target.ask_and_read()
    run(fe, WRITER.format(name="w_danger"))
    assert run(fe, "w_danger('gone', 'precious.csv')").ename == "ApprovalPending"
    danger = fe.cards()[-1]
    # When cell code points the harmless card at the dangerous request (its record and id),
    # leaving the harmless text on screen
    run(
        fe,
        f"""
_harmless = session.cards[{target.request_id!r}]
_danger = session.store.get({danger.state["request_id"]!r})
object.__setattr__(_harmless, "_info", _danger)
_harmless.set_trait("request_id", _danger.id)
_harmless.set_trait("fingerprint", _danger.fingerprint)
""",
    )
    fe.pump(0.3)
    # And the person approves the card that still says "Write <harmless>"
    fe.click(card, "approve")
    notice = target.card_notice()
    # Then nothing is approved: what the card showed is not the dangerous request
    assert "APPROVAL_FINGERPRINT_MISMATCH" in notice
    assert run(fe, "w_danger('gone', 'precious.csv')").ename == "ApprovalPending"
    assert not (target.project / "precious.csv").exists()
    assert target.status() == "pending"


@pytest.mark.realtime
def test_a_card_told_to_accept_instant_answers_still_counts_them_as_none(target: Target) -> None:
    # Given a card whose reading floor cell code set to zero (the view would enable its
    # buttons at once)
    fe = target.fe
    card = target.ask()
    run(fe, f"session.cards[{target.request_id!r}].set_trait('min_answer_ms', 0)")
    # When it is answered within the second
    fe.click(card, "approve")
    wait_for_state(fe, card, lambda s: s["state"] != "pending")
    # Then the kernel's floor holds: auto-answered, nothing runs, journaled
    assert target.status() == "auto_answered"
    assert target.again().ename == "ApprovalAutoAnswered"
    assert not target.ran()
    assert "auto_answered" in target.events()
