"""How fast a person gets the preview of an agent's held write, against git, in one run.

    python benchmarks/bench_held_write.py [--lines 2830000] [--changed 0.01] [--repeat 3]

Two CSV files of about 100 MB (LINES lines, CHANGED of them edited; generated as in
bench_diff.py, in a temporary directory removed afterwards). Timed on the same pair:

- ours: everything the server does before it answers the agent's ``PUT`` of the new file
  with 409 and lists the request (read the JSON body, then ``held_file_write``: read the
  current file, line diff and preview, fingerprint of the request and of the file's state);
- git: ``git diff --no-index`` of the two files, writing the whole patch (to /dev/null).

Target: ours <= 2x git's time, on the best of --repeat runs, the two interleaved so that the
machine's state hits both alike (the medians' ratio is printed beside it). Reports; never
gates (exits 0).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_diff import make_files  # noqa: E402

from jupyter_approvals.server.gate.contents_judges import new_bytes  # noqa: E402
from jupyter_approvals.server.gate.held_files import held_file_write  # noqa: E402

TARGET_VS_GIT = 2.0


def interleaved(repeat: int, *runs: Callable[[], object]) -> list[list[float]]:
    """Wall times of each callable over ``repeat`` rounds, one of each per round."""
    times: list[list[float]] = [[] for _ in runs]
    for _ in range(repeat):
        for run, samples in zip(runs, times, strict=True):
            start = time.perf_counter()
            run()
            samples.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=2_830_000)
    parser.add_argument("--changed", type=float, default=0.01)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        old, new = make_files(root, args.lines, args.changed)
        body = json.dumps({"type": "file", "format": "text", "content": new.read_text()}).encode()
        size = old.stat().st_size

        def ours() -> None:
            data = new_bytes(json.loads(body), old.name)
            write = held_file_write(old.name, data, root, "bench")
            # A hunk header: the preview holds the diff, whatever words surround it.
            if "\n@@ -" not in write.preview:
                raise SystemExit("the held write produced no diff preview")

        def git() -> None:
            subprocess.run(
                ["git", "diff", "--no-index", "--no-color", str(old), str(new)],
                stdout=subprocess.DEVNULL,
                check=False,
            )

        ours_times, git_times = interleaved(args.repeat, ours, git)
        ours_s, git_s = min(ours_times), min(git_times)
        ratio = ours_s / git_s
        print(f"files: {size / 1e6:.1f} MB, {args.lines:,} lines, {args.changed:.0%} changed")
        print(
            f"held write, preview ready: {ours_s:.2f} s "
            f"(median {statistics.median(ours_times):.2f} s)"
        )
        print(f"git diff --no-index: {git_s:.2f} s (median {statistics.median(git_times):.2f} s)")
        median_ratio = statistics.median(ours_times) / statistics.median(git_times)
        print(f"median ratio: {median_ratio:.2f}x (info)")
        verdict = "PASS" if ratio <= TARGET_VS_GIT else "FAIL"
        print(f"ratio: {ratio:.2f}x (target <= {TARGET_VS_GIT:g}x) {verdict}")


if __name__ == "__main__":
    main()
