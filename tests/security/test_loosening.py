"""Loosening the limits through configuration or the environment (T1/T2).

Configuration may only tighten the promises. A looser value is ignored and reported (by
``%approvals`` in the kernel and by the doctor's ``limits`` check), never applied; nothing here
is a decision, so nothing is journaled for it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_approvals.doctor.limits import check_limits, effective_limits
from jupyter_approvals.testing import KernelFrontend
from tests.kernel.helpers import run, wait_for_state

from .conftest import PRELUDE, WRITER, started

# A card answered at once must come within a second of real time: see the realtime marker.
pytestmark = [pytest.mark.kernel, pytest.mark.realtime]

LOOSE_CONFIG = """
c.ApprovalsConfig.request_timeout = 10 ** 9
c.ApprovalsConfig.approval_ttl = 10 ** 9
c.ApprovalsConfig.min_answer_seconds = 0.0
c.ApprovalsConfig.max_pending = 10 ** 6
c.ApprovalsConfig.max_reason_chars = 10 ** 9
"""

#: Variables that look like settings; nothing reads them.
LOOSE_ENV = {
    "JUPYTER_APPROVALS_MIN_ANSWER_SECONDS": "0",
    "JUPYTER_APPROVALS_DISABLE": "1",
    "JUPYTER_APPROVALS_AUTO_APPROVE": "true",
    "JUPYTER_APPROVALS_HEADLESS": "approve",
}


def answered_at_once_runs_nothing(fe: KernelFrontend, name: str) -> None:
    """A call asks, its card is answered at once: auto-answered, nothing ran."""
    run(fe, PRELUDE + WRITER.format(name=name))
    assert run(fe, f"{name}('x', 'out.txt')").ename == "ApprovalPending"
    card = fe.cards()[-1]
    fe.click(card, "approve")
    after = wait_for_state(fe, card, lambda s: s["state"] != "pending")
    assert after.state["state"] == "auto_answered"
    assert run(fe, f"{name}('x', 'out.txt')").ename == "ApprovalAutoAnswered"


def approvals_report(fe: KernelFrontend) -> str:
    return run(fe, "%load_ext jupyter_approvals\n%approvals").stdout


def test_a_kernel_config_file_cannot_loosen_the_limits(tmp_path: Path) -> None:
    # Given a kernel whose IPython configuration asks for no reading floor and endless times
    with started(tmp_path, config=LOOSE_CONFIG) as (fe, ipython):
        # When a card is answered at once
        answered_at_once_runs_nothing(fe, "w_config")
        # Then the floor held, and the kernel reports every ignored setting
        report = approvals_report(fe)
        assert "answers faster than 1 s do not count" in report
        for name in ("request_timeout_s", "approval_ttl_s", "min_answer_s", "max_pending"):
            assert f"ignored setting {name}=" in report
        # And the doctor's limits check fails, naming them
        check = check_limits(effective_limits(ipython, environ={}))
        assert check.ok is False
        assert "ApprovalsConfig.min_answer_seconds" in check.detail
        assert "ApprovalsConfig.request_timeout" in check.detail


def test_config_set_from_a_cell_before_approvals_start_cannot_loosen(tmp_path: Path) -> None:
    with started(tmp_path) as (fe, _):
        # Given a cell that sets the kernel's config before the first protected function
        run(fe, "%config ApprovalsConfig.min_answer_seconds = 0.0")
        # When a card is answered at once, then it still counts as no answer
        answered_at_once_runs_nothing(fe, "w_magic")
        assert "ignored setting min_answer_s=0" in approvals_report(fe)


def test_a_config_value_of_the_wrong_type_keeps_the_promises(tmp_path: Path) -> None:
    with started(tmp_path, config='c.ApprovalsConfig.min_answer_seconds = "0"') as (fe, ipython):
        answered_at_once_runs_nothing(fe, "w_wrong_type")
        assert "ignored setting ApprovalsConfig=nan: invalid" in approvals_report(fe)
        assert check_limits(effective_limits(ipython, environ={})).ok is False


def test_environment_variables_that_look_like_settings_change_nothing(tmp_path: Path) -> None:
    # Given a kernel started with variables that sound like switches of jupyter-approvals
    with started(tmp_path, env=LOOSE_ENV) as (fe, ipython):
        # When a card is answered at once, it is still no answer
        answered_at_once_runs_nothing(fe, "w_env")
        # And a call that nobody answered still waits
        assert run(fe, "w_env('y', 'other.txt')").ename == "ApprovalPending"
        # And the doctor names each variable as not a setting
        check = check_limits(effective_limits(ipython, environ=LOOSE_ENV))
        assert check.ok is False
        for name in LOOSE_ENV:
            assert name in check.detail
