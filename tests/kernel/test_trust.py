"""Promise 5: only a person's answer from a frontend approves; nothing in code or arguments does."""

from __future__ import annotations

import time

import pytest

from tests.conftest import journal_lines
from tests.kernel.helpers import (
    SETUP,
    approve_as_person,
    card_decision,
    let_a_person_read,
    pending_call,
    run,
    value,
    wait_for_state,
)

pytestmark = pytest.mark.kernel

CARD = """
from jupyter_approvals.core.protocol import SHOWN_FIELDS
from jupyter_approvals.kernel.session import KernelSession
session = KernelSession.current()
card = list(session.cards.values())[-1]
"""


def refused_from_frontend(state_dir) -> list[dict]:
    return [
        e
        for e in journal_lines(state_dir)
        if e["event"] == "refused" and e.get("code") == "APPROVAL_NOT_FROM_FRONTEND"
    ]


def test_calling_the_card_handler_from_a_cell_is_refused(frontend, state_dir):
    # Given a pending call shown long enough ago
    run(frontend, SETUP)
    pending_call(frontend, "save('x', 'x.txt')")
    let_a_person_read(frontend)
    # When cell code invokes the card's message handler as if the button were pressed
    run(
        frontend,
        CARD
        + """
card._handle_custom_msg({"op": "decide", "id": card.request_id, "decision": "approve",
                         "fingerprint": card.fingerprint, "reason": "",
                         "shown": {n: getattr(card, n) for n in SHOWN_FIELDS}}, [])
""",
    )
    # Then nothing is decided, the card says why, and the refusal is journaled
    assert value(frontend, "card.state") == "'pending'"
    assert "APPROVAL_NOT_FROM_FRONTEND" in value(frontend, "card.notice")
    assert run(frontend, "save('x', 'x.txt')").ename == "ApprovalPending"
    assert value(frontend, "runs") == "[]"
    assert len(refused_from_frontend(state_dir)) == 1


def test_calling_the_decision_function_from_a_cell_is_refused(frontend, state_dir):
    run(frontend, SETUP)
    pending_call(frontend, "save('x', 'x.txt')")
    let_a_person_read(frontend)
    # When cell code calls the session's decision entry point directly
    result = run(
        frontend,
        CARD
        + """
session.decisions.decide(card.request_id, "approve", card.fingerprint)
""",
    )
    # Then it raises APPROVAL_NOT_FROM_FRONTEND and nothing runs
    assert result.ename == "ApprovalNotFromFrontend"
    assert run(frontend, "save('x', 'x.txt')").ename == "ApprovalPending"
    assert len(refused_from_frontend(state_dir)) == 1


def test_sending_the_decision_dict_to_the_comm_endpoint_from_a_cell_is_refused(frontend, state_dir):
    run(frontend, SETUP)
    pending_call(frontend, "save('x', 'x.txt')")
    let_a_person_read(frontend)
    # When cell code feeds a decide message to the endpoint's handler, with a fake comm
    run(
        frontend,
        CARD
        + """
class FakeComm:
    sent = []
    def send(self, data): self.sent.append(data)
fake = FakeComm()
session.endpoint._on_msg(fake, {"content": {"data": {
    "op": "decide", "id": card.request_id, "decision": "approve",
    "fingerprint": card.fingerprint, "reason": ""}}})
""",
    )
    # Then the reply refuses it and the call is still pending
    assert "APPROVAL_NOT_FROM_FRONTEND" in value(frontend, "fake.sent[-1]['code']")
    assert run(frontend, "save('x', 'x.txt')").ename == "ApprovalPending"
    assert len(refused_from_frontend(state_dir)) == 1


@pytest.mark.parametrize(
    "call",
    [
        "anything(approved=True)",
        "anything(confirm='YES')",
        "anything(note='the user said yes')",
        "anything(approval={'request_id': req.id, 'action': 'any.thing', "
        "'fingerprint': req.fingerprint, 'approved': True})",
        "anything(req.fingerprint)",
    ],
)
def test_nothing_in_the_arguments_approves(frontend, call):
    # Given a protected function that accepts anything, with a request already pending
    run(
        frontend,
        """
import jupyter_approvals as ja
ran = []
@ja.protected("any.thing")
def anything(*args, **kwargs):
    ran.append((args, kwargs))
try:
    anything('first')
except ja.ApprovalPending:
    pass
req = ja.pending()[0]
""",
    )
    # When the call claims approval through its arguments
    result = run(frontend, call)
    # Then it is just another call waiting for a person
    assert result.ename == "ApprovalPending"
    assert value(frontend, "ran") == "[]"


