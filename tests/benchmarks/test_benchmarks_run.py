"""Every benchmark runs end to end on tiny sizes, so none can break unnoticed.

Only that each runs and reports is checked here (an exception fails, a ratio never does);
the figures are read from a full run (benchmarks/README.md), never asserted in a test.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
SCRIPT = BENCHMARKS / "bench_agent_gate.py"

#: Each benchmark, its tiny arguments, and a line its report always prints.
TINY = [
    ("bench_gate.py", ["--rounds", "50"], "approved protected no-op, median:"),
    ("bench_fingerprint.py", ["--size-mib", "1", "--repeat", "1"], "file peak extra memory:"),
    ("bench_diff.py", ["--lines", "2000", "--repeat", "1"], "ours (all hunks) / git ="),
    ("bench_table_diff.py", ["--rows", "2000", "--repeat", "1"], "key id: merge+indicator"),
    ("bench_table_write.py", ["--size-mib", "1", "--repeat", "1"], "ratio protected / plain"),
    pytest.param(
        "bench_pending.py",
        ["--kernels", "1", "--per-kernel", "1", "--rounds", "2"],
        "GET pending, median:",
        marks=pytest.mark.kernel,
    ),
    pytest.param(
        "bench_sidebar.py",
        ["--kernels", "1", "--per-kernel", "2", "--window", "2"],
        "row rebuilds during 2 s of unchanged polls",
        marks=pytest.mark.e2e,
    ),
]


@pytest.mark.parametrize(("script", "arguments", "reports"), TINY)
def test_the_benchmark_runs_on_tiny_sizes_and_reports(tmp_path, script, arguments, reports):
    # When the benchmark runs on tiny sizes
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *arguments],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
        cwd=tmp_path,
    )
    # Then it finished and printed its report
    assert done.returncode == 0, done.stderr
    assert reports in done.stdout
    assert "target" in done.stdout or "info" in done.stdout


def test_the_agent_gate_benchmark_runs_and_reports_both_ratios(tmp_path):
    # When the benchmark runs with a handful of requests
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--requests", "4", "--batches", "2"],
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
        cwd=tmp_path,
    )
    # Then it finished and printed both ratios with their targets
    assert done.returncode == 0, done.stderr
    assert "person through the gate / plain:" in done.stdout
    assert "agent held and answered / plain execute:" in done.stdout
    assert "(target <= 1.1x)" in done.stdout
    assert "(target <= 2x)" in done.stdout


def test_the_held_write_benchmark_runs_and_reports_its_ratio(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            str(BENCHMARKS / "bench_held_write.py"),
            "--lines",
            "2000",
            "--repeat",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "held write, preview ready:" in done.stdout
    assert "(target <= 2x)" in done.stdout
