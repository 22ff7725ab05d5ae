"""Decisions the server refuses before any kernel sees them are journaled, within budgets
(docs/protocol.md section 5, ``refused`` with ``source: "rest"``)."""

from __future__ import annotations

import asyncio
import json

from tests.conftest import journal_lines
from tests.kernel.helpers import HUMAN_PAUSE_S, SETUP
from tests.server.agent_client import add_agent, call
from tests.server.test_rest import API, post_decision


def rest_refusals(state_dir) -> list[dict]:
    return [
        line
        for line in journal_lines(state_dir)
        if line["event"] == "refused" and line.get("source") == "rest"
    ]


async def test_an_agents_decision_is_refused_and_journaled_with_its_name(
    jp_fetch, kernels, state_dir
):
    # Given a person's pending request and a registered agent
    kernel = await kernels()
    await kernel.run(SETUP)
    pending = await kernel.pending_call("save('x', 'x.txt')")
    token = add_agent(state_dir, "bot")
    # When the agent posts an approval of it
    body = {"decision": "approve", "fingerprint": pending["fingerprint"]}
    status, _, answer = await call(
        jp_fetch,
        API,
        "pending",
        kernel.id,
        pending["request_id"],
        method="POST",
        body=json.dumps(body),
        token=token,
    )
    # Then it is refused, and the journal says who tried what on which request
    assert (status, answer["code"]) == (403, "APPROVAL_AGENT_FORBIDDEN")
    [line] = rest_refusals(state_dir)
    assert line["code"] == "APPROVAL_AGENT_FORBIDDEN"
    assert (line["agent"], line["request_id"], line["kernel_id"]) == (
        "bot",
        pending["request_id"],
        kernel.id,
    )


async def test_a_decision_from_another_origin_is_journaled_with_the_origin(
    jp_fetch, kernels, state_dir
):
    kernel = await kernels()
    await kernel.run(SETUP)
    pending = await kernel.pending_call("save('x', 'x.txt')")
    body = {"decision": "approve", "fingerprint": pending["fingerprint"]}
    status, verdict = await post_decision(
        jp_fetch, kernel.id, pending["request_id"], body, headers={"Origin": "http://evil.test"}
    )
    assert (status, verdict["code"]) == (403, "APPROVAL_CROSS_ORIGIN")
    [line] = rest_refusals(state_dir)
    assert (line["code"], line["origin"], line["attempted"]) == (
        "APPROVAL_CROSS_ORIGIN",
        "http://evil.test",
        "approve",
    )


async def test_a_flood_of_made_up_ids_is_counted_and_does_not_silence_a_real_refusal(
    jp_fetch, kernels, state_dir
):
    # Given a pending request, and someone posting decisions for 30 made-up request ids
    kernel = await kernels()
    await kernel.run(SETUP)
    pending = await kernel.pending_call("save('x', 'x.txt')")
    fake = {"decision": "approve", "fingerprint": "sha256:" + "0" * 64}
    for n in range(30):
        await post_decision(jp_fetch, kernel.id, f"made-up-{n}", fake)
    # When the person's own decision for the real request is refused (the kernel is busy)
    running = kernel.client.execute("import time; time.sleep(3)")
    await asyncio.sleep(0.5)
    await asyncio.sleep(HUMAN_PAUSE_S)
    real = {"decision": "approve", "fingerprint": pending["fingerprint"]}
    status, verdict = await post_decision(jp_fetch, kernel.id, pending["request_id"], real)
    await kernel.client._async_recv_reply(running, timeout=30)
    # Then the made-up ids have 20 lines, the last saying the rest are not written, and the
    # real refusal has its own line
    assert (status, verdict["code"]) == (503, "APPROVAL_KERNEL_BUSY")
    lines = rest_refusals(state_dir)
    unlisted = [line for line in lines if "attempted_request_id" in line]
    assert len(unlisted) == 20
    assert unlisted[-1]["further_refusals_not_journaled"] is True
    [mine] = [line for line in lines if line.get("request_id") == pending["request_id"]]
    assert mine["code"] == "APPROVAL_KERNEL_BUSY"


async def test_a_refused_decision_of_held_code_is_journaled(jp_fetch, state_dir):
    # Given no held request of that id, When a person posts a decision for it
    body = {"decision": "approve", "fingerprint": "sha256:" + "0" * 64}
    status, _, answer = await call(
        jp_fetch, API, "held", "0123456789abcdef", method="POST", body=json.dumps(body)
    )
    # Then it is refused and journaled as the server's refusal of held code
    assert (status, answer["code"]) == (404, "APPROVAL_UNKNOWN_REQUEST")
    [line] = rest_refusals(state_dir)
    assert (line["held_at"], line["attempted_request_id"]) == ("server", "0123456789abcdef")


async def test_a_deeply_nested_body_is_a_malformed_decision(jp_fetch, kernels, state_dir):
    # Given a pending request, When a body nested deeper than the parser goes is posted
    kernel = await kernels()
    await kernel.run(SETUP)
    pending = await kernel.pending_call("save('x', 'x.txt')")
    status, _, answer = await call(
        jp_fetch, API, "pending", kernel.id, pending["request_id"], method="POST", body="[" * 10000
    )
    # Then it is refused with a code, and journaled
    assert (status, answer["code"]) == (400, "APPROVAL_MALFORMED_DECISION")
    assert [line["code"] for line in rest_refusals(state_dir)] == ["APPROVAL_MALFORMED_DECISION"]
