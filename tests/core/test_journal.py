"""The decision journal: whole-line appends, private files, failures kept not raised, reading."""

from __future__ import annotations

import io
import json
import math
import os
import stat
import subprocess
import sys
import textwrap
import threading
import time
from itertools import islice
from pathlib import Path
from typing import Any

import pytest

import jupyter_approvals.core.journal.reader as journal_read
import jupyter_approvals.core.journal.writer as journal_module
from jupyter_approvals.core.journal.line import MAX_LINE_BYTES, MAX_STRING_CHARS
from jupyter_approvals.core.journal.reader import JournalPage, read_entries
from jupyter_approvals.core.journal.writer import Journal
from jupyter_approvals.core.project import journal_path

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX modes and O_NOFOLLOW")

FIXED_TIME = 1_700_000_000.1239  # 2023-11-14T22:13:20.123Z


def fixed_clock() -> float:
    return FIXED_TIME


def lines_of(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n")
    return text[:-1].split("\n")


def mode_of(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path.resolve() / "state"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path.resolve() / "project"
    root.mkdir()
    return root


# -- the line format -------------------------------------------------------------------


def test_append_writes_one_sorted_compact_json_line(tmp_path: Path) -> None:
    # Given a journal with a fixed clock
    journal = Journal(tmp_path / "j.jsonl", clock=fixed_clock)

    # When one entry is appended with non-ASCII text
    ok = journal.append("approved", request_id="r1", action="write_file", summary="café ✓")

    # Then exactly one line holds it, keys sorted, compact, UTF-8 kept as is
    assert ok is True
    raw = (tmp_path / "j.jsonl").read_bytes()
    assert (
        raw
        == (
            '{"action":"write_file","event":"approved","request_id":"r1",'
            '"summary":"café ✓","time":"2023-11-14T22:13:20.123Z","v":1}\n'
        ).encode()
    )
    assert journal.last_error is None
    assert journal.failures == 0


def test_values_are_made_json_safe_without_raising(tmp_path: Path) -> None:
    # Given values JSON cannot hold as they are
    class Unprintable:
        def __repr__(self) -> str:
            raise RuntimeError("no repr")

    journal = Journal(tmp_path / "j.jsonl", clock=fixed_clock)

    # When they are appended
    ok = journal.append(
        "executed",
        notebook_path=Path("/work/nb.ipynb"),
        blob=b"\x00\x01",
        weird=Unprintable(),
        ratio=math.nan,
        tags={"b", "a"},
        pair=(1, 2.5),
        nested={1: [None, True], "k": {"deep": Path("x")}},
        surrogate="bad\udcff",
    )

    # Then the line is written and every value is JSON with a readable stand-in
    assert ok is True
    entry = json.loads(lines_of(tmp_path / "j.jsonl")[0])
    assert entry["notebook_path"] == "/work/nb.ipynb"
    assert entry["blob"] == "<unserializable bytes: 2 bytes>"
    assert entry["weird"] == "<unserializable Unprintable: <repr failed>>"
    assert entry["ratio"] == "<unserializable float: nan>"
    assert entry["tags"] == ["a", "b"]
    assert entry["pair"] == [1, 2.5]
    assert entry["nested"] == {"1": [None, True], "k": {"deep": "x"}}
    assert entry["surrogate"] == "bad\\udcff"
    assert "clipped" not in entry


def test_fields_named_like_journal_keys_are_kept_aside(tmp_path: Path) -> None:
    # Given fields that collide with the journal's own keys
    journal = Journal(tmp_path / "j.jsonl", clock=fixed_clock)

    # When they are appended
    journal.append("refused", event="spoofed", v=99, time="never")

    # Then the journal's keys win and the caller's values survive under caller_*
    entry = json.loads(lines_of(tmp_path / "j.jsonl")[0])
    assert entry["event"] == "refused"
    assert entry["v"] == 1
    assert entry["time"] == "2023-11-14T22:13:20.123Z"
    assert (entry["caller_event"], entry["caller_v"], entry["caller_time"]) == (
        "spoofed",
        99,
        "never",
    )


def test_long_strings_are_clipped_and_marked(tmp_path: Path) -> None:
    # Given a summary longer than the string cap
    journal = Journal(tmp_path / "j.jsonl", clock=fixed_clock)

    # When it is appended
    journal.append("requested", request_id="r1", summary="x" * (MAX_STRING_CHARS + 10))

    # Then it is clipped, marked, and the line stays bounded
    raw = (tmp_path / "j.jsonl").read_bytes()
    entry = json.loads(raw)
    assert entry["clipped"] is True
    assert entry["summary"].startswith("x" * MAX_STRING_CHARS + "...<clipped 10 chars>")
    assert len(raw) <= MAX_LINE_BYTES


def test_an_oversized_entry_still_records_the_event_and_request(tmp_path: Path) -> None:
    # Given far too many large fields for one line
    journal = Journal(tmp_path / "j.jsonl", clock=fixed_clock)
    huge = {f"f{i}": "é" * 5000 for i in range(200)}

    # When they are appended
    ok = journal.append("approved", request_id="r9", action="delete", **huge)

    # Then one bounded line keeps the event, the ids and a clipping mark
    assert ok is True
    raw = (tmp_path / "j.jsonl").read_bytes()
    assert len(raw) <= MAX_LINE_BYTES
    assert raw.count(b"\n") == 1
    entry = json.loads(raw)
    assert entry["event"] == "approved"
    assert entry["request_id"] == "r9"
    assert entry["clipped"] is True


def test_deep_and_wide_values_are_bounded(tmp_path: Path) -> None:
    # Given a self-referencing list and a very wide mapping
    loop: list[Any] = []
    loop.append(loop)
    journal = Journal(tmp_path / "j.jsonl", clock=fixed_clock)

    # When they are appended
    ok = journal.append("failed", loop=loop, wide={str(i): i for i in range(10_000)})

    # Then the line is written, bounded and marked
    assert ok is True
    raw = (tmp_path / "j.jsonl").read_bytes()
    assert len(raw) <= MAX_LINE_BYTES
    entry = json.loads(raw)
    assert entry["clipped"] is True
    assert len(entry["wide"]) <= 65


# -- directory and file modes ----------------------------------------------------------


@posix_only
def test_directories_are_0700_and_the_file_0600(project: Path, state: Path) -> None:
    # Given a state dir that does not exist yet and a permissive umask
    old_umask = os.umask(0)
    try:
        journal = Journal.for_project(project, state)

        # When the first entry is appended
        assert journal.append("requested", request_id="r1")
    finally:
        os.umask(old_umask)

    # Then every directory created is 0700 and the journal 0600
    assert journal.path == journal_path(project, state)
    assert mode_of(state) == 0o700
    assert mode_of(state / "decisions") == 0o700
    assert mode_of(journal.path) == 0o600


@posix_only
def test_a_loose_decisions_dir_and_file_are_tightened(project: Path, state: Path) -> None:
    # Given an existing decisions dir and journal readable by everyone
    decisions = state / "decisions"
    decisions.mkdir(parents=True)
    decisions.chmod(0o777)
    journal = Journal.for_project(project, state)
    journal.path.write_text("")
    journal.path.chmod(0o644)

    # When an entry is appended
    assert journal.append("requested", request_id="r1")

    # Then group and other bits are gone from both
    assert mode_of(decisions) == 0o700
    assert mode_of(journal.path) == 0o600


@posix_only
def test_a_plain_journal_leaves_a_shared_directory_alone(tmp_path: Path) -> None:
    # Given a shared directory and a journal placed in it directly
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o755)

    # When an entry is appended
    assert Journal(shared / "j.jsonl").append("requested")

    # Then the directory keeps its mode
    assert mode_of(shared) == 0o755


@posix_only
def test_a_symlink_at_the_journal_path_is_not_followed(project: Path, state: Path) -> None:
    # Given a symlink planted at the journal path, pointing at another file
    journal = Journal.for_project(project, state)
    journal.path.parent.mkdir(parents=True)
    target = state / "victim.txt"
    target.write_text("precious\n")
    journal.path.symlink_to(target)

    # When an entry is appended
    ok = journal.append("approved", request_id="r1")

    # Then nothing is written through the link and the failure is recorded
    assert ok is False
    assert target.read_text() == "precious\n"
    assert journal.failures == 1
    assert journal.last_error is not None
    assert "symbolic link" in journal.last_error
    assert str(journal.path) in journal.last_error


@posix_only
def test_a_dangling_symlink_creates_nothing(tmp_path: Path) -> None:
    # Given a symlink at the journal path pointing at a file that does not exist
    target = tmp_path / "would-be-created"
    link = tmp_path / "j.jsonl"
    link.symlink_to(target)

    # When an entry is appended
    journal = Journal(link)
    ok = journal.append("approved")

    # Then the target was not created
    assert ok is False
    assert not target.exists()
    assert journal.failures == 1


@posix_only
def test_a_planted_fifo_fails_instead_of_hanging(tmp_path: Path) -> None:
    # Given a FIFO with no reader at the journal path
    fifo = tmp_path / "j.jsonl"
    os.mkfifo(fifo)

    # When an entry is appended
    journal = Journal(fifo)
    ok = journal.append("approved")

    # Then it fails at once and records why
    assert ok is False
    assert journal.failures == 1
    assert journal.last_error is not None


@pytest.mark.skipif(sys.platform == "win32", reason="flock is POSIX")
def test_a_stuck_lock_holder_delays_but_does_not_block_appends(tmp_path: Path) -> None:
    # Given another open file description holding the journal's lock indefinitely
    import fcntl

    path = tmp_path / "j.jsonl"
    journal = Journal(path)
    assert journal.append("requested", n=0)
    with path.open("rb") as holder:
        fcntl.flock(holder.fileno(), fcntl.LOCK_EX)

        # When an entry is appended
        started = time.monotonic()
        ok = journal.append("approved", n=1)
        waited = time.monotonic() - started

    # Then it is written after a bounded wait
    assert ok is True
    assert waited < 5
    assert [json.loads(line)["n"] for line in lines_of(path)] == [0, 1]


# -- failures are kept, never raised ---------------------------------------------------


def test_an_unwritable_location_returns_false_and_records_it(tmp_path: Path) -> None:
    # Given a journal whose parent "directory" is a regular file (root ignores chmod)
    blocker = tmp_path / "state"
    blocker.write_text("not a directory")
    journal = Journal(blocker / "decisions" / "j.jsonl")

    # When an entry is appended
    ok = journal.append("approved", request_id="r1")

    # Then nothing is raised, False comes back and the failure is kept
    assert ok is False
    assert journal.failures == 1
    assert journal.last_error is not None
    assert str(journal.path) in journal.last_error


def test_success_does_not_erase_an_earlier_failure(tmp_path: Path) -> None:
    # Given a journal that failed twice because its parent was a file
    blocker = tmp_path / "state"
    blocker.write_text("not a directory")
    journal = Journal(blocker / "j.jsonl")
    assert journal.last_append_ok is None
    assert not journal.append("requested")
    assert not journal.append("requested")
    assert journal.last_append_ok is False
    error = journal.last_error

    # When the obstacle is gone and an append succeeds
    blocker.unlink()
    ok = journal.append("approved")

    # Then the count and the last error text stay for the UI to show, next to the recovery
    assert ok is True
    assert journal.last_append_ok is True
    assert journal.failures == 2
    assert journal.last_error == error


@pytest.mark.parametrize("event", ["", None, 3])
def test_a_bad_event_name_is_a_recorded_failure(tmp_path: Path, event: Any) -> None:
    # Given a journal
    journal = Journal(tmp_path / "j.jsonl")

    # When an entry without a usable event name is appended
    ok = journal.append(event, request_id="r1")

    # Then it is refused without raising
    assert ok is False
    assert journal.failures == 1
    assert "event" in (journal.last_error or "")
    assert not (tmp_path / "j.jsonl").exists()


def test_a_failing_clock_is_a_recorded_failure(tmp_path: Path) -> None:
    # Given a clock that raises
    def broken() -> float:
        raise OSError("clock gone")

    journal = Journal(tmp_path / "j.jsonl", clock=broken)

    # When an entry is appended
    ok = journal.append("approved")

    # Then nothing is raised
    assert ok is False
    assert "clock gone" in (journal.last_error or "")


def test_a_decisions_dir_removed_after_a_line_is_made_again(project: Path, state: Path) -> None:
    # Given a journal that wrote a line, whose directory is then removed
    journal = Journal.for_project(project, state)
    assert journal.append("requested", request_id="r1")
    journal.path.unlink()
    journal.path.parent.rmdir()

    # When the next entry is appended
    assert journal.append("approved", request_id="r1")

    # Then the directory is back, private, and holds the entry
    assert mode_of(journal.path.parent) == 0o700
    assert [json.loads(line)["event"] for line in lines_of(journal.path)] == ["approved"]


def test_a_str_subclass_is_written_as_its_stored_text(tmp_path: Path) -> None:
    # Given a field value of a str subclass whose __str__ lies
    class Loud(str):
        def __str__(self) -> str:
            return "something else"

    journal = Journal(tmp_path / "j.jsonl", clock=fixed_clock)

    # When it is journaled (past the fast path of plain str values)
    assert journal.append("requested", summary=Loud("Write a.csv"))

    # Then the line holds the stored text, not what __str__ says
    [entry] = [json.loads(line) for line in lines_of(tmp_path / "j.jsonl")]
    assert entry["summary"] == "Write a.csv"


def test_a_torn_last_line_does_not_swallow_the_next_entry(tmp_path: Path) -> None:
    # Given a journal whose last write was torn (no newline)
    path = tmp_path / "j.jsonl"
    path.write_text('{"event":"requested","v":1}\n{"event":"appr')
    journal = Journal(path, clock=fixed_clock)

    # When a new entry is appended
    assert journal.append("approved", request_id="r2")

    # Then it starts on its own line and stays readable
    page = read_entries(path)
    assert [e["event"] for e in page.entries] == ["approved", "requested"]
    assert page.corrupt_lines == 1


def test_threads_sharing_a_journal_write_whole_lines(tmp_path: Path) -> None:
    # Given one journal shared by 8 threads
    journal = Journal(tmp_path / "j.jsonl")
    results: list[bool] = []

    def worker(n: int) -> None:
        results.extend(journal.append("requested", thread=n, seq=i) for i in range(200))

    # When they all append at once
    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    # Then every line is present and whole
    assert all(results)
    entries = [json.loads(line) for line in lines_of(journal.path)]
    assert len(entries) == 1600
    for n in range(8):
        assert sorted(e["seq"] for e in entries if e["thread"] == n) == list(range(200))


# -- several processes at once (acceptance criterion) ----------------------------------

_CHILD = textwrap.dedent(
    """
    import sys
    from jupyter_approvals.core.journal.writer import Journal

    path, proc, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    journal = Journal(path)
    # Lines of varying size, some well over a page, so a torn write would show.
    pad = "é" * (100 + 700 * (proc % 4))
    print("ready", flush=True)
    sys.stdin.readline()
    for seq in range(count):
        if not journal.append("requested", proc=proc, seq=seq, pad=pad):
            print(journal.last_error, file=sys.stderr)
            sys.exit(1)
    print("done", flush=True)
    """
)


def test_eight_processes_appending_at_once_lose_and_tear_nothing(tmp_path: Path) -> None:
    # Given 8 separate Python processes, each ready to append 1,000 entries
    path = tmp_path / "shared.jsonl"
    procs_n, per_proc = 8, 1000
    repo_root = Path(journal_module.__file__).parents[2]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(repo_root), *sys.path]))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(path), str(n), str(per_proc)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for n in range(procs_n)
    ]
    try:
        for p in procs:
            assert p.stdout is not None
            assert p.stdout.readline().strip() == "ready"

        # When they are released together
        started = time.perf_counter()
        for p in procs:
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        outcomes = [p.communicate(timeout=240) for p in procs]
        elapsed = time.perf_counter() - started
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()

    # Then every process succeeded and the file holds exactly 8,000 whole JSON lines
    for p, (_, err) in zip(procs, outcomes, strict=True):
        assert p.returncode == 0, err
    lines = lines_of(path)
    assert len(lines) == procs_n * per_proc
    entries = [json.loads(line) for line in lines]
    for n in range(procs_n):
        seqs = sorted(e["seq"] for e in entries if e["proc"] == n)
        assert seqs == list(range(per_proc))
    page = read_entries(path, limit=0, count_total=True)
    assert (page.total_matching, page.corrupt_lines) == (procs_n * per_proc, 0)
    print(f"8 x {per_proc} appends with fsync took {elapsed:.2f}s")


