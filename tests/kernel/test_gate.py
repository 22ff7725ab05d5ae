"""Promises 1-3 and 7-8 against a real ipykernel driven like a browser."""

from __future__ import annotations

import re

import pytest

from jupyter_approvals.core.protocol import PENDING_MIMETYPE
from tests.conftest import journal_lines
from tests.kernel.helpers import SETUP, approve_as_person, pending_call, run, value

pytestmark = pytest.mark.kernel


def test_approved_call_runs_once_and_a_third_call_is_pending_again(frontend, project, state_dir):
    # Given a protected writer and a pending call
    run(frontend, SETUP)
    card = pending_call(frontend, "save('a,b\\n1,2', 'sales.csv')")
    assert card.state["state"] == "pending"
    assert card.state["fingerprint"].startswith("sha256:")
    # When a person approves after more than a second, and the call is made again
    after = approve_as_person(frontend, card)
    assert after.state["state"] == "approved"
    second = run(frontend, "save('a,b\\n1,2', 'sales.csv')")
    # Then it ran once, and a third call needs a new approval
    assert second.status == "ok", second.evalue
    assert second.data() == ["'wrote 7 chars'"]
    assert (project / "sales.csv").read_text() == "a,b\n1,2"
    third = run(frontend, "save('a,b\\n1,2', 'sales.csv')")
    assert third.ename == "ApprovalPending"
    assert value(frontend, "runs") == "['sales.csv']"
    # And the journal holds request, decision and outcome of the first request
    first_id = card.state["request_id"]
    events = [e["event"] for e in journal_lines(state_dir) if e.get("request_id") == first_id]
    assert events == ["requested", "approved", "executed"]


def test_changed_argument_after_approval_is_a_fingerprint_mismatch(frontend, project):
    # Given an approved call
    run(frontend, SETUP)
    card = pending_call(frontend, "save('v1', 'out.txt')")
    approve_as_person(frontend, card)
    # When the call comes back with other content
    result = run(frontend, "save('v2', 'out.txt')")
    # Then nothing ran
    assert result.ename == "ApprovalFingerprintMismatch"
    assert "APPROVAL_FINGERPRINT_MISMATCH" in result.evalue
    assert value(frontend, "runs") == "[]"
    assert not (project / "out.txt").exists()


def test_changed_target_file_after_approval_is_a_fingerprint_mismatch(frontend, project):
    # Given an approved overwrite of an existing file
    (project / "out.txt").write_text("original")
    run(frontend, SETUP)
    card = pending_call(frontend, "save('new', 'out.txt')")
    approve_as_person(frontend, card)
    # When the file changes before the run
    (project / "out.txt").write_text("changed by someone else")
    result = run(frontend, "save('new', 'out.txt')")
    # Then nothing ran and the file keeps the other change
    assert result.ename == "ApprovalFingerprintMismatch"
    assert (project / "out.txt").read_text() == "changed by someone else"


def test_approval_for_one_action_does_not_run_another(frontend):
    # Given two actions over the same subject, and git.commit approved
    run(
        frontend,
        """
import jupyter_approvals as ja
done = []
@ja.protected("git.commit")
def commit(repo): done.append("commit")
@ja.protected("git.push")
def push(repo): done.append("push")
""",
    )
    card = pending_call(frontend, "commit('.')")
    approve_as_person(frontend, card)
    # When git.push is called with the same subject
    result = run(frontend, "push('.')")
    # Then it is a scope mismatch and nothing ran
    assert result.ename == "ApprovalScopeMismatch"
    assert value(frontend, "done") == "[]"


def test_rejection_reason_reaches_the_caller(frontend, state_dir):
    # Given a pending call
    run(frontend, SETUP)
    card = pending_call(frontend, "save('x', 'x.txt')")
    # When a person rejects it with a reason
    after = approve_as_person(frontend, card, "reject", reason="use the staging table")
    result = run(frontend, "save('x', 'x.txt')")
    # Then the caller's error carries the reason and nothing ran
    assert after.state["state"] == "rejected"
    assert result.ename == "ApprovalRejected"
    assert "use the staging table" in result.evalue
    assert value(frontend, "runs") == "[]"
    rejected = [e for e in journal_lines(state_dir) if e["event"] == "rejected"]
    assert rejected[0]["reason"] == "use the staging table"
    assert rejected[0]["channel"] == "card"
    assert rejected[0]["latency_ms"] >= 1000


