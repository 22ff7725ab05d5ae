"""The clock the approvals read is bound when they load (T2): cell code that replaces
``time.monotonic`` changes its own code's time, not the reading floor, the request timeout or
an approval's expiry. (Code in the kernel can still reach the bound clock; docs/security.md
says so: this makes the simple attack fail, it is no boundary.)"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from jupyter_approvals.core.policy import MIN_ANSWER_CEILING_S, SystemClock
from tests.kernel.helpers import run, wait_for_state

from .conftest import PRELUDE, WRITER, started

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


#: The reading floor raised as far as configuration allows, so that the click below comes
#: inside it however slow the machine is.
LONG_FLOOR = f"c.ApprovalsConfig.min_answer_seconds = {MIN_ANSWER_CEILING_S}"


def test_a_replaced_monotonic_clock_does_not_beat_the_reading_floor(tmp_path: Path) -> None:
    with started(tmp_path, config=LONG_FLOOR) as (fe, _):
        # Given a protected call asked for, then cell code that made time.monotonic race
        # 1,000 s ahead on every reading
        run(fe, PRELUDE + WRITER.format(name="racer"))
        assert run(fe, "racer('x', 'out.txt')").ename == "ApprovalPending"
        card = fe.cards()[-1]
        run(fe, RACING_CLOCK)
        # When the card is answered well within the (real) reading floor
        fe.click(card, "approve")
        after = wait_for_state(fe, card, lambda s: s["state"] != "pending")
        # Then the floor held on the real clock: auto-answered, nothing runs
        assert after.state["state"] == "auto_answered"
        assert run(fe, "racer('x', 'out.txt')").ename == "ApprovalAutoAnswered"
        assert not (tmp_path / "project" / "out.txt").exists()


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