# -- reading ---------------------------------------------------------------------------


def _write_journal(path: Path, count: int) -> None:
    journal = Journal(path, clock=fixed_clock)
    for i in range(count):
        event = ("requested", "approved", "rejected")[i % 3]
        action = "write_file" if i % 2 == 0 else "delete_file"
        assert journal.append(event, request_id=f"r{i}", action=action, n=i)


def test_entries_come_newest_first_in_pages(tmp_path: Path) -> None:
    # Given a journal of 10 entries
    path = tmp_path / "j.jsonl"
    _write_journal(path, 10)

    # When it is read in pages of 4
    pages = [read_entries(path, limit=4, offset=o) for o in (0, 4, 8)]

    # Then the pages run newest to oldest and say whether more follow
    assert [[e["n"] for e in p.entries] for p in pages] == [
        [9, 8, 7, 6],
        [5, 4, 3, 2],
        [1, 0],
    ]
    assert [p.has_more for p in pages] == [True, True, False]
    assert all(p.corrupt_lines == 0 and p.total_matching is None for p in pages)


def test_filters_by_event_and_action(tmp_path: Path) -> None:
    # Given a journal mixing events and actions
    path = tmp_path / "j.jsonl"
    _write_journal(path, 12)

    # When it is filtered
    approved = read_entries(path, event="approved", count_total=True)
    deletes = read_entries(path, action="delete_file", limit=2)
    both = read_entries(path, event="approved", action="delete_file")

    # Then only matching entries come back, newest first
    assert [e["n"] for e in approved.entries] == [10, 7, 4, 1]
    assert approved.total_matching == 4
    assert [e["n"] for e in deletes.entries] == [11, 9]
    assert deletes.has_more is True
    assert [e["n"] for e in both.entries] == [7, 1]


