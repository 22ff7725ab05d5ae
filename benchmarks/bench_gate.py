"""The approved path of a protected no-op, against the floor of one durable journal line.

Measured in one run, in one process, on the same disk:

- baseline: one 200-byte append to a file in the journal's directory, with fsync;
- approved path: calling a protected no-op with a small argument that a person approved
  (fingerprint, redeem, lease, run, and the journal's "executed" line with its fsync).

The approval itself (request, the person's decision) happens before each timed call and is
not timed: that is the person's time, not the machine's. Target: median ratio <= 2x.

    python benchmarks/bench_gate.py [--rounds 300]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import jupyter_approvals as ja
from jupyter_approvals.core.policy import ManualClock
from jupyter_approvals.kernel.session import KernelSession

TARGET_RATIO = 2.0


def fsynced_appends(directory: Path, rounds: int) -> list[float]:
    line = (b"x" * 199) + b"\n"
    path = directory / "baseline.jsonl"
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)
        times.append(time.perf_counter() - start)
    return times


def approved_calls(session: KernelSession, clock: ManualClock, rounds: int) -> list[float]:
    @ja.protected("bench.noop", summary="No-op {n}")
    def noop(n: int, label: str) -> int:
        return n

    times = []
    for i in range(rounds):
        try:
            noop(i, "small")
        except ja.ApprovalPending as pending:
            request_id = pending.details["request_id"]
            fp = pending.details["fingerprint"]
        clock.advance(2)
        session.store.decide(request_id, "approve", fp, channel="bench")
        start = time.perf_counter()
        noop(i, "small")
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        project = root / "project"
        project.mkdir()
        os.environ["JUPYTER_APPROVALS_STATE_DIR"] = str(root / "state")
        clock = ManualClock()
        session = KernelSession.install(KernelSession(None, clock=clock, cwd=project))
        # No frontend exists in this process, so the benchmark decides directly: what it
        # measures is the approved path (claim, lease, run, journal), not the decision.
        session.store.decision_guard = None
        approved_calls(session, clock, 20)  # warm up imports and the journal file
        journal_dir = session.journal.path.parent
        fsynced_appends(journal_dir, 20)
        # Interleave the two in blocks so disk hiccups hit both alike.
        base, gate = [], []
        for _ in range(max(1, args.rounds // 50)):
            base += fsynced_appends(journal_dir, 50)
            gate += approved_calls(session, clock, 50)
        base_ms = statistics.median(base) * 1000
        gate_ms = statistics.median(gate) * 1000
        ratio = gate_ms / base_ms
        verdict = "PASS" if ratio <= TARGET_RATIO else "FAIL"
        print(f"rounds: {len(gate)}")
        print(f"fsync'd 200-byte append, median: {base_ms:.3f} ms")
        print(f"approved protected no-op, median: {gate_ms:.3f} ms")
        print(f"ratio: {ratio:.2f}x (target <= {TARGET_RATIO:g}x) {verdict}")


if __name__ == "__main__":
    main()
