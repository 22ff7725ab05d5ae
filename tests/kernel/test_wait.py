"""``await fn.wait(...)``: an async cell sees the decision and runs, or fails clearly."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from jupyter_approvals.core import errors
from tests.kernel.helpers import SETUP, let_a_person_read, run, value

pytestmark = pytest.mark.kernel


def wait_for_card(frontend, timeout: float = 15):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        cards = frontend.cards()
        if cards:
            return cards[-1]
    raise AssertionError("no card appeared")


def test_await_wait_returns_the_result_after_a_frontend_approves(frontend, project):
    # Given an async cell awaiting a protected call
    run(frontend, SETUP)
    msg_id = frontend.submit("result = await save.wait('hello', 'waited.txt')\nresult")
    card = wait_for_card(frontend)
    # When a person approves in the card while the cell awaits
    let_a_person_read(frontend)
    frontend.click(card, "approve")
    outcome = frontend.collect(msg_id, timeout=30)
    # Then the cell ends with the function's result and it ran once
    assert outcome.status == "ok", outcome.evalue
    assert outcome.data() == ["'wrote 5 chars'"]
    assert (project / "waited.txt").read_text() == "hello"
    assert value(frontend, "runs") == "['waited.txt']"


def test_await_wait_raises_the_rejection(frontend):
    run(frontend, SETUP)
    msg_id = frontend.submit("await save.wait('hello', 'waited.txt')")
    card = wait_for_card(frontend)
    let_a_person_read(frontend)
    frontend.click(card, "reject", reason="not today")
    outcome = frontend.collect(msg_id, timeout=30)
    assert outcome.ename == "ApprovalRejected"
    assert "not today" in outcome.evalue
    assert value(frontend, "runs") == "[]"


def test_wait_outside_a_kernel_fails_at_once(tmp_path, monkeypatch):
    # Given a protected function in a plain Python process (no kernel, no frontend)
    monkeypatch.setenv("JUPYTER_APPROVALS_STATE_DIR", str(tmp_path / "state"))
    import jupyter_approvals as ja
    from jupyter_approvals.kernel.session import KernelSession

    KernelSession.install(KernelSession(None, cwd=tmp_path / "project"))

    @ja.protected("demo.wait")
    def act():
        return "ran"

    # When it is awaited in an event loop of its own (a thread, so no other loop interferes)
    started = time.monotonic()
    outcome: list[BaseException] = []
    worker = threading.Thread(target=lambda: _capture(outcome, lambda: asyncio.run(act.wait())))
    worker.start()
    worker.join(30)
    with pytest.raises(errors.ApprovalWaitUnsupported) as caught:
        raise outcome[0]
    # Then it fails at once instead of hanging
    assert time.monotonic() - started < 5
    assert caught.value.details["reason"] == "not in a Jupyter kernel"


def _capture(into: list[BaseException], run) -> None:
    try:
        run()
    except BaseException as exc:
        into.append(exc)
