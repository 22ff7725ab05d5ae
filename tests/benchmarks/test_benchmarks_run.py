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

#: Each benchmark, its tiny arguments, and a line its report always prints.
TINY = [
    ("bench_gate.py", ["--rounds", "50"], "approved protected no-op, median:"),
    ("bench_fingerprint.py", ["--size-mib", "1", "--repeat", "1"], "file peak extra memory:"),
    ("bench_diff.py", ["--lines", "2000", "--repeat", "1"], "ours (all hunks) / git ="),
    ("bench_table_diff.py", ["--rows", "2000", "--repeat", "1"], "key id: merge+indicator"),
    ("bench_table_write.py", ["--size-mib", "1", "--repeat", "1"], "ratio protected / plain"),
    ("bench_large_csv.py", ["--size-mib", "1", "--repeat", "1"], "ratio preview / table diff"),
    pytest.param(
        "bench_pending.py",
        ["--kernels", "2", "--per-kernel", "1", "--busy", "1", "--rounds", "2"],
        "p95 ratio:",
        marks=pytest.mark.kernel,
    ),
    (
        "bench_journal.py",
        ["--lines", "3000", "--repeat", "1", "--status-requests", "5"],
        "page ratio, worst:",
    ),
    pytest.param(
        "bench_sandbox.py",
        ["--starts", "1", "--executes", "3", "--small", "5", "--large", "50", "--repeat", "1"],
        "change set, large / small project:",
        marks=pytest.mark.kernel,
    ),
    pytest.param(
        "bench_sidebar.py",
        ["--kernels", "1", "--per-kernel", "2", "--window", "2", "--pages", "2", "--reopens", "2"],
        "row rebuilds during 2 s of unchanged polls",
        marks=pytest.mark.e2e,
    ),
]


def run_benchmark(
    tmp_path: Path, script: str, *arguments: str, timeout: float = 300, python: str | None = None
) -> str:
    """Run one benchmark script to its end; its report (it must exit 0)."""
    done = subprocess.run(
        [python or sys.executable, str(BENCHMARKS / script), *arguments],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize(("script", "arguments", "reports"), TINY)
def test_the_benchmark_runs_on_tiny_sizes_and_reports(tmp_path, script, arguments, reports):
    # When the benchmark runs on tiny sizes, Then it finished and printed its report
    report = run_benchmark(tmp_path, script, *arguments)
    assert reports in report
    assert "target" in report or "info" in report


@pytest.mark.kernel  # its servers start kernels
def test_the_agent_gate_benchmark_runs_and_reports_both_ratios(tmp_path):
    # When the benchmark runs with a few requests: 20 held ones per batch, more than one
    # agent may have pending, so that batches take a fresh agent as the full run does
    report = run_benchmark(
        tmp_path,
        "bench_agent_gate.py",
        "--requests",
        "40",
        "--batches",
        "2",
        "--output-mb",
        "0,0.05",
        "--output-repeats",
        "1",
        timeout=240,
    )
    # Then it finished and printed every ratio with its target
    assert "person through the gate / plain:" in report
    assert "agent held and answered / plain execute:" in report
    assert "(target <= 1.1x)" in report
    assert "(target <= 2x)" in report
    assert "person's cell printing 0 MB:" in report
    assert "person's cell printing 0.05 MB:" in report
    assert "(target <= 1.05x)" in report


def test_the_held_write_benchmark_runs_and_reports_its_ratio(tmp_path):
    report = run_benchmark(
        tmp_path, "bench_held_write.py", "--lines", "2000", "--repeat", "1", timeout=240
    )
    assert "held write, preview ready:" in report
    assert "(target <= 2x)" in report


@pytest.mark.kernel
def test_the_agent_load_benchmark_runs_and_reports_its_ratio(tmp_path):
    # Given the agent virtualenv (jupyter-collaboration, for the agent's room edits)
    from tests.e2e.lab import venv_python

    python = venv_python("AGENT_PYTHON", "the agent load benchmark", "jupyter-collaboration")
    # When the benchmark runs on tiny sizes
    report = run_benchmark(
        tmp_path,
        "bench_agent_load.py",
        "--write-mb",
        "1",
        "--edits",
        "5",
        "--notebook-mb",
        "0.1",
        "--requests",
        "10",
        "--rounds",
        "2",
        timeout=240,
        python=python,
    )
    # Then it finished and printed the person's ratio with its target
    assert "person under an agent's load / idle, p95, median of rounds:" in report
    assert "(target <= 1.5x)" in report
    assert "round 2: idle" in report
