"""The store's promises, on the pure core with a manual clock (no kernel)."""

from __future__ import annotations

import dataclasses
import threading
import tracemalloc

import pytest

from jupyter_approvals.core import errors
from jupyter_approvals.core.lease import require_lease, run_approved
from jupyter_approvals.core.model import Approval, Lease, Status
from jupyter_approvals.core.policy import Limits, ManualClock
from jupyter_approvals.core.store.approval_store import ApprovalStore

FP_A = "sha256:" + "a" * 64
FP_B = "sha256:" + "b" * 64


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def store(clock: ManualClock) -> ApprovalStore:
    return ApprovalStore(Limits(), clock)


def open_and_show(store: ApprovalStore, action: str = "table.write", fp: str = FP_A, **kw):
    info, created = store.open_request(
        action=action, fingerprint=fp, summary="Overwrite sales.parquet", preview="3 rows", **kw
    )
    store.mark_shown(info.id)
    return info, created


def approve(store: ApprovalStore, clock: ManualClock, request_id: str, fp: str = FP_A):
    clock.advance(1.5)
    return store.decide(request_id, "approve", fp, channel="card")


def test_approved_call_runs_once_then_needs_a_new_approval(store, clock):
    # Given a request approved by a person after 1.5 s
    info, _ = open_and_show(store)
    approve(store, clock, info.id)
    # When the same call claims it twice
    first = store.claim("table.write", FP_A)
    second = store.claim("table.write", FP_A)
    # Then the first gets a lease and the second finds nothing to run
    assert isinstance(first, Lease)
    assert second is None
    assert store.get(info.id).status is Status.RUNNING


def test_identical_pending_calls_share_one_request(store):
    # Given a pending request
    first, created = open_and_show(store)
    # When the identical call is opened 1,000 times
    again = [
        store.open_request(action="table.write", fingerprint=FP_A, summary="s", preview="p")
        for _ in range(1000)
    ]
    # Then there is still one request
    assert created is True
    assert {info.id for info, _ in again} == {first.id}
    assert not any(created for _, created in again)
    assert len(store.pending()) == 1


def test_distinct_calls_are_capped_and_memory_stays_bounded(store):
    # Given a store with the default cap of 20 pending
    tracemalloc.start()
    refused = 0
    # When 10,000 distinct calls ask for approval
    for i in range(10_000):
        try:
            store.open_request(
                action="x.y", fingerprint=f"sha256:{i:064x}", summary="s", preview="p" * 100
            )
        except errors.ApprovalTooManyPending as exc:
            refused += 1
            last = exc
        if i == 1000:
            early, _ = tracemalloc.get_traced_memory()
    late, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # Then 20 are pending, the rest were refused with the code, and memory did not grow
    assert len(store.pending()) == 20
    assert refused == 10_000 - 20
    assert last.code == "APPROVAL_TOO_MANY_PENDING"
    assert last.details == {"pending": 20, "limit": 20}
    assert late - early < 200_000


def test_timed_out_requests_are_swept_to_make_room(store, clock):
    # Given a full store whose requests are old
    for i in range(20):
        store.open_request(action="x.y", fingerprint=f"sha256:{i:064x}", summary="", preview="")
    clock.advance(601)
    # When a new request comes
    info, created = store.open_request(action="x.y", fingerprint=FP_A, summary="", preview="")
    # Then the stale ones timed out and the new one is pending
    assert created
    assert [p.id for p in store.pending()] == [info.id]


def test_fingerprint_change_after_approval_refuses_and_spends_the_approval(store, clock):
    # Given an approved request for content A
    info, _ = open_and_show(store)
    approve(store, clock, info.id)
    # When the call arrives with content B
    with pytest.raises(errors.ApprovalFingerprintMismatch) as caught:
        store.claim("table.write", FP_B)
    # Then it is refused, nothing is leased, and the approval is spent
    assert caught.value.details["approved_fingerprint"] == FP_A
    assert caught.value.details["fingerprint"] == FP_B
    assert store.get(info.id).status is Status.REFUSED
    assert store.claim("table.write", FP_A) is None