def test_corrupt_lines_are_skipped_and_counted(tmp_path: Path) -> None:
    # Given a journal with garbage, a non-object and invalid UTF-8 between good lines
    path = tmp_path / "j.jsonl"
    path.write_bytes(
        b'{"event":"requested","n":0}\n'
        b"not json at all\n"
        b"[1, 2, 3]\n"
        b"\n"
        b'{"event":"caf\xff"}\n'
        b'{"event":"approved","n":1}\n'
    )

    # When it is read
    page = read_entries(path, count_total=True)

    # Then the good entries come back and the bad ones are counted (blank lines are not)
    assert [e["n"] for e in page.entries] == [1, 0]
    assert page.corrupt_lines == 3
    assert page.total_matching == 2


def test_a_two_line_file_with_a_torn_last_line(tmp_path: Path) -> None:
    # Given one whole line and one torn line without its newline
    path = tmp_path / "j.jsonl"
    path.write_text('{"event":"requested","request_id":"r1","v":1}\n{"event":"appro')

    # When it is read
    page = read_entries(path)

    # Then the whole line is returned and the torn one counted
    assert page.entries == [{"event": "requested", "request_id": "r1", "v": 1}]
    assert page.corrupt_lines == 1
    assert page.has_more is False


def test_a_missing_journal_is_an_empty_page(tmp_path: Path) -> None:
    # Given no journal file
    # When it is read
    page = read_entries(tmp_path / "none.jsonl", count_total=True)

    # Then the page is empty
    assert page == JournalPage(entries=[], has_more=False, corrupt_lines=0, total_matching=0)


