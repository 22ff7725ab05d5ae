"""Promise 4: requests time out, approvals expire; configuration only tightens."""

from __future__ import annotations

import time

import pytest

from tests.conftest import journal_lines
from tests.kernel.helpers import SETUP, pending_call, run, value, wait_for_state

pytestmark = pytest.mark.kernel

MANUAL_CLOCK = """
from jupyter_approvals.core.policy import ManualClock
from jupyter_approvals.kernel.session import KernelSession
clock = ManualClock()
KernelSession.install(KernelSession(get_ipython(), clock=clock))
"""


def test_pending_past_the_timeout_ends_timed_out(frontend, state_dir):
    # Given a kernel on a test clock and a pending call
    run(frontend, MANUAL_CLOCK + SETUP)
    card = pending_call(frontend, "save('x', 'x.txt')")
    # When ten minutes pass without an answer
    run(frontend, "clock.advance(600)")
    result = run(frontend, "save('x', 'x.txt')")
    # Then the call is told it timed out, nothing ran, the card and the journal say so
    assert result.ename == "ApprovalTimedOut"
    assert value(frontend, "runs") == "[]"
    wait_for_state(frontend, card, lambda s: s["state"] == "timed_out")
    assert "timed_out" in [e["event"] for e in journal_lines(state_dir)]


def test_approval_unused_past_its_lifetime_expires(frontend, state_dir):
    # Given a kernel on a test clock and an approval made 2 s (test time) after the card
    run(frontend, MANUAL_CLOCK + SETUP)
    card = pending_call(frontend, "save('x', 'x.txt')")
    run(frontend, "clock.advance(2)")
    frontend.click(card, "approve")
    wait_for_state(frontend, card, lambda s: s["state"] == "approved")
    # When ten minutes pass before the call comes back
    run(frontend, "clock.advance(600)")
    result = run(frontend, "save('x', 'x.txt')")
    # Then it expired and nothing ran
    assert result.ename == "ApprovalExpired"
    assert value(frontend, "runs") == "[]"
    assert "expired" in [e["event"] for e in journal_lines(state_dir)]


def test_configured_shorter_timeout_ends_requests_without_any_call(
    project, kernel_env, state_dir, tmp_path
):
    from jupyter_approvals.testing import KernelFrontend

    # Given kernel configuration asking for a 2 s timeout (stricter) and a 1 h expiry (looser)
    profile = tmp_path / "ipython" / "profile_default"
    profile.mkdir(parents=True)
    (profile / "ipython_kernel_config.py").write_text(
        "c.ApprovalsConfig.request_timeout = 2.0\nc.ApprovalsConfig.approval_ttl = 3600.0\n"
    )
    with KernelFrontend.start(cwd=project, env=kernel_env) as fe:
        run(fe, SETUP)
        card = pending_call(fe, "save('x', 'x.txt')")
        # When nobody answers for 3 s
        time.sleep(3)
        # Then the sweeper ended it, the card shows it, and the looser value was ignored
        wait_for_state(fe, card, lambda s: s["state"] == "timed_out")
        report = run(fe, "%load_ext jupyter_approvals\n%approvals").stdout
        assert "requests time out after 2 s" in report
        assert "approvals expire 600 s after" in report
        assert "ignored setting approval_ttl_s=3600" in report
        assert "timed_out" in [e["event"] for e in journal_lines(state_dir)]