def test_other_targets_do_not_spend_an_approval(store, clock):
    # Given an approval for target a.csv
    info, _ = open_and_show(store, slot="table.write:a.csv")
    approve(store, clock, info.id)
    # When a call for another target with other content arrives
    other = store.claim("table.write", FP_B, slot="table.write:b.csv")
    # Then it is simply new, and the approval for a.csv still runs
    assert other is None
    assert isinstance(store.claim("table.write", FP_A, slot="table.write:a.csv"), Lease)


def test_approval_for_another_action_is_a_scope_mismatch(store, clock):
    # Given git.commit approved for a subject
    info, _ = open_and_show(store, action="git.commit")
    approve(store, clock, info.id)
    # When git.push claims the same subject digest
    with pytest.raises(errors.ApprovalScopeMismatch) as caught:
        store.claim("git.push", FP_A)
    # Then it is refused naming both actions
    assert caught.value.details["approved_action"] == "git.commit"
    assert caught.value.details["action"] == "git.push"


def test_redeem_checks_in_order_issued_action_fingerprint_expiry_use(store, clock):
    # Given an approval issued by the store
    info, _ = open_and_show(store)
    approve(store, clock, info.id)
    approval = store.approval(info.id)
    assert isinstance(approval, Approval)
    # When look-alikes are offered: a dict, a copy with the same fields, another store's
    lookalike = dataclasses.replace(approval)
    for fake in (
        {"request_id": info.id, "action": "table.write", "fingerprint": FP_A},
        lookalike,
        True,
        "approved",
    ):
        with pytest.raises(errors.ApprovalNotIssued):
            store.redeem(fake, "table.write", FP_A)
    # Then only the very object redeems, once, for its action and content
    with pytest.raises(errors.ApprovalScopeMismatch):
        store.redeem(approval, "table.delete", FP_B)
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        store.redeem(approval, "table.write", FP_B)
    lease = store.redeem(approval, "table.write", FP_A)
    assert lease.action == "table.write"
    with pytest.raises(errors.ApprovalAlreadyUsed):
        store.redeem(approval, "table.write", FP_A)


def test_rejection_reason_reaches_the_next_call_once(store, clock):
    # Given a rejected request with a reason
    info, _ = open_and_show(store)
    clock.advance(2)
    store.decide(info.id, "reject", FP_A, reason="wrong file")
    # When the same call comes back
    with pytest.raises(errors.ApprovalRejected) as caught:
        store.claim("table.write", FP_A)
    # Then it carries the reason, and the call after that is simply new
    assert caught.value.details["reason"] == "wrong file"
    assert "wrong file" in caught.value.message
    assert store.claim("table.write", FP_A) is None


def test_answer_within_a_second_is_auto_answered(store, clock):
    # Given a request shown just now
    info, _ = open_and_show(store)
    clock.advance(0.4)
    # When someone approves 400 ms later
    with pytest.raises(errors.ApprovalAutoAnswered) as caught:
        store.decide(info.id, "approve", FP_A)
    # Then it counts as no answer and nothing can run
    assert caught.value.details["latency_ms"] == 400
    assert store.get(info.id).status is Status.AUTO_ANSWERED
    with pytest.raises(errors.ApprovalAutoAnswered):
        store.claim("table.write", FP_A)


def test_fast_rejections_are_auto_answered_too(store, clock):
    info, _ = open_and_show(store)
    with pytest.raises(errors.ApprovalAutoAnswered):
        store.decide(info.id, "reject", FP_A)


def test_pending_past_timeout_ends_timed_out(store, clock):
    # Given a request nobody answers
    info, _ = open_and_show(store)
    # When 600 s pass
    clock.advance(600)
    # Then the call learns it timed out, and a late decision is refused
    with pytest.raises(errors.ApprovalTimedOut):
        store.claim("table.write", FP_A)
    with pytest.raises(errors.ApprovalTimedOut):
        store.decide(info.id, "approve", FP_A)


def test_approval_unused_past_ttl_expires(store, clock):
    # Given an approval
    info, _ = open_and_show(store)
    approve(store, clock, info.id)
    approval = store.approval(info.id)
    # When 600 s pass before the call
    clock.advance(600)
    # Then the call is told it expired and the approval no longer redeems
    with pytest.raises(errors.ApprovalExpired):
        store.claim("table.write", FP_A)
    with pytest.raises(errors.ApprovalExpired):
        store.redeem(approval, "table.write", FP_A)


