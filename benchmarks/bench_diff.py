"""The file-write preview's line diff against git and difflib, measured in one run.

    python benchmarks/bench_diff.py [--lines 1000000] [--changed 0.01] [--repeat 3]
                                    [--difflib-limit 60]

Two files are generated in a temporary directory (removed afterwards): LINES CSV-like lines,
and a copy with CHANGED of them edited (half replaced, a quarter deleted, a quarter
inserted), seeded. Timed on the same two files:

- ours: ``add_diff_preview`` as ``write_file`` builds it (split into lines, full diff with
  all counts, hunks rendered into the 16,000-character preview), plus, for reference, the
  full unified text of every hunk;
- ours with the structured preview: the same call building its structured form in the same
  pass (hunks with line numbers, changed words marked), against the text preview alone;
- git: ``git diff --no-index`` writing the whole patch (to /dev/null);
- difflib: ``difflib.unified_diff`` over the decoded lines, stopped at --difflib-limit
  seconds (then its ratio is reported as "more than").

Targets: ours <= 3x git's time, ours >= 10x faster than difflib, and the preview with its
structured form <= 1.2x the text preview alone. Best of --repeat.
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

from jupyter_approvals.previews.line_diff import add_diff_preview, unified_lines  # noqa: E402
from jupyter_approvals.previews.structured import StructuredPreview  # noqa: E402
from jupyter_approvals.previews.text import PREVIEW_BUDGET, Deadline, PreviewText  # noqa: E402

TARGET_VS_GIT = 3.0
TARGET_VS_DIFFLIB = 10.0
TARGET_STRUCTURED = 1.2


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


def time_ours(a: Path, b: Path, full: bool, structured: bool = False) -> tuple[float, str]:
    start = time.perf_counter()
    old, new = a.read_bytes(), b.read_bytes()
    preview = PreviewText(PREVIEW_BUDGET - 600)
    built = StructuredPreview() if structured else None
    diff = add_diff_preview(preview, old, new, str(a), str(b), Deadline(60), structured=built)
    text = preview.render()
    document = built.document() if built is not None else None
    if full:
        for _ in unified_lines(diff, str(a), str(b)):
            pass
    elapsed = time.perf_counter() - start
    what = f"+{diff.added:,} -{diff.removed:,} lines, preview {len(text):,} chars"
    if document is not None:
        hunks = document["blocks"][-1]["hunks"] if document["blocks"] else []
        what += f", structured {len(hunks):,} hunks"
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
        ours, git, full, both = [], [], [], []
        for _ in range(args.repeat):  # interleaved, so all see the same machine state
            seconds, what = time_ours(a, b, full=False)
            ours.append(seconds)
            # Right after the text alone, so the ratio of the two sees the same machine state.
            seconds, what_both = time_ours(a, b, full=False, structured=True)
            both.append(seconds)
            git.append(time_git(a, b))
            full.append(time_ours(a, b, full=True)[0])
        best_ours, best_git, best_full, best_both = min(ours), min(git), min(full), min(both)
        print(f"ours (preview):        {best_ours:7.3f} s  ({what})")
        print(f"ours (+ structured):   {best_both:7.3f} s  ({what_both})")
        print(f"ours (all hunks text): {best_full:7.3f} s")
        print(f"git diff --no-index:   {best_git:7.3f} s")
        med = {name: statistics.median(v) for name, v in (("ours", ours), ("both", both))}
        med["git"] = statistics.median(git)
        print(
            f"medians of {args.repeat} (info): ours {med['ours']:.3f} s, with structured "
            f"{med['both']:.3f} s, git {med['git']:.3f} s; ours / git "
            f"{med['ours'] / med['git']:.2f}x, with structured / text "
            f"{med['both'] / med['ours']:.2f}x"
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
    vs_text = best_both / best_ours
    verdict_text = "PASS" if vs_text <= TARGET_STRUCTURED else "FAIL"
    print(
        f"with structured / text alone = {vs_text:.2f}x  (target <= {TARGET_STRUCTURED:g}x)  "
        f"{verdict_text}"
    )
    print(
        f"difflib / ours = {more}{vs_difflib:.1f}x  (target >= {TARGET_VS_DIFFLIB:g}x)  "
        f"{verdict_difflib}"
    )


if __name__ == "__main__":
    main()
