"""The agent gate's benchmark runs end to end on tiny sizes, so it cannot break unnoticed.

Only that it runs and reports is checked here; its figures are read from a full run
(benchmarks/README.md), never asserted in a test.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_agent_gate.py"


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