def test_negative_paging_is_refused(tmp_path: Path) -> None:
    # Given / When / Then a negative limit or offset is a caller error
    with pytest.raises(ValueError, match="limit"):
        read_entries(tmp_path / "j.jsonl", limit=-1)
    with pytest.raises(ValueError, match="offset"):
        read_entries(tmp_path / "j.jsonl", offset=-1)


@posix_only
def test_reading_does_not_follow_a_symlink(tmp_path: Path) -> None:
    # Given a symlink at the journal path
    real = tmp_path / "real.jsonl"
    _write_journal(real, 1)
    link = tmp_path / "j.jsonl"
    link.symlink_to(real)

    # When / Then reading refuses it
    with pytest.raises(OSError):  # noqa: PT011 - the errno differs between systems
        read_entries(link)


def test_journal_read_is_read_entries_on_its_path(tmp_path: Path) -> None:
    # Given a journal with entries
    journal = Journal(tmp_path / "j.jsonl", clock=fixed_clock)
    for i in range(3):
        journal.append("approved", n=i)

    # When it is read through the instance
    page = journal.read(limit=2)

    # Then it matches read_entries
    assert page == read_entries(journal.path, limit=2)
    assert [e["n"] for e in page.entries] == [2, 1]


class CountingFile(io.FileIO):
    """A real file that counts the bytes read from it."""

    bytes_read = 0

    def read(self, size: int | None = -1, /) -> bytes:
        data = super().read(size)
        self.bytes_read += len(data)
        return data


