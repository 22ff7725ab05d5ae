"""Many kernels decided through REST at once: every approved call runs exactly once, and the
journal stays whole (issue 11, faults)."""

from __future__ import annotations

import asyncio
import json
from collections import Counter

from tests.kernel.helpers import HUMAN_PAUSE_S
from tests.server.conftest import printed
from tests.server.test_rest import post_decision

KERNELS = 8
CALLS = 100
#: A kernel holds at most this many pending requests (the default max_pending).
BATCH = 20

SETUP = """
import json
import jupyter_approvals as ja
runs = []

@ja.protected("bench.write", summary="Write item {n}")
def mark(n):
    runs.append(n)
    return n

def ask(numbers):
    found = []
    for n in numbers:
        try:
            mark(n)
        except ja.ApprovalPending as pending:
            found.append(pending.details)
        except ja.ApprovalRejected:
            found.append("rejected")
    print(json.dumps(found))
"""


async def test_eight_kernels_decided_concurrently_run_each_approved_call_once(
    jp_fetch, kernels, state_dir
):
    # Given 8 kernels, each to make 100 protected calls, at most 20 pending at once
    started = [await kernels(f"load-{index}.ipynb") for index in range(KERNELS)]
    for kernel in started:
        assert (await kernel.run(SETUP))["status"] == "ok"
    rejected: dict[str, set[int]] = {kernel.id: set() for kernel in started}
    for first in range(0, CALLS, BATCH):
        numbers = list(range(first, first + BATCH))
        # When every kernel opens a batch of requests...
        asked = await asyncio.gather(*(kernel.run(f"ask({numbers})") for kernel in started))
        batches = [json.loads(printed(result)) for result in asked]
        assert all(len(batch) == BATCH for batch in batches)
        await asyncio.sleep(HUMAN_PAUSE_S)
        # ...and a person's sidebar decides all of them at once (every tenth is rejected)
        decisions = []
        for kernel, batch in zip(started, batches, strict=True):
            for n, pending in zip(numbers, batch, strict=True):
                decision = "reject" if n % 10 == 0 else "approve"
                if decision == "reject":
                    rejected[kernel.id].add(n)
                body = {"decision": decision, "fingerprint": pending["fingerprint"]}
                decisions.append(post_decision(jp_fetch, kernel.id, pending["request_id"], body))
        verdicts = await asyncio.gather(*decisions)
        assert {(status, verdict["ok"]) for status, verdict in verdicts} == {(200, True)}
        # ...and the kernels call again with the same arguments: only the rejections remain
        again = await asyncio.gather(*(kernel.run(f"ask({numbers})") for kernel in started))
        refused = ["rejected" for n in numbers if n % 10 == 0]
        assert [json.loads(printed(result)) for result in again] == [refused] * KERNELS

    # Then in every kernel each approved call ran exactly once, and no rejected one ran
    for kernel in started:
        runs = json.loads(printed(await kernel.run("print(json.dumps(runs))")))
        assert Counter(runs) == Counter(n for n in range(CALLS) if n not in rejected[kernel.id])
    # And every journal line is whole, each request requested and decided once, each approved
    # one executed once
    lines = []
    for path in sorted((state_dir / "decisions").glob("*.jsonl")):
        lines.extend(json.loads(line) for line in path.read_text().splitlines())
    events = Counter((line["request_id"], line["event"]) for line in lines)
    requested = {request for request, event in events if event == "requested"}
    assert len(requested) == KERNELS * CALLS
    for request in requested:
        decided = events[(request, "approved")] + events[(request, "rejected")]
        assert (events[(request, "requested")], decided) == (1, 1)
        assert events[(request, "executed")] == events[(request, "approved")]
