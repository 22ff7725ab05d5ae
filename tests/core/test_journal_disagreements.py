"""Where a kernel's record of a request and the server's record of the decision it relayed
disagree: each kind found from journal lines alone, and nothing found where they agree."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from jupyter_approvals.core.journal.disagreements import find_disagreements

T0 = 1_800_000_000.0
FP = "sha256:" + "a" * 64
OTHER_FP = "sha256:" + "b" * 64


def at(seconds: float) -> str:
    return datetime.fromtimestamp(T0 + seconds, tz=timezone.utc).isoformat().replace("+00:00", "Z")


def line(event: str, seconds: float, **fields: object) -> dict[str, object]:
    return {"event": event, "time": at(seconds), "request_id": "r1", "kernel_id": "k1", **fields}


def relayed(decision: str, seconds: float = 1, **fields: object) -> dict[str, object]:
    shown = {"shown_summary": "Write sales.csv", "shown_fingerprint": FP}
    return line(
        "relayed", seconds, decision=decision, recorded_by="server", fingerprint=FP,
        **{**shown, **fields},
    )  # fmt: skip


def requested(**fields: object) -> dict[str, object]:
    return line("requested", 0, summary="Write sales.csv", fingerprint=FP, **fields)


def approved(**fields: object) -> dict[str, object]:
    return line("approved", 2, **{"summary": "Write sales.csv", "fingerprint": FP, **fields})


def kinds(entries: list[dict[str, object]], now: float = 60) -> list[str]:
    return [d.kind for d in find_disagreements(entries, T0 + now, 600)]


def test_records_that_agree_show_nothing():
    # Given a request approved as relayed, and run
    entries = [requested(), relayed("approve"), approved(), line("executed", 3)]
    # Then nothing disagrees, also long after
    assert kinds(entries, now=10_000) == []


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        (
            [relayed("approve", request_id="r0"), requested(), approved(), line("executed", 3)],
            ["not_relayed"],
        ),
        (
            [requested(), relayed("reject"), approved(), line("executed", 3)],
            ["not_relayed", "turned_around"],
        ),
        ([requested(), relayed("approve"), line("rejected", 2)], ["turned_around"]),
        (
            [requested(), relayed("approve"), approved(summary="Write scratch.txt")],
            ["summary_rewritten"],
        ),
        (
            [requested(), relayed("approve"), approved(fingerprint=OTHER_FP)],
            ["fingerprint_differs"],
        ),
    ],
    ids=["approved-never-relayed", "reject-recorded-as-approval", "approval-recorded-as-reject",
         "summary-rewritten", "other-content-approved"],
)  # fmt: skip
def test_each_kind_of_disagreement_is_found(entries, expected):
    assert kinds(entries) == expected


def test_an_approval_without_outcome_is_unknown_only_after_its_time_is_over():
    # Given an approval relayed and recorded, and nothing after it
    entries = [requested(), relayed("approve"), approved()]
    # Then within its ten minutes nothing is wrong; after them, its outcome is unknown
    assert kinds(entries, now=300) == []
    assert kinds(entries, now=700) == ["outcome_unknown"]
    # And an expiry, a loss or a refusal is an outcome
    for outcome in ("expired", "lost", "refused"):
        assert kinds([*entries, line(outcome, 650)], now=700) == []


def test_requests_the_server_holds_itself_are_not_compared():
    # Given an agent's held code approved at the server (no kernel record, no relay)
    entries = [
        line("requested", 0, held_at="server"),
        line("approved", 2, held_at="server", channel="sidebar"),
        line("executed", 3, held_at="server"),
    ]
    assert kinds(entries, now=10_000) == []


def test_approvals_in_kernels_the_server_never_relayed_to_are_not_judged():
    # Given a journal of a kernel the server relayed nothing to (another frontend, an older
    # journal), and one it relayed to in another kernel
    entries = [
        requested(kernel_id="elsewhere"),
        approved(kernel_id="elsewhere"),
        line("executed", 3, kernel_id="elsewhere"),
        relayed("approve", request_id="r0"),
    ]
    # Then the approval of the first is not taken for one made behind the server's back
    assert kinds(entries) == []


def test_a_relayed_decision_the_kernel_never_recorded_is_found_once_its_time_is_over():
    # Given a decision the server relayed, and no line of the kernel's after it
    entries = [requested(), relayed("reject")]
    # Then within the request's time nothing is said; after it, the missing line is named
    assert kinds(entries, now=300) == []
    assert kinds(entries, now=700) == ["not_recorded"]
    # And a refusal recorded by the kernel is an answer
    assert kinds([*entries, line("refused", 2, code="APPROVAL_NOT_FROM_FRONTEND")], now=700) == []


def test_an_approval_a_stopping_server_recorded_lost_has_a_known_outcome():
    # Given an approval the kernel recorded, and the server's line that it was lost at stop
    entries = [
        {"event": "approved", "request_id": "r1", "kernel_id": "k", "time": "2026-12-01T10:00:00Z"},
        {
            "event": "lost",
            "request_id": "r1",
            "kernel_id": "k",
            "recorded_by": "server",
            "time": "2026-12-01T10:00:05Z",
        },
    ]
    # When the records are compared long after the approval's time
    found = find_disagreements(entries, now=2_000_000_000.0, approval_ttl_s=600)
    # Then nothing is unknown about it
    assert found == []
