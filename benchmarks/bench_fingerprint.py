"""Fingerprint throughput and memory against plain hashlib, measured in one run.

    python benchmarks/bench_fingerprint.py [--size-mib 1024] [--repeat 3]

Workloads (each SIZE MiB): a float64 numpy array, a DataFrame of 8 float64 columns, and a
file in a temporary directory (removed afterwards). For each, the baseline is hashlib.sha256
over the same buffers (for the file: a plain read-and-hash loop); for the DataFrame on as many
threads as fingerprint() hashes its columns on, since hashing columns side by side is not what
the encoding adds. The ratio is baseline time / fingerprint time over --repeat interleaved
runs, from the best runs (ratio) and from the median runs (median ratio). Peak extra memory of
fingerprinting the file is measured in a fresh subprocess (tracemalloc and peak RSS).

The script reports; it never gates: it prints PASS/FAIL per target and exits 0.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from jupyter_approvals.core.fingerprint import FileContent, fingerprint  # noqa: E402
from jupyter_approvals.core.fingerprint.pandas_values import PARALLEL_MIN_BYTES  # noqa: E402

MIB = 1 << 20
TARGET_ARRAY = 0.85
TARGET_FRAME = 0.85
TARGET_FILE = 0.90
TARGET_FILE_MEMORY_MIB = 64.0

MEMORY_PROBE = r"""
import json, os, resource, sys, tracemalloc
sys.path.insert(0, sys.argv[2])
from jupyter_approvals.core.fingerprint import FileContent, fingerprint

def status(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return None

fingerprint(FileContent(__file__ if False else sys.argv[1] + ".missing"))  # warm the code path
reset = False
try:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets the peak RSS (VmHWM) to the current RSS
    reset = True
except OSError:
    pass
rss_before = status("VmRSS")
maxrss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
tracemalloc.start()
fingerprint(FileContent(sys.argv[1]))
_, traced_peak = tracemalloc.get_traced_memory()
tracemalloc.stop()
hwm_after = status("VmHWM")
maxrss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
if reset and hwm_after is not None and rss_before is not None:
    rss_extra = hwm_after - rss_before
else:  # no reset: peak since start minus current before (an over-estimate)
    rss_extra = maxrss_after - (rss_before or maxrss_before)
print(json.dumps({"traced_peak": traced_peak, "rss_extra": rss_extra, "hwm_reset": reset}))
"""


Times = tuple[float, float]  # (best, median) wall time of one callable, seconds


def timed_runs(repeat: int, *runs: Callable[[], object]) -> list[Times]:
    """Best and median wall time of each callable, runs interleaved so drift hits all alike."""
    samples: list[list[float]] = [[] for _ in runs]
    for _ in range(repeat):
        for i, run in enumerate(runs):
            gc.collect()
            start = time.perf_counter()
            run()
            samples[i].append(time.perf_counter() - start)
    return [(min(times), statistics.median(times)) for times in samples]


def hashing_threads(frame_bytes: int) -> int:
    """Threads fingerprint() hashes a frame's numeric columns on (pandas_values.py): as many
    as this process may run on, up to 8, from PARALLEL_MIN_BYTES of such columns on."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return min(usable or 1, 8) if frame_bytes >= PARALLEL_MIN_BYTES else 1


def machine_facts() -> dict[str, str]:
    cpu = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "date": datetime.date.today().isoformat(),
        "nproc": str(os.cpu_count()),
        "cpu": cpu,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pandas": pd.__version__,
        "openssl": __import__("ssl").OPENSSL_VERSION,
    }


