"""Racing for one approval (T2): threads, asyncio tasks, and two channels answering at once.

An approval is consumed atomically by the first run; every other contender asks again.
"""

from __future__ import annotations

import pytest

from tests.kernel.helpers import run, value, wait_for_state

from .conftest import Target, approve

pytestmark = pytest.mark.kernel

COUNTING = """
import threading
race_runs = []
@ja.protected("table.write", summary="Write {path}")
def counted(path):
    race_runs.append(threading.current_thread().name)
"""


def test_sixteen_threads_racing_for_one_approval_run_it_once(target: Target) -> None:
    # Given an approved call
    fe = target.fe
    run(fe, COUNTING)
    assert run(fe, "counted('race.csv')").ename == "ApprovalPending"
    target.card = fe.cards()[-1]
    approve(fe, target.card)
    # When 16 threads make that call at the same moment
    run(
        fe,
        """
_barrier = threading.Barrier(16)
_outcomes = []
def _contender():
    _barrier.wait()
    try:
        counted('race.csv')
        _outcomes.append("ran")
    except ja.ApprovalError as exc:
        _outcomes.append(exc.code)
_threads = [threading.Thread(target=_contender) for _ in range(16)]
for _t in _threads: _t.start()
for _t in _threads: _t.join()
""",
    )
    # Then exactly one ran; the others were asked to wait for a new approval
    assert value(fe, "len(race_runs)") == "1"
    assert value(fe, "sorted(set(_outcomes))") == "['APPROVAL_PENDING', 'ran']"
    assert value(fe, "_outcomes.count('ran')") == "1"
    assert target.events().count("executed") == 1


def test_asyncio_tasks_racing_for_one_approval_run_it_once(target: Target) -> None:
    fe = target.fe
    run(
        fe,
        """
race_async_runs = []
@ja.protected("table.write", summary="Write {path}")
async def counted_async(path):
    race_async_runs.append(path)
""",
    )
    assert run(fe, "await counted_async('race-async.csv')").ename == "ApprovalPending"
    target.card = fe.cards()[-1]
    approve(fe, target.card)
    # When ten tasks await the approved call together
    run(
        fe,
        """
import asyncio
async def _contend():
    try:
        await counted_async('race-async.csv')
        return "ran"
    except ja.ApprovalError as exc:
        return exc.code
_results = await asyncio.gather(*(_contend() for _ in range(10)))
""",
    )
    # Then one ran
    assert value(fe, "race_async_runs") == "['race-async.csv']"
    assert value(fe, "_results.count('ran')") == "1"
    assert target.events().count("executed") == 1


def test_card_and_sidebar_approving_at_once_make_one_approval(target: Target) -> None:
    # Given a pending request, read long enough, and the sidebar's comm open
    fe = target.fe
    card = target.ask_and_read()
    fe.list_pending()
    # When the card and the sidebar send their approvals back to back
    fe.click(card, "approve")
    reply = fe.decide(target.request_id, "approve", target.fingerprint)
    wait_for_state(fe, card, lambda s: s["state"] != "pending")
    # Then one of them approved, the other was refused as decided (journaled), and the call
    # runs once
    assert reply["code"] == "APPROVAL_ALREADY_DECIDED"
    assert target.events().count("approved") == 1
    assert "APPROVAL_ALREADY_DECIDED" in target.refusals()
    assert target.again().status == "ok"
    target.marker.unlink()
    assert target.still_waits()


def test_a_thread_racing_the_persons_rejection_cannot_slip_an_approval_in(
    target: Target,
) -> None:
    # Given a pending request and a thread that keeps approving it
    fe = target.fe
    card = target.ask_and_read()
    run(
        fe,
        f"""
import threading
_stop = threading.Event()
stop_attackers.append(_stop.set)
def _bot():
    while not _stop.is_set():
        try:
            session.decisions.decide({target.request_id!r}, "approve", {target.fingerprint!r})
            attack_log.append("decided")
        except ja.ApprovalError as exc:
            attack_log.append(exc.code)
threading.Thread(target=_bot, daemon=True).start()
""",
    )
    # When the person rejects it meanwhile
    fe.click(card, "reject", reason="not this one")
    wait_for_state(fe, card, lambda s: s["state"] != "pending")
    run(fe, "_stop.set()")
    # Then the rejection stands and nothing ran
    assert target.status() == "rejected"
    assert "decided" not in value(fe, "attack_log")
    assert target.again().ename == "ApprovalRejected"
    assert not target.ran()
