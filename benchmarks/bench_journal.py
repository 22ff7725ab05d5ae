"""What a History page costs on a large journal, and what reading it costs everyone else.

A real ``jupyter server`` with the extension serves a project whose journal holds ``--lines``
entries. Measured, in one run:

- a page of 50 entries read by cursor (``before`` = a page's ``next_before``) at 10%, 50% and
  90% of the journal from its newest entry, against the first page; target: every ratio
  <= 2x (a page costs what it holds, not what lies after it);
- ``GET /api/status`` while another client reads deep cursor pages ten a second (a person
  paging quickly), against ``GET /api/status`` alone; target: the median within 1.5x (the
  journal is read off the event loop). For information, the same while cursor pages, then
  pages deep by ``offset`` (the old way, which reads what it skips), are read back to back.

    .venv/bin/python benchmarks/bench_journal.py [--lines 1000000] [--repeat 15]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.server_process import ServerProcess
from jupyter_approvals.core.project import journal_path

PAGE = 50
PAGE_TARGET = 2.0
STATUS_TARGET = 1.5
DEPTHS = (0.1, 0.5, 0.9)
#: A person paging through the History quickly: ten pages a second.
PERSON_PAUSE_S = 0.1


def write_journal(path: Path, lines: int) -> list[int]:
    """Write ``lines`` entries like the kernel's; return where each line starts."""
    path.parent.mkdir(parents=True, exist_ok=True)
    starts: list[int] = []
    position = 0
    with path.open("w") as out:
        for n in range(lines):
            line = (
                json.dumps(
                    {
                        "time": f"2026-12-03T{n // 3_600_000 % 24:02d}:{n // 60_000 % 60:02d}:"
                        f"{n // 1000 % 60:02d}.{n % 1000:03d}Z",
                        "event": ("requested", "approved", "executed")[n % 3],
                        "request_id": f"{n // 3:016x}",
                        "action": "file.write",
                        "summary": f"Overwrite data/part-{n // 3}.csv",
                        "fingerprint": "sha256:" + f"{n:064x}",
                        "kernel_id": "7f1c2d3e-0000-4000-8000-000000000000",
                    }
                )
                + "\n"
            )
            starts.append(position)
            position += len(line)
            out.write(line)
    return starts


def timed(call, repeat: int) -> float:
    """The median seconds of ``repeat`` calls."""
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        call()
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def status_median(server: ServerProcess, count: int) -> float:
    return timed(lambda: server.request("api/status"), count)


def while_reading(server: ServerProcess, query: str, count: int, pause: float) -> float:
    """The median of ``count`` status requests while another process asks for the journal
    page ``query`` again and again, ``pause`` seconds apart (a process: a thread would share
    this one's interpreter lock and slow the timing itself)."""
    url = f"http://127.0.0.1:{server.port}/jupyter-approvals/api/journal?{query}"
    headers = {"Authorization": f"token {server.token}"}
    loop = (
        "import time, urllib.request\n"
        f"r = urllib.request.Request({url!r}, headers={headers!r})\n"
        "while True:\n"
        "    urllib.request.urlopen(r, timeout=120).read()\n"
        f"    time.sleep({pause!r})\n"
    )
    reader = subprocess.Popen([sys.executable, "-c", loop], stdin=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        return status_median(server, count)
    finally:
        reader.kill()
        reader.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--status-requests", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        root = base / "project"
        root.mkdir()
        print(f"writing a journal of {args.lines:,} entries ...", flush=True)
        journal = journal_path(root.resolve(), base / "state")
        starts = write_journal(journal, args.lines)
        size_mib = journal.stat().st_size / 2**20
        with ServerProcess(base, root) as server:

            def page(**params: object) -> dict:
                query = "&".join(f"{name}={value}" for name, value in params.items())
                return server.request(f"jupyter-approvals/api/journal?limit={PAGE}&{query}")

            page()  # warm: imports, the first open of the file
            first = timed(page, args.repeat)
            print(f"journal: {args.lines:,} lines, {size_mib:.0f} MiB")
            print(f"first page of {PAGE}, median: {first * 1000:.2f} ms")
            worst = 0.0
            for depth in DEPTHS:
                # The cursor of the page that starts `depth` of the way from the newest entry.
                before = starts[max(1, int(args.lines * (1 - depth)))]
                assert page(before=before)["entries"], "a deep page came back empty"
                deep = timed(lambda before=before: page(before=before), args.repeat)
                ratio = deep / first
                worst = max(worst, ratio)
                print(
                    f"page at {depth:.0%} by cursor, median: {deep * 1000:.2f} ms, "
                    f"ratio {ratio:.2f}x"
                )
            verdict = "PASS" if worst <= PAGE_TARGET else "FAIL"
            print(f"page ratio, worst: {worst:.2f}x (target <= {PAGE_TARGET:g}x) {verdict}")
            deep_offset = int(args.lines * 0.9)
            began = time.perf_counter()
            page(offset=deep_offset)
            print(
                f"info: one page at offset {deep_offset:,} (the old way, reads what it skips): "
                f"{(time.perf_counter() - began) * 1000:.0f} ms"
            )

            alone = status_median(server, args.status_requests)
            print(f"GET api/status alone, median: {alone * 1000:.2f} ms")
            deep_before = starts[int(args.lines * 0.1)]
            cursor_query = f"limit={PAGE}&before={deep_before}"
            paced = while_reading(server, cursor_query, args.status_requests, PERSON_PAUSE_S)
            ratio = paced / alone
            verdict = "PASS" if ratio <= STATUS_TARGET else "FAIL"
            print(
                f"GET api/status while a person pages through the History "
                f"({1 / PERSON_PAUSE_S:g} pages/s), median: {paced * 1000:.2f} ms, "
                f"ratio {ratio:.2f}x (target <= {STATUS_TARGET:g}x) {verdict}"
            )
            for name, query in (
                ("cursor", cursor_query),
                ("offset", f"limit={PAGE}&offset={deep_offset}"),
            ):
                flat_out = while_reading(server, query, args.status_requests, 0.0)
                print(
                    f"info: GET api/status while {name} pages are read back to back, median: "
                    f"{flat_out * 1000:.2f} ms, ratio {flat_out / alone:.2f}x (off the event "
                    "loop, but sharing the server's interpreter lock)"
                )


if __name__ == "__main__":
    main()