@pytest.mark.realtime
def test_answer_within_a_second_is_auto_answered(frontend, state_dir):
    # Given a pending call
    run(frontend, SETUP)
    card = pending_call(frontend, "save('x', 'x.txt')")
    # When the approve button is pressed at once
    frontend.click(card, "approve")
    from tests.kernel.helpers import wait_for_state

    after = wait_for_state(frontend, card, lambda s: s["state"] != "pending")
    result = run(frontend, "save('x', 'x.txt')")
    # Then it counted as no answer, nothing ran, and the journal says so
    assert after.state["state"] == "auto_answered"
    assert result.ename == "ApprovalAutoAnswered"
    assert value(frontend, "runs") == "[]"
    assert "auto_answered" in [e["event"] for e in journal_lines(state_dir)]


def test_identical_calls_while_pending_make_one_request(frontend):
    # Given a protected writer
    run(frontend, SETUP)
    # When the same call is made 1,000 times in one cell
    result = run(
        frontend,
        """
codes = set()
for _ in range(1000):
    try:
        save('same', 'same.txt')
    except ja.ApprovalError as e:
        codes.add(e.code)
codes, len(ja.pending())
""",
    )
    # Then there is one request and one card
    assert result.data()[-1] == "({'APPROVAL_PENDING'}, 1)"
    assert len(frontend.cards()) == 1


def test_distinct_calls_stop_at_twenty_pending(frontend):
    run(frontend, SETUP)
    result = run(
        frontend,
        """
import collections
codes = collections.Counter()
for i in range(10_000):
    try:
        save(str(i), 'many.txt')
    except ja.ApprovalError as e:
        codes[e.code] += 1
dict(codes), len(ja.pending())
""",
    )
    assert result.data()[-1] == (
        "({'APPROVAL_PENDING': 20, 'APPROVAL_TOO_MANY_PENDING': 9980}, 20)"
    )


def test_kernel_restart_forgets_every_request(frontend, project):
    # Given a pending call whose request a frontend knows
    run(frontend, SETUP)
    card = pending_call(frontend, "save('x', 'restart.txt')")
    old_id, old_fp = card.state["request_id"], card.state["fingerprint"]
    # When the kernel restarts and a person then approves the old request
    frontend.restart()
    import time

    time.sleep(1.2)
    run(frontend, SETUP)
    reply = frontend.decide(old_id, "approve", old_fp)
    # Then the request is unknown, the call is pending anew, and nothing ran
    assert reply["ok"] is False
    assert reply["code"] == "APPROVAL_UNKNOWN_REQUEST"
    again = run(frontend, "save('x', 'restart.txt')")
    assert again.ename == "ApprovalPending"
    assert not (project / "restart.txt").exists()


def test_withdrawn_request_cannot_be_approved_later(frontend):
    # Given a pending call the caller withdraws
    run(frontend, SETUP)
    card = pending_call(frontend, "save('x', 'w.txt')")
    run(frontend, "save.withdraw('x', 'w.txt')")
    # When a person approves it from the sidebar
    import time

    time.sleep(1.2)
    reply = frontend.decide(card.state["request_id"], "approve", card.state["fingerprint"])
    # Then the decision is refused as withdrawn
    assert reply["code"] == "APPROVAL_WITHDRAWN"
    assert frontend.card(card.model_id).state["state"] == "withdrawn"


def test_closing_the_card_dismisses_the_request(frontend):
    run(frontend, SETUP)
    card = pending_call(frontend, "save('x', 'd.txt')")
    frontend.dismiss(card)
    from tests.kernel.helpers import wait_for_state

    wait_for_state(frontend, card, lambda s: s["state"] == "dismissed")
    result = run(frontend, "save('x', 'd.txt')")
    assert result.ename == "ApprovalDismissed"
    assert value(frontend, "runs") == "[]"


