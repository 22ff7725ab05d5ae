"""``GET journal`` pages (docs/protocol.md 6.3): read by cursor, off the event loop, for
any place a notebook can be, saved or not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tornado.httpclient import HTTPClientError

from jupyter_approvals.core.project import journal_path
from tests.server.test_rest import API, get_json


def write_journal(path: Path, count: int, start: int = 0, second: int = 0) -> None:
    """Append ``count`` entries numbered from ``start``, one second apart from ``second``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as journal:
        for n in range(start, start + count):
            moment = second + n
            journal.write(
                json.dumps(
                    {
                        "event": "approved" if n % 3 == 0 else "requested",
                        "n": n,
                        "time": f"2026-12-03T{moment // 3600:02d}:{moment // 60 % 60:02d}:"
                        f"{moment % 60:02d}.000Z",
                        "request_id": f"{n:016x}",
                    }
                )
                + "\n"
            )


async def every_page(jp_fetch, **params) -> tuple[list[dict], int]:
    """Follow next_before from the newest page to the last; the entries and the page count."""
    seen: list[dict] = []
    pages = 0
    before = None
    while True:
        query = {**params, **({"before": before} if before else {})}
        page = await get_json(jp_fetch, "journal", params=query)
        pages += 1
        seen += page["entries"]
        before = page["next_before"]
        assert (before is None) == (page["has_more"] is False)
        if before is None:
            return seen, pages


async def test_every_page_is_read_by_cursor_once(jp_fetch, jp_root_dir, state_dir):
    # Given the project's journal with 450 entries
    write_journal(journal_path(Path(jp_root_dir), state_dir), 450)
    # When the History follows each page's next_before from the newest page
    seen, pages = await every_page(jp_fetch, limit="100")
    # Then it saw every entry once, newest first, in five pages
    assert [entry["n"] for entry in seen] == list(range(449, -1, -1))
    assert pages == 5


async def test_a_filtered_journal_is_paged_by_cursor_too(jp_fetch, jp_root_dir, state_dir):
    # Given a journal where one entry in three is an approval
    write_journal(journal_path(Path(jp_root_dir), state_dir), 300)
    # When only approvals are paged through
    seen, _ = await every_page(jp_fetch, limit="30", outcome="approved")
    # Then each approval came once, and nothing else
    assert [entry["n"] for entry in seen] == list(range(297, -1, -3))


async def test_entries_appended_meanwhile_do_not_shift_the_older_pages(
    jp_fetch, jp_root_dir, state_dir
):
    # Given a person reading the first page of a journal
    path = journal_path(Path(jp_root_dir), state_dir)
    write_journal(path, 100)
    first = await get_json(jp_fetch, "journal", params={"limit": "40"})
    # When 25 entries are appended before they ask for the next page
    write_journal(path, 25, start=100)
    second = await get_json(
        jp_fetch, "journal", params={"limit": "40", "before": first["next_before"]}
    )
    # Then the next page continues where the first ended, no entry repeated or skipped
    assert [e["n"] for e in first["entries"]] == list(range(99, 59, -1))
    assert [e["n"] for e in second["entries"]] == list(range(59, 19, -1))


async def test_a_kernels_journal_elsewhere_is_paged_with_the_projects(
    jp_fetch, jp_root_dir, state_dir, tmp_path, approvals, monkeypatch
):
    # Given the project's journal and one a kernel kept elsewhere, entries interleaved in time
    path = journal_path(Path(jp_root_dir), state_dir)
    elsewhere = tmp_path / "moved" / "decisions" / path.name
    write_journal(path, 60, start=0, second=0)
    write_journal(elsewhere, 60, start=1000, second=-999)
    # (as the server learns of it when that kernel lists its journal's path)
    monkeypatch.setattr(approvals.parts.links, "journals_elsewhere", lambda: {str(elsewhere)})
    # When the History pages through both
    seen, pages = await every_page(jp_fetch, limit="25")
    # Then every entry of both came once, newest first by time, each naming its journal
    assert (len(seen), pages) == (120, 5)
    times = [entry["time"] for entry in seen]
    assert times == sorted(times, reverse=True)
    assert sorted(entry["n"] for entry in seen) == [*range(60), *range(1000, 1060)]
    assert {entry.get("recorded_in") for entry in seen if entry["n"] >= 1000} == {str(elsewhere)}


async def test_an_unsaved_notebook_reads_its_folders_journal(jp_fetch, jp_root_dir, state_dir):
    # Given an agent's notebook that exists only in its room (never saved), in a folder
    folder = Path(jp_root_dir) / "analysis"
    folder.mkdir()
    write_journal(journal_path(folder.resolve(), state_dir), 3)
    # When the History asks for that notebook's journal
    page = await get_json(jp_fetch, "journal", params={"path": "analysis/Untitled1.ipynb"})
    # Then it reads the journal of the project the notebook will be saved in (its folder,
    # outside a git repository), rather than refusing the path
    assert page["project_root"] == str(folder.resolve())
    assert [entry["n"] for entry in page["entries"]] == [2, 1, 0]