def test_the_first_page_reads_only_the_end_of_a_large_journal(tmp_path: Path) -> None:
    # Given a journal of about 1 MB
    path = tmp_path / "big.jsonl"
    path.write_text(
        "".join(json.dumps({"event": "requested", "n": i}) + "\n" for i in range(40_000))
    )
    size = path.stat().st_size
    assert size > 1_000_000

    # When its newest lines are read backwards
    with CountingFile(path, "rb") as f:
        newest = list(islice(journal_read._iter_lines_reversed(f, size), 50))

        # Then only the last block was read
        assert [json.loads(line or b"null")["n"] for _, line in newest] == list(
            range(39_999, 39_949, -1)
        )
        assert f.bytes_read <= 64 * 1024


def test_a_full_page_stops_reading(tmp_path: Path) -> None:
    # Given a large journal whose oldest part is garbage
    path = tmp_path / "big.jsonl"
    garbage = "garbage\n" * 100_000
    good = "".join(json.dumps({"event": "approved", "n": i}) + "\n" for i in range(100))
    path.write_text(garbage + good)

    # When the first page is read
    page = read_entries(path, limit=10)

    # Then the garbage far behind the page was never reached
    assert [e["n"] for e in page.entries] == list(range(99, 89, -1))
    assert page.has_more is True
    assert page.corrupt_lines == 0