def test_low_level_writer_refuses_outside_an_approved_run(frontend):
    # Given a writer guarded by the lease, and a protected function that calls it
    run(
        frontend,
        """
import jupyter_approvals as ja
def low_level_write(path):
    ja.require_lease("file.write")
    open(path, "w").write("data")

@ja.protected("file.write")
def write(path):
    low_level_write(path)
""",
    )
    # When the writer is called directly
    result = run(frontend, "low_level_write('direct.txt')")
    # Then it refuses with APPROVAL_REQUIRED
    assert result.ename == "ApprovalRequired"
    assert "APPROVAL_REQUIRED" in result.evalue
    # And through an approved run it writes
    card = pending_call(frontend, "write('approved.txt')")
    approve_as_person(frontend, card)
    assert run(frontend, "write('approved.txt')").status == "ok"


def test_journal_inside_the_project_refuses_protected_calls(project, kernel_env):
    from jupyter_approvals.testing import KernelFrontend

    # Given a kernel whose state dir points inside the project
    env = {**kernel_env, "JUPYTER_APPROVALS_STATE_DIR": str(project / ".state")}
    with KernelFrontend.start(cwd=project, env=env) as fe:
        run(fe, SETUP)
        # When a protected call is made
        result = run(fe, "save('x', 'x.txt')")
        # Then it is refused and no card asks anyone
        assert result.ename == "ApprovalJournalInsideProject"
        assert fe.cards() == []


def test_a_pending_call_leaves_its_card_and_one_quiet_line_not_an_error(frontend):
    # Given a protected writer
    run(frontend, SETUP)
    # When a call stops to ask for approval
    result = run(frontend, "save('x', 'x.txt')")
    # Then the cell ended in error, so nothing after the call ran and "Run all" stops here
    assert result.ename == "ApprovalPending"
    assert "APPROVAL_PENDING" in "".join(result.error["traceback"])
    assert "gate.py" not in "".join(result.error["traceback"])
    # And no red error output shows: the card and one line that stays true once it ended
    assert result.error_output is None
    (card_output, note) = result.outputs
    assert "application/vnd.jupyter.widget-view+json" in card_output["data"]
    line = note["data"]["text/plain"]
    assert line.startswith("Stopped before table.write ran")
    assert not re.search(r"\n|UTC|\d\d:\d\d|request", line), line
    # And agents read the whole error beside it
    detail = note["data"][PENDING_MIMETYPE]
    assert detail["code"] == "APPROVAL_PENDING"
    assert detail["details"]["request_id"] == frontend.cards()[-1].state["request_id"]
    assert detail["details"]["fingerprint"].startswith("sha256:")


def test_a_repeated_pending_call_shows_one_output_the_pointer(frontend):
    # Given a pending call whose card shows in one cell
    run(frontend, SETUP)
    run(frontend, "save('x', 'x.txt')")
    # When another cell makes the same call again
    again = run(frontend, "save('x', 'x.txt')")
    # Then that cell shows one output, pointing to the card, and still ends in error
    assert again.ename == "ApprovalPending"
    assert again.error_output is None
    assert [o["data"]["text/plain"][:16] for o in again.outputs] == ["Already asked in"]


def test_other_approval_errors_show_their_message_not_the_gates_frames(frontend):
    # Given a rejected call
    run(frontend, SETUP)
    card = pending_call(frontend, "save('x', 'x.txt')")
    approve_as_person(frontend, card, decision="reject")
    # When the call is made again and ends in its outcome
    result = run(frontend, "save('x', 'x.txt')")
    # Then it shows as an error output: the one-line message a person and an agent act on
    assert result.ename == "ApprovalRejected"
    traceback = "".join(result.error_output["traceback"])
    assert "APPROVAL_REJECTED" in traceback
    assert "gate.py" not in traceback
    assert len(result.error_output["traceback"]) == 1
