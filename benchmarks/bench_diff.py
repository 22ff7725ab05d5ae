"""The file-write preview's line diff against git and difflib, measured in one run.

    python benchmarks/bench_diff.py [--lines 1000000] [--changed 0.01] [--repeat 3]
                                    [--difflib-limit 60]

Two files are generated in a temporary directory (removed afterwards): LINES CSV-like lines,
and a copy with CHANGED of them edited (half replaced, a quarter deleted, a quarter
inserted), seeded. Timed on the same two files:

- ours: the preview as ``write_file`` builds it, once (``add_diff``: split into lines, full
  diff with all counts, the structured hunks with line numbers and changed words marked while
  the budget lasts), then its text rendered from it (``render_text``); plus, for reference,
  the full unified text of every hunk;
- git: ``git diff --no-index`` writing the whole patch (to /dev/null);
- difflib: ``difflib.unified_diff`` over the decoded lines, stopped at --difflib-limit
  seconds (then its ratio is reported as "more than").

Targets: ours <= 3x git's time, ours >= 10x faster than difflib. Best of --repeat. (Until
issue 19 the text and the structured preview were built side by side and a third target
compared the two; there is now one build, so there is nothing left to compare.)
The script reports; it never gates: it prints PASS/FAIL per target and exits 0.
"""

from __future__ import annotations

import argparse
import difflib
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from jupyter_approvals.previews.line_diff import add_diff, unified_lines  # noqa: E402
from jupyter_approvals.previews.render_text import render_text  # noqa: E402
from jupyter_approvals.previews.structured import StructuredPreview  # noqa: E402
from jupyter_approvals.previews.text import Deadline  # noqa: E402

TARGET_VS_GIT = 3.0
TARGET_VS_DIFFLIB = 10.0


def make_files(directory: Path, lines: int, changed: float, seed: int = 4) -> tuple[Path, Path]:
    """Old and new files: ``changed`` of the lines edited at random places."""
    rng = random.Random(seed)
    old = [
        f"{n},{rng.randrange(10**9)},name-{rng.randrange(1000)},{rng.random():.6f}\n"
        for n in range(lines)
    ]
    new = list(old)
    for where in sorted(rng.sample(range(lines), int(lines * changed)), reverse=True):
        kind = rng.random()
        if kind < 0.5:
            new[where] = f"{where},changed,{rng.random():.6f}\n"
        elif kind < 0.75:
            del new[where]
        else:
            new.insert(where, f"inserted,{rng.random():.6f}\n")
    a, b = directory / "old.csv", directory / "new.csv"
    a.write_text("".join(old))
    b.write_text("".join(new))
    return a, b


def time_ours(a: Path, b: Path, full: bool) -> tuple[float, str]:
    start = time.perf_counter()
    old, new = a.read_bytes(), b.read_bytes()
    built = StructuredPreview()
    diff = add_diff(built, old, new, str(a), str(b), Deadline(60))
    document = built.document()
    text = render_text(document)
    if full:
        for _ in unified_lines(diff, str(a), str(b)):
            pass
    elapsed = time.perf_counter() - start
    hunks = document["blocks"][-1]["hunks"] if document["blocks"] else []
    what = (
        f"+{diff.added:,} -{diff.removed:,} lines, {len(hunks):,} hunks shown, "
        f"text {len(text):,} chars"
    )
    return elapsed, what


def time_git(a: Path, b: Path) -> float:
    start = time.perf_counter()
    with open("/dev/null", "wb") as sink:
        subprocess.run(["git", "diff", "--no-index", "--no-color", str(a), str(b)], stdout=sink)
    return time.perf_counter() - start


def time_difflib(a: Path, b: Path, limit: float) -> tuple[float, bool]:
    """Seconds difflib took, and whether it finished before ``limit``."""
    start = time.perf_counter()
    old = a.read_text().splitlines()
    new = b.read_text().splitlines()
    for _ in difflib.unified_diff(old, new, str(a), str(b), lineterm=""):
        if time.perf_counter() - start > limit:
            return time.perf_counter() - start, False
    return time.perf_counter() - start, True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--changed", type=float, default=0.01)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--difflib-limit", type=float, default=60.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-diff-") as temp:
        a, b = make_files(Path(temp), args.lines, args.changed)
        print(f"{args.lines:,} lines, {args.changed:.1%} changed, {a.stat().st_size:,} bytes")
        ours, git, full = [], [], []
        for _ in range(args.repeat):  # interleaved, so all see the same machine state
            seconds, what = time_ours(a, b, full=False)
            ours.append(seconds)
            git.append(time_git(a, b))
            full.append(time_ours(a, b, full=True)[0])
        best_ours, best_git, best_full = min(ours), min(git), min(full)
        print(f"ours (preview):        {best_ours:7.3f} s  ({what})")
        print(f"ours (all hunks text): {best_full:7.3f} s")
        print(f"git diff --no-index:   {best_git:7.3f} s")
        med_ours, med_git = statistics.median(ours), statistics.median(git)
        print(
            f"medians of {args.repeat} (info): ours {med_ours:.3f} s, git {med_git:.3f} s; "
            f"ours / git {med_ours / med_git:.2f}x"
        )
        seconds, finished = time_difflib(a, b, args.difflib_limit)
        more = "" if finished else "more than "
        print(f"difflib.unified_diff:  {more}{seconds:7.3f} s" + ("" if finished else " (stopped)"))
    vs_git = best_ours / best_git
    vs_difflib = seconds / best_ours
    verdict_git = "PASS" if vs_git <= TARGET_VS_GIT else "FAIL"
    verdict_difflib = "PASS" if vs_difflib >= TARGET_VS_DIFFLIB else "FAIL"
    print(f"ours / git     = {vs_git:.2f}x  (target <= {TARGET_VS_GIT:g}x)  {verdict_git}")
    print(f"ours (all hunks) / git = {best_full / best_git:.2f}x  (reference)")
    print(
        f"difflib / ours = {more}{vs_difflib:.1f}x  (target >= {TARGET_VS_DIFFLIB:g}x)  "
        f"{verdict_difflib}"
    )


if __name__ == "__main__":
    main()
