"""A change set's preview of a large CSV changed in 1% of its rows, against a table diff.

    python benchmarks/bench_large_csv.py [--size-mib 1024] [--changed 0.01] [--repeat 3]

Two CSV files are generated in a temporary directory (removed afterwards): about SIZE MiB of
rows (an int key, a region, an amount, a text column), and a copy with CHANGED of the rows
edited in place, seeded. Timed on the same two files, each after the files were read once
(the page cache warm for both):

- table diff (the baseline): what the table-diff benchmark (``bench_table_diff.py``) compares
  ours with, on these files: ``pandas.read_csv`` of both, then
  ``pandas.merge(old, new, on="id", how="outer", indicator=True)``;
- preview: ``large_csv_change``, the change set's preview of a CSV over the diff limit (both
  files streamed in step, hashed on the way, compared a batch of lines at a time, the changed
  rows' examples kept), never more than a block of each file in memory;
- for reference: reading both files once and hashing them with sha256, what listing the
  change set itself costs (no preview can read less).

Target: the preview within 2x of the table diff's time (issue 20). Peak memory of both is
reported beside them. Best of --repeat. The script reports; it never gates: it prints
PASS/FAIL and exits 0.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from jupyter_approvals.previews.large_csv_change import large_csv_change  # noqa: E402

TARGET = 2.0


def make_files(
    directory: Path, size_mib: float, changed: float, seed: int = 20
) -> tuple[Path, Path]:
    """Old and new CSVs of about ``size_mib`` MiB; ``changed`` of the rows edited in place."""
    rng = random.Random(seed)
    old, new = directory / "old.csv", directory / "new.csv"
    target = int(size_mib * (1 << 20))
    with old.open("w") as before, new.open("w") as after:
        header = "id,region,amount,note\n"
        before.write(header)
        after.write(header)
        written, row = len(header), 0
        while written < target:
            line = f"{row},r{row % 17},{rng.random() * 1000:.4f},item {rng.randrange(10**6)}\n"
            before.write(line)
            after.write(line if rng.random() >= changed else line.replace(",r", ",x", 1))
            written += len(line)
            row += 1
    return old, new


def read_both(old: Path, new: Path) -> None:
    for path in (old, new):
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)


def table_diff(old: Path, new: Path) -> int:
    import pandas as pd

    before, after = pd.read_csv(old), pd.read_csv(new)
    merged = pd.merge(before, after, on="id", how="outer", indicator=True)
    return len(merged)


def peak_mib(run) -> float:  # type: ignore[no-untyped-def]
    tracemalloc.start()
    run()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / (1 << 20)


def best(repeat: int, run) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=float, default=1024)
    parser.add_argument("--changed", type=float, default=0.01)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-large-csv-") as folder:
        old, new = make_files(Path(folder), args.size_mib, args.changed)
        size = old.stat().st_size + new.stat().st_size
        read_both(old, new)  # warm the page cache for every measure
        hashing = best(args.repeat, lambda: read_both(old, new))
        baseline = best(args.repeat, lambda: table_diff(old, new))
        preview = best(args.repeat, lambda: large_csv_change("t.csv", old, new))
        _, found = large_csv_change("t.csv", old, new)
        preview_peak = peak_mib(lambda: large_csv_change("t.csv", old, new))
        baseline_peak = peak_mib(lambda: table_diff(old, new))
    ratio = preview / baseline
    print(f"two files of {size / 2 / (1 << 20):,.0f} MiB, {found.changed:,} rows changed")
    print(f"table diff (read_csv + merge): {baseline:.2f} s, peak {baseline_peak:,.0f} MiB")
    print(f"large CSV preview: {preview:.2f} s, peak {preview_peak:,.1f} MiB")
    print(f"read and hash both: {hashing:.2f} s (info: preview / read {preview / hashing:.2f}x)")
    verdict = "PASS" if ratio <= TARGET else "FAIL"
    print(f"ratio preview / table diff: {ratio:.2f}x (target <= {TARGET:g}x) {verdict}")


if __name__ == "__main__":
    main()