def test_stricter_configuration_shortens_the_timeout(clock):
    store = ApprovalStore(Limits(request_timeout_s=5), clock)
    info, _ = open_and_show(store)
    clock.advance(5)
    assert store.get(info.id).status is Status.TIMED_OUT


def test_decision_must_echo_the_displayed_fingerprint(store, clock):
    # Given a pending request for content A
    info, _ = open_and_show(store)
    clock.advance(2)
    # When the UI sends a decision naming content B
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        store.decide(info.id, "approve", FP_B)
    # Then it stays pending
    assert store.get(info.id).status is Status.PENDING


@pytest.mark.parametrize(
    ("decision", "fingerprint", "reason", "code"),
    [
        ("yes", FP_A, "", "APPROVAL_MALFORMED_DECISION"),
        (True, FP_A, "", "APPROVAL_MALFORMED_DECISION"),
        ("approve", "sha256:short", "", "APPROVAL_MALFORMED_DECISION"),
        ("approve", None, "", "APPROVAL_MALFORMED_DECISION"),
        ("reject", FP_A, 42, "APPROVAL_MALFORMED_DECISION"),
        ("reject", FP_A, "x" * 2001, "APPROVAL_TOO_LARGE"),
    ],
)
def test_malformed_decisions_decide_nothing(store, clock, decision, fingerprint, reason, code):
    info, _ = open_and_show(store)
    clock.advance(2)
    with pytest.raises(errors.ApprovalError) as caught:
        store.decide(info.id, decision, fingerprint, reason)
    assert caught.value.code == code
    assert store.get(info.id).status is Status.PENDING


def test_one_decision_per_request(store, clock):
    info, _ = open_and_show(store)
    approve(store, clock, info.id)
    with pytest.raises(errors.ApprovalAlreadyDecided):
        store.decide(info.id, "reject", FP_A)


def test_unknown_request(store):
    with pytest.raises(errors.ApprovalUnknownRequest):
        store.decide("0123456789abcdef", "approve", FP_A)


def test_withdrawn_request_cannot_be_approved(store, clock):
    # Given a request the caller withdrew
    info, _ = open_and_show(store)
    store.withdraw(info.id)
    clock.advance(2)
    # When a person approves it afterwards
    with pytest.raises(errors.ApprovalWithdrawn):
        store.decide(info.id, "approve", FP_A)
    # Then nothing runs
    assert store.claim("table.write", FP_A) is None


def test_dismissed_card_is_reported_to_the_caller(store, clock):
    info, _ = open_and_show(store)
    store.dismiss(info.id)
    with pytest.raises(errors.ApprovalDismissed):
        store.claim("table.write", FP_A)


