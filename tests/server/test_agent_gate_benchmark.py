"""The agent gate's benchmarks run end to end on tiny sizes, so they cannot break unnoticed.

Only that it runs and reports is checked here; its figures are read from a full run
(benchmarks/README.md), never asserted in a test.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
SCRIPT = BENCHMARKS / "bench_agent_gate.py"


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
