"""What protecting ``write_table`` adds to writing a 1 GiB DataFrame as Parquet.

    python benchmarks/bench_table_write.py [--size-mib 1024] [--repeat 3]

Workload: a seeded DataFrame of 16 float64 columns, SIZE MiB in all (1 GiB: ~134M values).
Measured in one run, interleaved, each write to a fresh file in one temporary directory:

- baseline, the write's own time: the very write ``write_table`` does, unprotected: pyarrow
  writing to a temporary file next to the target, fsync, rename (``atomic_path`` +
  ``write_frame``);
- plain pandas, for information: ``df.to_parquet(path, index=False)`` with no durability;
- protected: the second call of ``write_table(df, path)`` after a person approved the first
  one (in-process session, as in tests/ops/conftest.py): it recomputes the fingerprint (sha256
  over every column, plus the target's state), redeems the approval, writes through
  ``atomic_path`` (temporary file, fsync, rename) and journals the outcome. Asking and
  approving happen before the timed call: that is the person's time, not the machine's.

Target: protected <= 1.2x the write's own time: what protecting adds (fingerprint, claim,
journal) is at most 20%. Also printed: the fingerprint of the frame alone, and the ratio to plain
pandas, which includes the durability (fsync) and atomicity the protected write always has.
Peak RSS of the process is printed at the end.

The script reports; it never gates: it prints PASS/FAIL per target and exits 0.
"""

from __future__ import annotations

import argparse
import functools
import gc
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import jupyter_approvals as ja  # noqa: E402
from jupyter_approvals.core.atomic import atomic_path  # noqa: E402
from jupyter_approvals.core.fingerprint import fingerprint  # noqa: E402
from jupyter_approvals.core.policy import ManualClock  # noqa: E402
from jupyter_approvals.kernel.session import KernelSession  # noqa: E402
from jupyter_approvals.ops import write_table  # noqa: E402
from jupyter_approvals.ops.tables.formats import write_frame  # noqa: E402

MIB = 1 << 20
COLUMNS = 16
TARGET_RATIO = 1.2


def timed(run: Callable[[], object]) -> float:
    gc.collect()
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def unprotected_write(df: pd.DataFrame, path: Path) -> None:
    """What write_table's body does, without the gate."""
    with atomic_path(path) as temp:
        write_frame(df, temp, "parquet", False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=1024, help="size of the frame")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved runs, best kept")
    args = parser.parse_args()
    rows = args.size_mib * MIB // 8 // COLUMNS
    rng = np.random.default_rng(7)
    df = pd.DataFrame({f"c{i:02d}": rng.random(rows) for i in range(COLUMNS)})
    size = df.memory_usage(index=False).sum()
    print(f"frame: {rows:,} rows x {COLUMNS} float64 columns = {size / MIB:,.0f} MiB")

    with tempfile.TemporaryDirectory(prefix="bench-table-write-") as tmp:
        root = Path(tmp)
        work = root / "work"
        work.mkdir()
        os.environ["JUPYTER_APPROVALS_STATE_DIR"] = str(root / "state")
        clock = ManualClock()
        session = KernelSession.install(KernelSession(None, clock=clock, cwd=work))
        session.store.decision_guard = None  # no frontend here: decisions are applied directly

        def protected_call(path: Path) -> float:
            try:
                write_table(df, path)
            except ja.ApprovalPending as pending:
                details = pending.details
            clock.advance(2)
            session.store.decide(details["request_id"], "approve", details["fingerprint"])
            return timed(lambda: write_table(df, path))

        best = {"plain": float("inf"), "protected": float("inf"), "own": float("inf")}
        fp_best = float("inf")
        for round_ in range(args.repeat):
            for name in best:
                path = work / f"{name}-{round_}.parquet"
                if name == "plain":
                    elapsed = timed(functools.partial(df.to_parquet, path, index=False))
                elif name == "own":
                    elapsed = timed(functools.partial(unprotected_write, df, path))
                else:
                    elapsed = protected_call(path)
                best[name] = min(best[name], elapsed)
                written = path.stat().st_size
                path.unlink()
            fp_best = min(fp_best, timed(lambda: fingerprint(df)))
        session.close()

    ratio = best["protected"] / best["own"]
    verdict = "PASS" if ratio <= TARGET_RATIO else "FAIL"
    print(f"parquet file: {written / MIB:,.0f} MiB")
    print(f"plain df.to_parquet (no fsync):  {best['plain']:.3f} s")
    print(f"the write, unprotected:          {best['own']:.3f} s (temporary file, fsync, rename)")
    print(f"fingerprint(df) alone:           {fp_best:.3f} s ({size / MIB / fp_best:,.0f} MiB/s)")
    print(f"approved write_table call:       {best['protected']:.3f} s")
    print(f"ratio protected / the write: {ratio:.2f}x (target <= {TARGET_RATIO:g}x) {verdict}")
    print(f"ratio protected / plain pandas: {best['protected'] / best['plain']:.2f}x (info)")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(f"peak RSS of this process: {peak / MIB:,.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
