"""Property-based fuzzing, in this process, of the two ways a decision reaches a kernel: the
``jupyter_approvals`` comm endpoint and the approval card's widget messages
(docs/protocol.md 3 and 4; docs/decisions/0006).

Each example starts from a valid decision (right request id, right fingerprint) and changes
some of it: who delivers it (:data:`PROVENANCES`), when (the session's manual clock, and
``not_after`` in many forms), field types, extra and missing fields, huge values, unicode. The
properties: no handler raises or hangs; every message gets a coded answer; a request ends
approved or rejected only from a decision the contract accepts (and such a decision is
applied); a request that was not approved never runs; every journal line is whole JSON.

10,000 examples in all; deterministic (derandomized, no example database).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jupyter_approvals as ja
from jupyter_approvals.core.project import make_git_top_level
from tests.security.fuzz_support import (
    DELAYS,
    REFUSAL_CODES,
    UNDECIDED,
    InProcessKernel,
    Mutation,
    build,
    journal_entries,
    json_values,
    mutations,
    scaled_examples,
    scratch_dir,
    verdict,
)

# Thousands of examples each: under a parallel run on two cores one property can take minutes.
pytestmark = pytest.mark.timeout(900)

#: Examples per property; their sum is the 10,000 of issue 11.
ENDPOINT_DECISIONS = 4000
CARD_DECISIONS = 3500
ENDPOINT_ANYTHING = 1500
CARD_ANYTHING = 1000


def fuzz_settings(examples: int) -> settings:
    """Deterministic and quiet: the same examples on every run, nothing written to the tree.
    Examples are generated large on purpose (huge values), hence the size health check."""
    return settings(
        max_examples=scaled_examples(examples),
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


@pytest.fixture
def in_process(tmp_path: Path) -> Iterator[InProcessKernel]:
    """One kernel session for all examples of a test, as a long-lived kernel is: a project (a
    git top level) and a state directory outside it; every example appends to its journal."""
    with scratch_dir(tmp_path) as scratch:
        project = scratch / "project"
        make_git_top_level(project)
        with InProcessKernel(project, scratch / "state") as session:
            yield session


def assert_coded(reply: dict) -> None:
    """A reply of the endpoint: ``decided`` (ok, or a refusal code) or ``error``."""
    assert reply.get("op") in ("decided", "error", "pending"), reply
    if reply["op"] == "pending":
        assert isinstance(reply.get("requests"), list)
    elif reply["op"] == "error":
        assert reply["code"] in ("APPROVAL_MALFORMED_MESSAGE", "APPROVAL_TOO_LARGE"), reply
        assert reply["ok"] is False
    elif reply["ok"] is True:
        assert reply["code"] is None, reply
    else:
        assert reply["ok"] is False, reply
        assert reply["code"] in REFUSAL_CODES, reply


def check_outcome(kernel: InProcessKernel, m: Mutation, message: dict, targets, at, card_of=None):
    """Each request ends decided exactly when the contract says the message (delivered at
    ``at`` on the session's clock) decides it, and a request that was not approved does not
    run when its call is made again."""
    decided = []
    for target in targets:
        elapsed = at - target.shown_at
        allowed = verdict(m, message, target, elapsed, card_of)
        status = kernel.status(target.request_id)
        answer = message.get("decision")
        expected = {"approve": "approved", "reject": "rejected"}.get(str(answer), "?")
        if allowed == "never":
            assert status in UNDECIDED, (status, m, message)
        elif allowed == "decides":
            assert status == expected, (status, m, message)
        else:
            assert status in UNDECIDED | {expected}, (status, m, message)
        if status in ("approved", "rejected"):
            decided.append((target.request_id, status))
        if status not in ("approved", "pending"):
            # Then the call, made again with the same arguments, does not run
            with pytest.raises(ja.ApprovalError):
                kernel.retry(target)
    assert len(decided) <= 1, decided
    return decided


def test_mutated_endpoint_decisions_never_decide_for_a_person(in_process):
    """Given two pending requests and a frontend's comm on the endpoint,
    when a mutated decision arrives by some provenance after some delay,
    then the endpoint answers it with a code, and only a decision the contract accepts
    decides (the one it names); the journal stays whole JSON."""
    kernel = in_process
    endpoint = kernel.open_endpoint()
    approved: list[str] = []

    @fuzz_settings(ENDPOINT_DECISIONS)
    @given(m=mutations())
    def one(m: Mutation) -> None:
        target, other = kernel.ask(), kernel.bystander()
        kernel.clock.advance(DELAYS[m.delay])
        message = build(m, target, other)
        since, at = len(kernel.sent), kernel.clock.monotonic()
        kernel.deliver(endpoint, message, m.provenance, other_comm=endpoint)
        answers = [r for r in kernel.replies(endpoint, since) if r.get("op") != "changed"]
        assert len(answers) == (2 if m.provenance == "replay" else 1), answers
        for answer in answers:
            assert_coded(answer)
        if m.provenance == "replay":
            assert answers[1].get("ok") is not True, answers
        decided = check_outcome(kernel, m, message, [target, other], at)
        approved.extend(rid for rid, status in decided if status == "approved")
        kernel.end_live()

    one()
    entries = journal_entries(kernel.state_dir)
    assert sorted(e["request_id"] for e in entries if e["event"] == "approved") == sorted(approved)
    assert approved, "no example made a genuine approval: the fuzzing is not reaching the store"


def test_mutated_card_decisions_never_decide_for_a_person(in_process):
    """Given two pending requests with their cards,
    when a card (its own, or the other request's) receives a mutated decision (the shown
    content changed or missing too) by some provenance after some delay,
    then the card answers with a refusal code in its notice or a new state, and only a
    decision the contract accepts decides; the journal stays whole JSON."""
    kernel = in_process
    endpoint = kernel.open_endpoint()
    approved: list[str] = []

    @fuzz_settings(CARD_DECISIONS)
    @given(m=mutations(card=True))
    def one(m: Mutation) -> None:
        target, other = kernel.ask(), kernel.bystander()
        kernel.clock.advance(DELAYS[m.delay])
        message = build(m, target, other, card=True)
        receiver = other if m.wrong_card else target
        card = kernel.card(receiver.request_id)
        card.notice = ""  # the bystander's card may show an earlier example's refusal
        at = kernel.clock.monotonic()
        kernel.deliver(
            card.comm.comm_id,
            {"method": "custom", "content": message},
            m.provenance,
            other_comm=endpoint,
        )
        answered = card.state != "pending" or card.notice.split(":")[0] in REFUSAL_CODES
        assert answered, (card.state, card.notice, message)
        decided = check_outcome(kernel, m, message, [target, other], at, receiver.request_id)
        approved.extend(rid for rid, status in decided if status == "approved")
        kernel.end_live()

    one()
    entries = journal_entries(kernel.state_dir)
    assert sorted(e["request_id"] for e in entries if e["event"] == "approved") == sorted(approved)
    assert approved, "no example made a genuine approval: the fuzzing is not reaching the store"


def test_any_message_on_the_endpoint_gets_one_coded_answer(in_process):
    """Given a pending request and a frontend's comm on the endpoint,
    when the frontend sends any JSON value (or a list with any notebook_path),
    then exactly one coded answer comes back and the request is still pending."""
    kernel = in_process
    endpoint = kernel.open_endpoint()
    anything = st.one_of(
        json_values,
        st.dictionaries(st.text(max_size=6), json_values, max_size=4).map(
            lambda d: {**d, "op": "decide"}
        ),
        json_values.map(lambda path: {"op": "list", "notebook_path": path}),
        st.text(max_size=2000).map(lambda path: {"op": "list", "notebook_path": path}),
    )

    @fuzz_settings(ENDPOINT_ANYTHING)
    @given(data=anything)
    def one(data: object) -> None:
        target = kernel.ask()
        kernel.clock.advance(2)
        since = len(kernel.sent)
        kernel.deliver(endpoint, data)
        answers = [r for r in kernel.replies(endpoint, since) if r.get("op") != "changed"]
        assert len(answers) == 1, (data, answers)
        assert_coded(answers[0])
        assert kernel.status(target.request_id) == "pending"
        kernel.end_live()

    one()
    journal_entries(kernel.state_dir)


def test_any_custom_message_to_a_card_is_answered_and_decides_nothing(in_process):
    """Given a pending request's card,
    when the card receives any JSON value as a widget custom message,
    then the card answers (a coded notice, or the request dismissed for ``dismiss``) and
    nothing is approved or rejected."""
    kernel = in_process
    anything = st.one_of(
        json_values,
        st.dictionaries(st.text(max_size=6), json_values, max_size=4),
        st.dictionaries(st.text(max_size=6), json_values, max_size=3).map(
            lambda d: {**d, "op": "decide"}
        ),
        st.sampled_from(["dismiss", "Dismiss", "approve", "list"]).map(lambda op: {"op": op}),
    )

    @fuzz_settings(CARD_ANYTHING)
    @given(content=anything)
    def one(content: object) -> None:
        target = kernel.ask()
        kernel.clock.advance(2)
        card = kernel.card(target.request_id)
        kernel.deliver(card.comm.comm_id, {"method": "custom", "content": content})
        status = kernel.status(target.request_id)
        if isinstance(content, dict) and content.get("op") == "dismiss":
            assert status == "dismissed"
        else:
            assert status == "pending", (status, content)
            assert card.notice.split(":")[0] in REFUSAL_CODES, (card.notice, content)
        kernel.end_live()

    one()
    journal_entries(kernel.state_dir)


def test_a_message_to_the_marker_comm_gets_a_coded_answer(in_process):
    """Given a pending request and the endpoint's marker comm (listed by comm_info_request),
    when a frontend sends a decision to that comm,
    then it gets a coded answer, and nothing is decided."""
    kernel = in_process
    target = kernel.ask()
    kernel.clock.advance(2)
    [marker] = [cid for cid in kernel.manager.comms if cid.startswith("jupyter_approvals-here-")]
    message = {"op": "decide", "id": target.request_id, "decision": "approve"}
    kernel.deliver(marker, {**message, "fingerprint": target.fingerprint, "reason": ""})
    assert kernel.status(target.request_id) == "pending"
    assert [r for r in kernel.replies(marker) if r.get("op") in ("decided", "error")]