def test_concurrent_claims_consume_an_approval_exactly_once(store, clock):
    # Given one approval and 16 threads racing to use it
    info, _ = open_and_show(store)
    approve(store, clock, info.id)
    leases = []
    barrier = threading.Barrier(16)

    def race():
        barrier.wait()
        outcome = store.claim("table.write", FP_A)
        if isinstance(outcome, Lease):
            leases.append(outcome)

    threads = [threading.Thread(target=race) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Then exactly one got a lease
    assert len(leases) == 1


def test_events_tell_the_whole_story(store, clock):
    # Given a listener
    seen = []
    store.subscribe(lambda event, info, fields: seen.append((event, info.status.value)))
    # When a request is approved and run
    info, _ = open_and_show(store)
    approve(store, clock, info.id)
    lease = store.claim("table.write", FP_A)
    run_approved(lease, lambda: None)
    store.finish(lease)
    # Then requested, approved and executed were announced in order
    assert seen == [("requested", "pending"), ("approved", "approved"), ("executed", "executed")]


def test_writer_outside_an_approved_run_is_refused():
    # Given a low-level writer guarded by the lease
    def write():
        require_lease("file.write")
        return "written"

    # When it is called directly
    with pytest.raises(errors.ApprovalRequired) as caught:
        write()
    # Then it refuses, naming the action it needs
    assert caught.value.details["actions"] == ["file.write"]


def test_writer_inside_an_approved_run_of_its_action_runs_nested(store, clock):
    # Given an approved run of file.write
    info, _ = open_and_show(store, action="file.write")
    approve(store, clock, info.id)
    lease = store.claim("file.write", FP_A)

    def inner():
        return require_lease("file.write").request_id

    def outer():
        return inner()

    # When the writer is reached through nested calls
    # Then it sees the lease; another action's writer does not
    assert run_approved(lease, outer) == info.id
    with pytest.raises(errors.ApprovalRequired):
        require_lease("file.write")


def test_a_lease_runs_once_and_cannot_be_forged(store, clock):
    info, _ = open_and_show(store)
    approve(store, clock, info.id)
    lease = store.claim("table.write", FP_A)
    run_approved(lease, lambda: None)
    with pytest.raises(errors.ApprovalRequired):
        run_approved(lease, lambda: None)
    with pytest.raises(errors.ApprovalRequired):
        run_approved(Lease(info.id, "table.write", FP_A), lambda: None)


def test_characters_that_hide_text_are_shown_as_markers(store):
    # Given a preview whose file name overwrites its own line, reverses text, splits lines,
    # smuggles invisible tag characters and carries a lone surrogate (a name that is not UTF-8)
    preview = (
        "delete:\n\tdata/a\r  notes.txt\x1b[K \u202etxt.exe\u2028second line"
        "\U000e0041\u2060 caf\udce9.csv \u27e6U+202E\u27e7"
    )
    # When a request is opened with it, and with a summary holding a newline
    info, _ = store.open_request(
        action="file.delete", fingerprint=FP_A, summary="Delete\nall", preview=preview
    )
    # Then nothing in the card can hide or fake a line, and a marker-looking text in the
    # preview itself cannot pass for an escaped character: only newline and tab stay
    assert info.preview == (
        "delete:\n\tdata/a⟦U+000D⟧  notes.txt⟦U+001B⟧[K ⟦U+202E⟧txt.exe⟦U+2028⟧second line"
        "⟦U+E0041⟧⟦U+2060⟧ caf⟦U+DCE9⟧.csv ⟦U+27E6⟧U+202E\u27e7"
    )
    assert info.summary == "Delete⟦U+000A⟧all"
    # And the preview can be sent to a frontend as UTF-8
    info.preview.encode("utf-8")


def test_rejecting_everything_live_ends_pending_and_unused_approvals_with_the_reason(store, clock):
    # Given one pending request and one approved but unused
    pending, _ = open_and_show(store, fp=FP_A)
    approved, _ = open_and_show(store, fp=FP_B)
    approve(store, clock, approved.id, FP_B)
    events: list[tuple[str, str]] = []
    store.subscribe(lambda event, info, fields: events.append((event, info.id)))
    # When a person rejects all of it at once (pausing the agent they belong to)
    ended = store.reject_live("agent bot was paused", channel="pause")
    # Then both ended rejected with that reason, and neither can run
    assert sorted(info.id for info in ended) == sorted([pending.id, approved.id])
    assert sorted(events) == sorted([("rejected", pending.id), ("rejected", approved.id)])
    assert store.live() == []
    with pytest.raises(errors.ApprovalRejected) as caught:
        store.claim("table.write", FP_B)
    assert "paused" in caught.value.details["reason"]


def test_a_forked_child_cannot_use_an_approval_and_its_copy_of_a_run_is_no_run(store, clock):
    # Given a listener, an approved request and a run in progress of another one
    seen = []
    store.subscribe(lambda event, info, fields: seen.append((event, fields.get("code"))))
    info, _ = open_and_show(store)
    approve(store, clock, info.id)
    other, _ = open_and_show(store, fp=FP_B)
    approve(store, clock, other.id, FP_B)
    running = store.claim("table.write", FP_B)
    assert isinstance(running, Lease)
    # When the process forks and the child claims the approval, then ends its copy of the run
    store.forked_child()
    with pytest.raises(errors.ApprovalForkedProcess):
        store.claim("table.write", FP_A)
    store.finish(running)
    # Then the claim was refused and the run ended as refused, both announced with the code
    forked = errors.ApprovalForkedProcess.code
    assert seen[-2:] == [("refused", forked), ("refused", forked)]
    assert store.get(other.id).status is Status.REFUSED
