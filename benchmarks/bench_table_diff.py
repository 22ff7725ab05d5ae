"""Row diff by key of two 1,000,000-row tables against ``pandas.merge(..., indicator=True)``.

    python benchmarks/bench_table_diff.py [--rows 1000000] [--repeat 3]

Two seeded frames with an int64 key and int, float and text columns; the new one has about
1% of its rows changed, 0.5% removed and 0.5% added, in shuffled order. The baseline is
``pandas.merge(old, new, on="id", how="outer", indicator=True)`` (what one would write to find
added and removed rows, without even finding changed ones); ours is
``jupyter_approvals.previews.table_diff.diff_rows`` (added, removed and changed rows with example
keys). Best of --repeat interleaved runs; target: ours <= 2x the baseline. A second line does
the same with a two-column key (informational).

(Until issue 19 a third line compared the table.write preview's text alone with the text
and the structured preview made side by side; there is now one build, the text rendered from
the structured preview, so that comparison is gone.)

The script reports; it never gates: it prints PASS/FAIL per target and exits 0.
"""

from __future__ import annotations

import argparse
import functools
import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from jupyter_approvals.previews.table_diff import diff_rows  # noqa: E402

TARGET_RATIO = 2.0
#: The structured and text preview together, against the text preview alone.


def best_of(repeat: int, *runs: Callable[[], object]) -> list[tuple[float, float]]:
    """Best and median wall time of each callable, runs interleaved so drift hits all alike."""
    times: list[list[float]] = [[] for _ in runs]
    for _ in range(repeat):
        for i, run in enumerate(runs):
            gc.collect()
            start = time.perf_counter()
            run()
            times[i].append(time.perf_counter() - start)
    return [(min(samples), statistics.median(samples)) for samples in times]


def frames(rows: int) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, int]]:
    """Old and new versions of a seeded table, and the changes made between them."""
    rng = np.random.default_rng(42)
    old = pd.DataFrame(
        {
            "id": np.arange(rows, dtype=np.int64),
            "region": rng.integers(0, 8, rows),
            "units": rng.integers(0, 10_000, rows),
            "price": rng.random(rows) * 100,
            "label": pd.Series(rng.integers(0, 50_000, rows)).map("item-{}".format),
        }
    )
    new = old.copy()
    changed = rng.choice(rows, rows // 100, replace=False)
    new.loc[changed, "price"] += 1.0
    removed = rng.choice(rows, rows // 200, replace=False)
    new = new.drop(index=removed)
    added = old.sample(n=rows // 200, random_state=1).assign(id=lambda f: f["id"] + rows)
    new = pd.concat([new, added]).sample(frac=1, random_state=2).reset_index(drop=True)
    expected = {
        "changed": len(np.setdiff1d(changed, removed)),
        "removed": len(removed),
        "added": len(added),
    }
    return old, new, expected


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    old, new, expected = frames(args.rows)
    print(f"rows: {len(old):,} old, {len(new):,} new; pandas {pd.__version__}")

    result = diff_rows(pd, old, new, ["id"])
    found = {"changed": result.changed, "removed": result.removed, "added": result.added}
    print(f"changes made: {expected}; found: {found}: {'OK' if found == expected else 'WRONG'}")

    for label, key, target in (
        ("key id", ["id"], TARGET_RATIO),
        ("key (region, id)", ["region", "id"], None),
    ):
        (base, base_median), (ours, ours_median) = best_of(
            args.repeat,
            functools.partial(pd.merge, old, new, on=key, how="outer", indicator=True),
            functools.partial(diff_rows, pd, old, new, key),
        )
        ratio = ours / base
        verdict = "info" if target is None else ("PASS" if ratio <= target else "FAIL")
        target_text = "-" if target is None else f"<= {target:g}x"
        print(
            f"{label}: merge+indicator {base:.3f} s, diff_rows {ours:.3f} s, "
            f"ratio {ratio:.2f}x (target {target_text}) {verdict}; medians "
            f"{base_median:.3f} s and {ours_median:.3f} s, {ours_median / base_median:.2f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