def test_objects_shaped_like_approvals_are_not_fingerprinted_or_accepted(frontend):
    # Given a dataclass that looks like an approval, and a real approval object
    run(
        frontend,
        """
import dataclasses, jupyter_approvals as ja
ran = []
@ja.protected("any.thing")
def anything(token):
    ran.append(token)

@dataclasses.dataclass
class Approval:
    request_id: str
    action: str
    fingerprint: str
""",
    )
    # When each is passed as the argument
    fake = run(frontend, "anything(Approval('x', 'any.thing', 'sha256:' + 'a' * 64))")
    # Then the call is refused before anyone is asked, and nothing ran
    assert fake.ename == "ApprovalUnfingerprintable"
    assert "Approval" in fake.evalue
    assert value(frontend, "ran") == "[]"


def test_testing_frontend_refuses_to_drive_its_own_kernel(frontend):
    # When code in the kernel tries to drive that same kernel with the testing helper
    result = run(
        frontend,
        """
from ipykernel.connect import get_connection_file
from jupyter_approvals.testing import connect
connect(get_connection_file())
""",
    )
    # Then it refuses
    assert result.ename == "RuntimeError"
    assert "refuses to drive the kernel it runs in" in result.evalue


def test_journal_failure_is_shown_in_the_card_and_does_not_change_the_decision(
    project, kernel_env, tmp_path
):
    from jupyter_approvals.testing import KernelFrontend
    from tests.kernel.helpers import approve_as_person

    # Given a state dir whose parent is a regular file, so no journal can be written
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    env = {**kernel_env, "JUPYTER_APPROVALS_STATE_DIR": str(blocker / "state")}
    with KernelFrontend.start(cwd=project, env=env) as fe:
        run(fe, SETUP)
        card = pending_call(fe, "save('x', 'x.txt')")
        # When a person approves
        after = approve_as_person(fe, card)
        # Then the approval holds, the call runs, and the card says the journal is failing
        assert after.state["state"] == "approved"
        assert "cannot be written" in after.state["journal_error"]
        assert run(fe, "save('x', 'x.txt')").status == "ok"
        assert "NOT WRITABLE" in run(fe, "%load_ext jupyter_approvals\n%approvals").stdout


def test_a_background_thread_cannot_decide_while_a_frontend_talks(frontend, state_dir):
    # Given a pending call and a thread in the kernel that keeps trying to approve it
    run(frontend, SETUP)
    card = pending_call(frontend, "save('x', 'x.txt')")
    let_a_person_read(frontend)
    run(
        frontend,
        CARD
        + """
import threading, time as _t
stop = threading.Event()
def bot():
    while not stop.is_set():
        try:
            session.decisions.decide(card.request_id, "approve", card.fingerprint)
            return
        except ja.ApprovalError:
            _t.sleep(0.02)
threading.Thread(target=bot, daemon=True).start()
""",
    )
    # When a frontend handles real comm messages meanwhile (it lists pending requests)
    for _ in range(5):
        frontend.list_pending()
        time.sleep(0.1)
    run(frontend, "stop.set()")
    # Then the request is still pending and the call still waits
    assert frontend.card(card.model_id).state["state"] == "pending"
    assert run(frontend, "save('x', 'x.txt')").ename == "ApprovalPending"
    assert refused_from_frontend(state_dir)


def test_a_trap_button_cannot_approve_a_hidden_request(frontend):
    # Given a pending request and an innocent-looking button that tries to approve it
    run(frontend, SETUP)
    pending_call(frontend, "save('x', 'x.txt')")
    let_a_person_read(frontend)
    run(
        frontend,
        CARD
        + """
import ipywidgets as w
button = w.Button(description="Show the chart")
errors_seen = []
def trap(_):
    try:
        session.decisions.decide(card.request_id, "approve", card.fingerprint)
    except ja.ApprovalError as e:
        errors_seen.append(e.code)
button.on_click(trap)
display(button)
""",
    )
    button_id = value(frontend, "button.model_id").strip("'")
    # When the person clicks the button (a real frontend comm message, to the button)
    frontend.send_widget_message(button_id, {"event": "click"})
    frontend.pump(1)
    # Then the decision is refused and nothing can run
    assert value(frontend, "errors_seen") == "['APPROVAL_NOT_FROM_FRONTEND']"
    assert run(frontend, "save('x', 'x.txt')").ename == "ApprovalPending"


def test_a_card_cannot_be_rewritten_to_show_something_else(frontend):
    # Given a pending request for one file
    run(frontend, SETUP)
    card = pending_call(frontend, "save('x', 'precious.csv')")
    # When cell code tries to change what its card shows
    plain = run(frontend, CARD + "card.summary = 'Write scratch.txt'")
    run(frontend, CARD + "card.set_trait('summary', 'Write scratch.txt')")
    # Then plain assignment is refused, and a person approving the altered view decides nothing
    assert plain.ename == "AttributeError"
    frontend.pump(0.5)
    assert frontend.card(card.model_id).state["summary"] == "Write scratch.txt"
    let_a_person_read(frontend)
    frontend.click(card, "approve")
    after = wait_for_state(frontend, card, lambda s: s.get("notice"))
    assert "APPROVAL_FINGERPRINT_MISMATCH" in after.state["notice"]
    assert after.state["state"] == "pending"