def bench_array(size: int, repeat: int) -> tuple[Times, Times]:
    array = np.random.default_rng(0).random(size // 8)
    base, ours = timed_runs(
        repeat, lambda: hashlib.sha256(array).digest(), lambda: fingerprint(array)
    )
    return base, ours


def bench_frame(size: int, repeat: int, threads: int) -> tuple[Times, Times]:
    rows = size // 8 // 8
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({f"c{i}": rng.random(rows) for i in range(8)})
    buffers = [frame[c].to_numpy() for c in frame.columns]

    def digest(buffer: np.ndarray) -> bytes:
        return hashlib.sha256(buffer).digest()

    def baseline() -> None:
        if threads < 2:
            for buffer in buffers:
                digest(buffer)
            return
        # As fingerprint() does it: a pool per call, the columns hashed side by side.
        with ThreadPoolExecutor(max_workers=threads) as pool:
            list(pool.map(digest, buffers))

    base, ours = timed_runs(repeat, baseline, lambda: fingerprint(frame))
    return base, ours


def bench_strided(size: int, repeat: int) -> tuple[Times, Times]:
    """Informational: a non-contiguous view (every other column of a 2-D array)."""
    wide = np.random.default_rng(2).random((size // 8 // 8, 16))
    view = wide[:, ::2]
    copy = np.ascontiguousarray(view)
    base, ours = timed_runs(
        repeat, lambda: hashlib.sha256(copy).digest(), lambda: fingerprint(view)
    )
    return base, ours


def bench_file(path: Path, repeat: int) -> tuple[Times, Times]:
    def baseline() -> None:
        hasher = hashlib.sha256()
        with open(path, "rb") as handle:
            while chunk := handle.read(MIB):
                hasher.update(chunk)
        hasher.digest()

    base, ours = timed_runs(repeat, baseline, lambda: fingerprint(FileContent(path)))
    return base, ours


def write_file(path: Path, size: int) -> None:
    block = np.random.default_rng(3).bytes(16 * MIB)
    with open(path, "wb") as handle:
        left = size
        while left > 0:
            handle.write(block[: min(left, len(block))])
            left -= len(block)
        handle.flush()
        os.fsync(handle.fileno())


def file_memory(path: Path) -> dict[str, float]:
    result = subprocess.run(
        [sys.executable, "-c", MEMORY_PROBE, str(path), str(REPO)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def row(name: str, size: int, base: Times, ours: Times, target: float | None) -> str:
    """One table row; the verdict is on the best runs' ratio."""
    ratio, median_ratio = base[0] / ours[0], base[1] / ours[1]
    verdict = "info" if target is None else ("PASS" if ratio >= target else "FAIL")
    target_text = "-" if target is None else f">= {target:.2f}"
    return (
        f"| {name} | {size / MIB:.0f} | {size / MIB / base[0]:,.0f} "
        f"| {size / MIB / ours[0]:,.0f} | {ratio:.3f} | {median_ratio:.3f} | {target_text} "
        f"| {verdict} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=1024, help="size of each workload")
    parser.add_argument(
        "--repeat", type=int, default=5, help="interleaved runs; best and median kept"
    )
    args = parser.parse_args()
    size = args.size_mib * MIB
    threads = hashing_threads(size)

    facts = machine_facts()
    print("machine: " + ", ".join(f"{k}={v}" for k, v in facts.items()))
    print(f"runs per measure: {args.repeat}, interleaved; MiB/s from the best run")
    print(f"DataFrame columns hashed on {threads} thread(s), by fingerprint() and by hashlib")
    print()
    print(
        "| workload | MiB | hashlib MiB/s | fingerprint MiB/s | ratio | median ratio | target "
        "| result |"
    )
    print("|---|---:|---:|---:|---:|---:|---|---|")
    print(row("numpy float64 array", size, *bench_array(size, args.repeat), TARGET_ARRAY))
    gc.collect()
    frame = bench_frame(size, args.repeat, threads)
    print(row(f"DataFrame, 8 float64 columns, {threads} thread(s)", size, *frame, TARGET_FRAME))
    gc.collect()
    print(row("non-contiguous array view", size, *bench_strided(size, args.repeat), None))
    gc.collect()
    with tempfile.TemporaryDirectory(prefix="bench-fingerprint-") as tmp:
        path = Path(tmp) / "content.bin"
        write_file(path, size)
        print(row("file (read + hash)", size, *bench_file(path, args.repeat), TARGET_FILE))
        memory = file_memory(path)
    rss = memory["rss_extra"] / MIB
    traced = memory["traced_peak"] / MIB
    verdict = "PASS" if max(rss, traced) < TARGET_FILE_MEMORY_MIB else "FAIL"
    print()
    print(
        f"file peak extra memory: RSS {rss:.1f} MiB, tracemalloc {traced:.2f} MiB "
        f"(target < {TARGET_FILE_MEMORY_MIB:.0f} MiB): {verdict}"
        + ("" if memory["hwm_reset"] else " [peak RSS not resettable: over-estimate]")
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