@pytest.mark.parametrize("block_size", [1, 2, 3, 7, 16, 64, 1000])
def test_backward_reading_matches_forward_splitting(tmp_path: Path, block_size: int) -> None:
    # Given lines of many lengths, a blank line and a torn tail
    body = b"".join(b"x" * (i % 23) + b"%d\n" % i for i in range(60)) + b"\n" + b"torn"
    path = tmp_path / "lines"
    path.write_bytes(body)

    # When it is read backwards with a small block size
    with path.open("rb") as f:
        got = list(journal_read._iter_lines_reversed(f, len(body), block_size=block_size))

    # Then the lines are those of a forward split, reversed, the torn tail as None, each with
    # the position where it starts
    starts, offset = [], 0
    for line in body.split(b"\n"):
        starts.append((offset, line))
        offset += len(line) + 1
    expected = [(start, line) for start, line in starts[:-1] if line]
    assert got == [(starts[-1][0], None), *reversed(expected)]


@pytest.mark.parametrize("block_size", [3, 10, 4096])
def test_overlong_lines_are_dropped_as_unusable(tmp_path: Path, block_size: int) -> None:
    # Given a line longer than the reader's limit between two short ones
    body = b"first\n" + b"y" * 100 + b"\nlast\n"
    path = tmp_path / "lines"
    path.write_bytes(body)

    # When it is read backwards with a 50-byte limit
    with path.open("rb") as f:
        got = list(
            journal_read._iter_lines_reversed(f, len(body), block_size=block_size, max_line=50)
        )

    # Then the long line is reported as unusable, the others kept
    assert got == [(107, b"last"), (6, None), (0, b"first")]