def test_a_look_alike_card_cannot_decide_the_real_request(frontend):
    # Given a pending request, and a second card built by cell code with a harmless summary
    run(frontend, SETUP)
    pending_call(frontend, "save('x', 'precious.csv')")
    run(
        frontend,
        CARD
        + """
import dataclasses
from jupyter_approvals.kernel.card.widget import ApprovalCard
info = ja.pending()[0]
fake = ApprovalCard(
    dataclasses.replace(info, summary="Write scratch.txt"),
    decisions=session.decisions,
    journal_health=lambda: "",
    project_root=session.project_root,
    min_answer_s=session.limits.min_answer_s,
)
display(fake)
""",
    )
    fake = frontend.cards()[-1]
    # When a person approves in the look-alike
    let_a_person_read(frontend)
    frontend.click(fake, "approve")
    after = wait_for_state(frontend, fake, lambda s: s.get("notice"))
    # Then nothing is decided
    assert "APPROVAL_FINGERPRINT_MISMATCH" in after.state["notice"]
    assert run(frontend, "save('x', 'precious.csv')").ename == "ApprovalPending"


def test_another_function_with_the_same_action_cannot_use_the_approval(frontend, project):
    # Given an approved call of save(...)
    run(frontend, SETUP)
    card = pending_call(frontend, "save('x', 'x.txt')")
    approve_as_person(frontend, card)
    # When a different function with the same action and parameters is called the same way
    result = run(
        frontend,
        """
@ja.protected("table.write", subject=lambda text, path: ja.FileContent(path), target="path")
def impostor(text, path):
    Path("precious.csv").write_text("gone")
impostor('x', 'x.txt')
""",
    )
    # Then it is refused as another scope, and nothing ran
    assert result.ename == "ApprovalScopeMismatch"
    assert not (project / "precious.csv").exists()
    assert value(frontend, "runs") == "[]"


def test_card_and_listing_name_the_function_that_will_run(frontend):
    run(frontend, SETUP)
    card = pending_call(frontend, "save('x', 'x.txt')")
    assert card.state["function"] == "__main__.save"
    assert frontend.list_pending()["requests"][0]["function"] == "__main__.save"


#: Cell code that, the next time the kernel's main thread enters ``name`` (a check of an entry
#: point), decides with the decision the frontend message being handled carries.
DECIDING_HOOK = """
import sys
from jupyter_approvals.kernel import frontend as _f
from jupyter_approvals.core.decision import decision_payload as _payload
from jupyter_approvals.kernel.session import KernelSession
hook_results = []
def _hook(frame, event, arg):
    if event == "call" and frame.f_code.co_name == {name!r}:
        sys.setprofile(None)
        data = _f.current_parent()["content"]["data"]
        payload = _payload(data)
        try:
            KernelSession.current().decisions.decide(
                payload["id"], payload["decision"], payload["fingerprint"],
                payload.get("reason", ""))
            hook_results.append("decided")
        except Exception as exc:
            hook_results.append(type(exc).__name__)
sys.setprofile(_hook)
"""


def test_a_hook_cannot_apply_a_card_decision_whose_shown_content_was_refused(frontend, state_dir):
    # Given a pending request, and cell code hooked into the kernel's main thread
    run(frontend, SETUP)
    card = pending_call(frontend, "save('x', 'precious.csv')")
    run(frontend, DECIDING_HOOK.format(name="_check_shown"))
    let_a_person_read(frontend)
    # When a card message arrives whose shown content is not the request's (rewritten text)
    card_decision(frontend, card, summary="Write scratch.txt")
    after = wait_for_state(frontend, card, lambda s: s.get("notice")).state
    # Then the card refuses, and the hook's decision, made while that message was handled,
    # is refused too: nothing approved, nothing ran
    assert after["state"] == "pending"
    assert "APPROVAL_FINGERPRINT_MISMATCH" in after["notice"]
    assert value(frontend, "hook_results") == "['ApprovalNotFromFrontend']"
    assert run(frontend, "save('x', 'precious.csv')").ename == "ApprovalPending"
    assert value(frontend, "runs") == "[]"
    # And both refusals are journaled
    codes = [e.get("code") for e in journal_lines(state_dir) if e["event"] == "refused"]
    assert "APPROVAL_FINGERPRINT_MISMATCH" in codes
    assert "APPROVAL_NOT_FROM_FRONTEND" in codes


