"""The clock the approvals read is bound when they load (T2): cell code that replaces
``time.monotonic`` changes its own code's time, not the reading floor, the request timeout or
an approval's expiry. (Code in the kernel can still reach the bound clock; docs/security.md
says so: this makes the simple attack fail, it is no boundary.)"""

from __future__ import annotations

import time

import pytest

from jupyter_approvals.core.policy import SystemClock
from tests.kernel.helpers import run, wait_for_state

from .conftest import Target

pytestmark = pytest.mark.kernel

#: Time that runs 1,000 s ahead on every reading, and the way back.
RACING_CLOCK = """
import time
real_monotonic = time.monotonic
racing = [real_monotonic()]
def fast_monotonic():
    racing[0] += 1000.0
    return racing[0]
time.monotonic = fast_monotonic
"""
RESTORE = "time.monotonic = real_monotonic"


def test_a_replaced_monotonic_clock_does_not_beat_the_reading_floor(target: Target) -> None:
    # Given cell code that made time.monotonic race 1,000 s ahead on every reading
    fe = target.fe
    card = target.ask()
    run(fe, RACING_CLOCK)
    try:
        # When the card is answered within the second
        fe.click(card, "approve")
        wait_for_state(fe, card, lambda s: s["state"] != "pending")
        # Then the floor held on the real clock: auto-answered, nothing runs
        assert target.status() == "auto_answered"
        assert target.again().ename == "ApprovalAutoAnswered"
        assert not target.ran()
    finally:
        run(fe, RESTORE)


def test_the_store_clock_reads_the_clock_it_found_at_import(monkeypatch) -> None:
    # Given time.monotonic and time.time replaced after the approvals were imported
    monkeypatch.setattr(time, "monotonic", lambda: 0.0)
    monkeypatch.setattr(time, "time", lambda: 0.0)
    # When the store's clock is read twice
    clock = SystemClock()
    first = clock.monotonic()
    # Then it reads the real clocks
    assert first > 0.0
    assert clock.wall() > 1_700_000_000
    assert clock.monotonic() >= first
