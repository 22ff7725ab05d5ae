"""The journal read as requests (core.journal.requests): one row per request, whole, in the
order of each request's newest line, paged by cursor."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from jupyter_approvals.core.journal.reader import CursorInvalid
from jupyter_approvals.core.journal.requests import RequestFilter, read_requests


def stamp(second: float) -> str:
    """An ISO time ``second`` seconds after 10:00 on 2026-12-03 (UTC)."""
    whole = int(second)
    return (
        f"2026-12-03T{10 + whole // 3600:02d}:{whole // 60 % 60:02d}:{whole % 60:02d}."
        f"{int((second - whole) * 1000):03d}Z"
    )


def write(path: Path, lines: list[dict]) -> None:
    with path.open("a") as out:
        for line in lines:
            out.write(json.dumps({**line, "time": stamp(line["time"])}) + "\n")


def line(request_id: str | None, event: str, second: float, **extra) -> dict:
    found = {"event": event, "time": second, **extra}
    if request_id is not None:
        found["request_id"] = request_id
    return found


def every_row(path: Path, **kwargs) -> tuple[list[dict], int]:
    """Follow next_before to the last page; all rows, and how many pages there were."""
    rows: list[dict] = []
    before = None
    pages = 0
    while True:
        page = read_requests(path, before=before, **kwargs)
        pages += 1
        rows += page.rows
        if page.next_before is None:
            assert not page.has_more
            return rows, pages
        before = page.next_before


def test_interleaved_lines_make_one_row_per_request_in_order_of_their_newest_line(
    tmp_path: Path,
) -> None:
    # Given two requests whose lines interleave, then a third one opened and still pending
    path = tmp_path / "j.jsonl"
    write(
        path,
        [
            line("a", "requested", 0, summary="Overwrite a.csv", notebook_path="/p/n.ipynb"),
            line("b", "requested", 1, summary="Delete b.txt"),
            line("a", "relayed", 5, decision="approve", recorded_by="server"),
            line("a", "approved", 5.1, decided_by="ana", channel="sidebar", latency_ms=4200),
            line("b", "rejected", 8, decided_by="ana", channel="card", reason="not now"),
            line("a", "executed", 9),
            line("c", "requested", 12, summary="Run git push", agent="claude"),
        ],
    )
    # When the first page of requests is read
    page = read_requests(path)
    # Then there is a row per request, newest line first, each with its lines and outcome
    assert [(r["request_id"], r["outcome"]) for r in page.rows] == [
        ("c", "pending"),
        ("a", "executed"),
        ("b", "rejected"),
    ]
    _c, a, b = page.rows
    assert [e["event"] for e in a["events"]] == ["executed", "approved", "relayed", "requested"]
    assert (a["summary"], a["notebook_path"], a["decided_by"], a["channel"]) == (
        "Overwrite a.csv",
        "/p/n.ipynb",
        "ana",
        "sidebar",
    )
    assert (a["decision"], a["latency_ms"], a["complete"]) == ("approved", 4200, True)
    assert (b["decision"], b["reason"], a["started"], a["ended"]) == (
        "rejected",
        "not now",
        stamp(0),
        stamp(9),
    )
    assert page.rows[0]["agent"] == "claude"
    assert (page.has_more, page.next_before) == (False, None)


def test_a_line_about_no_request_is_a_row_of_its_own(tmp_path: Path) -> None:
    # Given an agent paused between two requests
    path = tmp_path / "j.jsonl"
    write(
        path,
        [
            line("a", "requested", 0),
            line(None, "agent_paused", 1, agent="claude", decided_by="ana"),
            line("b", "requested", 2),
        ],
    )
    # When read as requests, Then the pause is a row between them, whole
    rows = read_requests(path).rows
    assert [(r["request_id"], r["outcome"]) for r in rows] == [
        ("b", "pending"),
        (None, "agent_paused"),
        ("a", "pending"),
    ]
    assert rows[1]["complete"] is True


@pytest.mark.parametrize("limit", [1, 7, 50])
def test_pages_by_cursor_show_every_request_once_and_whole(tmp_path: Path, limit: int) -> None:
    # Given 120 requests, each opened, decided and run, their lines shuffled within minutes
    path = tmp_path / "j.jsonl"
    shuffle = random.Random(24)
    lines = []
    for n in range(120):
        start = n * 20 + shuffle.uniform(0, 5)
        lines += [
            line(f"r{n:03d}", "requested", start),
            line(f"r{n:03d}", "approved", start + shuffle.uniform(1, 90)),
            line(f"r{n:03d}", "executed", start + shuffle.uniform(91, 200)),
        ]
    lines.sort(key=lambda found: found["time"])
    write(path, lines)
    # When every page is read, each from the page before's cursor
    rows, pages = every_row(path, limit=limit)
    # Then each request came exactly once, with its three lines, in order of its newest line
    assert sorted(r["request_id"] for r in rows) == [f"r{n:03d}" for n in range(120)]
    assert all(
        [e["event"] for e in r["events"]] == ["executed", "approved", "requested"] for r in rows
    )
    ended = [r["ended"] for r in rows]
    assert ended == sorted(ended, reverse=True)
    assert pages == -(-120 // limit)


def test_filters_keep_rows_by_outcome_notebook_agent_and_text(tmp_path: Path) -> None:
    # Given requests of two notebooks and an agent, with different outcomes
    path = tmp_path / "j.jsonl"
    lines = []
    for n in range(30):
        rid = f"r{n:02d}"
        notebook = "/p/clean.ipynb" if n % 2 else "/p/report.ipynb"
        agent = {"agent": "claude"} if n % 3 == 0 else {}
        lines.append(
            line(
                rid,
                "requested",
                n * 10,
                summary=f"Overwrite part-{n}.csv",
                notebook_path=notebook,
                **agent,
            )
        )
        lines.append(line(rid, "rejected" if n % 5 == 0 else "approved", n * 10 + 2))
    write(path, lines)

    # When rows are read with each filter, page by page
    def ids(**keep) -> list[str]:
        rows, _ = every_row(path, limit=4, keep=RequestFilter(**keep))
        return [r["request_id"] for r in rows]

    # Then each keeps exactly the rows it names, newest first
    assert ids(outcome="rejected") == [f"r{n:02d}" for n in (25, 20, 15, 10, 5, 0)]
    assert ids(notebook_path="/p/clean.ipynb") == [f"r{n:02d}" for n in range(29, 0, -2)]
    assert ids(agent="claude") == [f"r{n:02d}" for n in range(27, -1, -3)]
    assert ids(search="PART-7.") == ["r07"]
    assert ids(outcome="rejected", agent="claude") == ["r15", "r00"]


def test_a_request_whose_lines_lie_further_apart_than_the_span_is_not_gathered(
    tmp_path: Path,
) -> None:
    # Given a request opened, and its loss written an hour later, with another one between
    path = tmp_path / "j.jsonl"
    write(
        path,
        [
            line("old", "requested", 0),
            line("mid", "requested", 1800),
            line("old", "lost", 3600),
        ],
    )
    # When read with a span of 10 minutes
    rows = read_requests(path, span_s=600).rows
    # Then the loss is a row that says it is not whole, and the opening line is not in it
    assert [(r["request_id"], r["outcome"], r["complete"]) for r in rows] == [
        ("old", "lost", False),
        ("mid", "pending", True),
        ("old", "pending", True),
    ]


def test_torn_lines_are_counted_and_a_bad_cursor_refused(tmp_path: Path) -> None:
    # Given a journal with a line that is not JSON
    path = tmp_path / "j.jsonl"
    write(path, [line("a", "requested", 0)])
    with path.open("a") as out:
        out.write("not json\n")
    write(path, [line("a", "approved", 2)])
    # When read as requests, Then the torn line is counted and the request is whole
    page = read_requests(path)
    assert (page.corrupt_lines, page.rows[0]["outcome"]) == (1, "approved")
    # And a cursor inside a line is refused
    with pytest.raises(CursorInvalid):
        read_requests(path, before=3)


def test_a_missing_journal_is_an_empty_page(tmp_path: Path) -> None:
    assert read_requests(tmp_path / "none.jsonl").rows == []