@pytest.mark.parametrize(
    "params",
    [
        {"before": "x"},
        {"before": "5"},  # inside a line
        {"before": "99999999"},  # past the end
        {"before": "0,0"},  # two positions for one journal
        {"path": "../outside.ipynb"},
    ],
)
async def test_a_page_that_cannot_be_read_is_refused_clearly(
    jp_fetch, jp_root_dir, state_dir, params
):
    # Given a journal of ten entries
    write_journal(journal_path(Path(jp_root_dir), state_dir), 10)
    # When a page is asked with a cursor this route never gave, or a place outside the root
    with pytest.raises(HTTPClientError) as caught:
        await jp_fetch(API, "journal", params=params)
    # Then it is refused with a stable code and a message saying what to do
    body = json.loads(caught.value.response.body)
    assert (caught.value.code, body["code"]) == (400, "APPROVAL_MALFORMED_MESSAGE")
    assert "before" in body["message"] or "inside the server root" in body["message"]


def request_lines(path: Path, notebook: str, count: int, start: int = 0) -> None:
    """Append ``count`` requests of ``notebook``: each asked, relayed, approved and run."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as journal:
        for n in range(start, start + count):
            base = n * 10
            for offset_s, event, extra in (
                (0, "requested", {"summary": f"Overwrite part-{n}.csv"}),
                (3, "relayed", {"decision": "approve", "recorded_by": "server"}),
                (4, "approved", {"decided_by": "ana", "channel": "sidebar"}),
                (5, "executed", {}),
            ):
                moment = base + offset_s
                journal.write(
                    json.dumps(
                        {
                            "event": event,
                            "request_id": f"{n:016x}",
                            "notebook_path": notebook,
                            "time": f"2026-12-03T{moment // 3600:02d}:{moment // 60 % 60:02d}:"
                            f"{moment % 60:02d}.000Z",
                            **extra,
                        }
                    )
                    + "\n"
                )


async def test_the_journal_as_requests_pages_one_row_per_request(jp_fetch, jp_root_dir, state_dir):
    # Given 30 requests of one notebook and 30 of another, four lines each
    root = Path(jp_root_dir).resolve()
    (root / "clean.ipynb").write_text("{}")
    journal = journal_path(root, state_dir)
    request_lines(journal, str(root / "clean.ipynb"), 30)
    request_lines(journal, str(root / "report.ipynb"), 30, start=30)
    # When the History reads requests page by page
    rows: list[dict] = []
    before = None
    while True:
        query = {"limit": "25", **({"before": before} if before else {})}
        page = await get_json(jp_fetch, "journal", "requests", params=query)
        rows += page["requests"]
        before = page["next_before"]
        if before is None:
            break
    # Then each request is one row, newest first, with its outcome, decider and four events
    assert [row["request_id"] for row in rows] == [f"{n:016x}" for n in range(59, -1, -1)]
    assert {(row["outcome"], row["decided_by"], len(row["events"])) for row in rows} == {
        ("executed", "ana", 4)
    }
    assert page["project_root"] == str(root)
    # And the notebook filter keeps that notebook's rows, a saved one or one not saved yet
    clean = await get_json(
        jp_fetch, "journal", "requests", params={"notebook": "clean.ipynb", "limit": "200"}
    )
    report = await get_json(
        jp_fetch, "journal", "requests", params={"notebook": "report.ipynb", "limit": "200"}
    )
    assert [row["request_id"] for row in clean["requests"]] == [
        f"{n:016x}" for n in range(29, -1, -1)
    ]
    assert len(report["requests"]) == 30
    # And the search finds a request by its summary
    found = await get_json(jp_fetch, "journal", "requests", params={"q": "part-42.csv"})
    assert [row["request_id"] for row in found["requests"]] == [f"{42:016x}"]
    # And a reopened notebook's cards find their requests by id, one lookup for all of them
    ids = [f"{n:016x}" for n in (3, 41, 57)]
    cards = await get_json(
        jp_fetch,
        "journal",
        "requests",
        params={"request": ",".join(ids), "path": "clean.ipynb", "limit": "3"},
    )
    assert [row["request_id"] for row in cards["requests"]] == ids[::-1]
    assert {row["outcome"] for row in cards["requests"]} == {"executed"}


@pytest.mark.parametrize(
    "params",
    [
        {"before": "x"},
        {"before": "7"},  # inside a line
        {"outcome": "maybe"},
        {"limit": "0"},
        {"notebook": "../elsewhere.ipynb"},
        {"request": "not-an-id"},
        {"request": ",".join(["0123456789abcdef"] * 201)},
    ],
)
async def test_a_page_of_requests_that_cannot_be_read_is_refused_clearly(
    jp_fetch, jp_root_dir, state_dir, params
):
    # Given a journal of a few requests
    request_lines(journal_path(Path(jp_root_dir).resolve(), state_dir), "/x.ipynb", 3)
    # When a page is asked with a cursor this route never gave, an outcome that does not
    # exist, no room, a notebook outside the root, or ids that are none or too many
    with pytest.raises(HTTPClientError) as caught:
        await jp_fetch(API, "journal", "requests", params=params)
    # Then it is refused with a stable code
    body = json.loads(caught.value.response.body)
    assert (caught.value.code, body["code"]) == (400, "APPROVAL_MALFORMED_MESSAGE")