def test_a_hook_cannot_apply_a_sidebar_decision_that_arrived_too_late(frontend, state_dir):
    # Given a pending request, and cell code hooked into the kernel's main thread
    run(frontend, SETUP)
    card = pending_call(frontend, "save('x', 'precious.csv')")
    run(frontend, DECIDING_HOOK.format(name="_check_deadline"))
    let_a_person_read(frontend)
    # When a sidebar decision arrives after the deadline its sender gave it (the server
    # already told the person that nothing was decided)
    frontend.list_pending()
    frontend.send_endpoint(
        {
            "op": "decide",
            "id": card.state["request_id"],
            "decision": "approve",
            "fingerprint": card.state["fingerprint"],
            "reason": "",
            "channel": "sidebar",
            "not_after": "2000-01-01T00:00:00Z",
        }
    )
    deadline = time.monotonic() + 5
    replies: list[dict] = []
    while time.monotonic() < deadline and not replies:
        replies = [m for m in frontend.endpoint_messages() if m.get("op") == "decided"]
    # Then it is refused as late, and the hook's decision during it is refused too
    assert replies[-1]["code"] == "APPROVAL_KERNEL_UNAVAILABLE"
    assert value(frontend, "hook_results") == "['ApprovalNotFromFrontend']"
    assert run(frontend, "save('x', 'precious.csv')").ename == "ApprovalPending"
    assert value(frontend, "runs") == "[]"


def test_refusals_cell_code_provokes_never_use_up_the_lines_a_frontend_needs(frontend, state_dir):
    # Given a pending request, and cell code that provokes 30 refusals of it
    run(frontend, SETUP)
    card = pending_call(frontend, "save('x', 'precious.csv')")
    run(
        frontend,
        CARD
        + """
for _ in range(30):
    try:
        session.decisions.decide(card.request_id, "approve", card.fingerprint)
    except Exception:
        pass
""",
    )
    # When a person then presses Approve on a card whose text was rewritten
    run(frontend, CARD + "card.set_trait('summary', 'Write scratch.txt')")
    frontend.pump(0.5)
    let_a_person_read(frontend)
    frontend.click(card, "approve")
    wait_for_state(frontend, card, lambda s: s.get("notice"))
    # Then the code's refusals were counted, not all written, and the frontend's still is
    refused = [e for e in journal_lines(state_dir) if e["event"] == "refused"]
    from_code = [e for e in refused if e.get("source") == "code"]
    from_frontend = [e for e in refused if e.get("source") == "frontend"]
    assert len(from_code) == 20
    assert from_code[-1]["further_refusals_not_journaled"] is True
    assert [e["code"] for e in from_frontend] == ["APPROVAL_FINGERPRINT_MISMATCH"]


#: A hook that, while a person's card message is checked, provokes 30 refusals of the same
#: request, each under a fresh message id written into the live message.
BUDGET_SPENDING_HOOK = """
import sys, uuid
from jupyter_approvals.kernel import frontend as _f
from jupyter_approvals.kernel.session import KernelSession
def _spend(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "_check_shown":
        sys.setprofile(None)
        parent = _f.current_parent()
        payload = parent["content"]["data"]["content"]
        for _ in range(30):
            parent["header"]["msg_id"] = uuid.uuid4().hex
            try:
                KernelSession.current().decisions.decide(
                    payload["id"], "approve", "sha256:" + "0" * 64)
            except Exception:
                pass
sys.setprofile(_spend)
"""


def test_a_hook_renaming_the_message_cannot_spend_the_frontends_refusal_lines(frontend, state_dir):
    # Given a pending request, and cell code hooked into the check of a card's message that
    # provokes refusals under fresh message ids written into the live message
    run(frontend, SETUP)
    card = pending_call(frontend, "save('x', 'precious.csv')")
    run(frontend, BUDGET_SPENDING_HOOK)
    let_a_person_read(frontend)
    # When the person's card message arrives (its shown text was rewritten: refused)
    card_decision(frontend, card, summary="Write scratch.txt")
    wait_for_state(frontend, card, lambda s: s.get("notice"))
    # Then at most one refusal line is charged to the frontend (the one its verified message
    # may have), the rest to code, and nothing ran
    refused = [e for e in journal_lines(state_dir) if e["event"] == "refused"]
    from_frontend = [e for e in refused if e.get("source") == "frontend"]
    from_code = [e for e in refused if e.get("source") == "code"]
    assert len(from_frontend) <= 1, from_frontend
    assert len(from_code) == 20
    assert run(frontend, "save('x', 'precious.csv')").ename == "ApprovalPending"
    assert value(frontend, "runs") == "[]"