def test_pages_of_several_journals_merge_into_one_page_newest_first():
    from jupyter_approvals.core.journal.reader import JournalPage, merge_pages

    # Given the newest entries of two journals (each read with room for offset + limit)
    first = JournalPage(
        entries=[{"time": "2026-12-01T10:00:05.000Z"}, {"time": "2026-12-01T10:00:01.000Z"}],
        has_more=False,
        corrupt_lines=1,
        positions=[200, 100],
        end=300,
    )
    second = JournalPage(
        entries=[{"time": "2026-12-01T10:00:04.000Z"}, {"time": "2026-12-01T10:00:03.000Z"}],
        has_more=True,
        positions=[800, 700],
        end=900,
    )
    # When the second page of two entries is asked for
    page, sources, cursors = merge_pages([first, second], limit=2, offset=1)
    # Then it holds the entries ranked 2 and 3 by time, says where each came from, that more
    # exist, and the unreadable lines of both
    assert [e["time"][17:19] for e in page.entries] == ["04", "03"]
    assert sources == [1, 1]
    assert (page.has_more, page.corrupt_lines) == (True, 1)
    # And the next page of each journal starts after what was consumed: the first journal
    # after its newest entry (skipped by the offset), the second after both of its entries
    assert cursors == [200, 700]


def test_pages_read_by_cursor_walk_the_whole_journal_once(tmp_path: Path) -> None:
    # Given a journal of 1,000 entries with a corrupt line among them
    path = tmp_path / "j.jsonl"
    lines = [json.dumps({"event": "approved", "n": i}) for i in range(1000)]
    lines.insert(500, "not json")
    path.write_text("\n".join(lines) + "\n")
    # When it is read page by page, each page from the previous page's next_before
    seen: list[int] = []
    before = None
    pages = 0
    while True:
        page = read_entries(path, limit=64, before=before)
        pages += 1
        seen += [entry["n"] for entry in page.entries]
        if page.next_before is None:
            break
        before = page.next_before
    # Then every entry came exactly once, newest first, and the last page says it is the last
    assert seen == list(range(999, -1, -1))
    assert pages == 16
    assert page.has_more is False


def test_a_cursor_page_is_the_entries_just_before_it(tmp_path: Path) -> None:
    # Given a journal of 40,000 entries and the cursor of a page near its start
    path = tmp_path / "big.jsonl"
    path.write_text("".join(json.dumps({"n": i}) + "\n" for i in range(40_000)))
    start_of_100 = len("".join(json.dumps({"n": i}) + "\n" for i in range(100)))
    # When the page before that cursor is read
    page = read_entries(path, limit=10, before=start_of_100)
    # Then it holds the ten entries before it, and the next page ends where the oldest of
    # them starts
    assert [e["n"] for e in page.entries] == list(range(99, 89, -1))
    assert page.next_before == page.positions[-1]
    assert path.read_bytes()[page.next_before :].startswith(b'{"n": 90}\n')


@pytest.mark.parametrize("before", [-1, 5, 10**9])
def test_a_cursor_that_is_not_a_line_start_is_refused(tmp_path: Path, before: int) -> None:
    # Given a journal of two entries
    path = tmp_path / "j.jsonl"
    path.write_text('{"n": 0}\n{"n": 1}\n')
    # When a page is asked before a position outside it or inside a line
    # Then it is refused, rather than read from the middle of a line
    with pytest.raises(journal_read.CursorInvalid):
        read_entries(path, before=before)
