"""The server's own record of each decision it relays to a kernel: written before the kernel
sees the decision, with the row the person was shown, beside the kernel's lines."""

from __future__ import annotations

import asyncio
import hashlib
import json

import pytest

from tests.kernel.helpers import HUMAN_PAUSE_S, SETUP

from .agent_client import KernelSocket
from .test_rest import listed_idle

pytestmark = pytest.mark.timeout(120)

API = "jupyter-approvals/api"


async def relayed_lines(jp_fetch) -> list[dict]:
    """The journal's relayed lines, once there is one (within 5 s)."""
    for _ in range(50):
        response = await jp_fetch(API, "journal")
        relayed = [e for e in json.loads(response.body)["entries"] if e["event"] == "relayed"]
        if relayed:
            return relayed
        await asyncio.sleep(0.1)
    return []


@pytest.mark.parametrize("v1", [True, False], ids=["v1-protocol", "json-protocol"])
async def test_a_card_decision_passing_the_websocket_is_recorded_with_the_row_shown(
    jp_fetch, jp_http_port, jp_base_url, jp_serverapp, kernels, v1
):
    # Given a pending request the server lists, and a person's kernel websocket
    kernel = await kernels()
    await kernel.run(SETUP)
    pending = await kernel.pending_call("save('data', 'relay.txt')")
    listed = json.loads((await jp_fetch(API, "pending")).body)["pending"]
    [row] = [r for r in listed if r["id"] == pending["request_id"]]
    token = jp_serverapp.identity_provider.token
    socket = await KernelSocket.open(jp_http_port, jp_base_url, kernel.id, token, v1=v1)
    try:
        # When a card's decision message passes the server on its way to the kernel
        decision = {
            "op": "decide",
            "id": pending["request_id"],
            "decision": "reject",
            "fingerprint": pending["fingerprint"],
            "reason": "not now",
        }
        await socket.send(
            "comm_msg", {"comm_id": "card-comm", "data": {"method": "custom", "content": decision}}
        )
        # Then the server journals it, with what the row showed the person
        relayed = await relayed_lines(jp_fetch)
    finally:
        socket.close()
    [line] = relayed
    assert line["request_id"] == pending["request_id"]
    assert (line["channel"], line["decision"], line["recorded_by"]) == ("card", "reject", "server")
    assert line["kernel_id"] == kernel.id
    assert line["shown_summary"] == row["summary"]
    assert line["shown_fingerprint"] == row["fingerprint"]
    assert line["shown_preview_sha256"] == hashlib.sha256(row["preview"].encode()).hexdigest()
    assert line["listed"] is True


async def test_a_decision_for_a_request_the_server_does_not_list_says_so(
    jp_fetch, jp_http_port, jp_base_url, jp_serverapp, kernels
):
    # Given a person's websocket to a kernel with nothing pending
    kernel = await kernels()
    await kernel.run(SETUP)
    token = jp_serverapp.identity_provider.token
    socket = await KernelSocket.open(jp_http_port, jp_base_url, kernel.id, token)
    try:
        # When a decision for a request the server never listed passes
        decision = {"op": "decide", "id": "0" * 16, "decision": "approve", "fingerprint": "x"}
        await socket.send("comm_msg", {"comm_id": "endpoint", "data": decision})
        relayed = await relayed_lines(jp_fetch)
    finally:
        socket.close()
    # Then the record says it was not listed, and names no row
    [line] = relayed
    assert (line["listed"], line["channel"]) == (False, "comm")
    assert "shown_summary" not in line


async def test_the_history_shows_an_approval_recorded_with_another_summary_than_shown(
    jp_fetch, kernels
):
    # Given a pending request whose summary code in the kernel rewrote in the kernel's own
    # record after the person's row was listed (T3: it patches the store), and then had the
    # kernel publish its listing again
    kernel = await kernels()
    await kernel.run(SETUP)
    pending = await kernel.pending_call("save('data', 'rewritten.txt')")
    row = await listed_idle(jp_fetch, pending["request_id"])
    await kernel.run(
        "from jupyter_approvals.kernel.session import KernelSession\n"
        "session = KernelSession.current()\n"
        f"session.store._table.lookup({pending['request_id']!r}).summary = "
        "'Write a harmless scratch file'\n"
        "session.endpoint.broadcast_changed()"
    )
    # When the person reads the sidebar again and approves the row
    await asyncio.sleep(HUMAN_PAUSE_S)
    again = json.loads((await jp_fetch(API, "pending")).body)["pending"]
    [row_again] = [r for r in again if r["id"] == pending["request_id"]]
    body = json.dumps({"decision": "approve", "fingerprint": pending["fingerprint"]})
    await jp_fetch(API, "pending", kernel.id, pending["request_id"], method="POST", body=body)
    # Then the sidebar kept showing what was first listed, and the History names the
    # disagreement: what the person approved, what the kernel says
    assert row_again["summary"] == row["summary"]
    page = json.loads((await jp_fetch(API, "journal")).body)
    found = [d for d in page["disagreements"] if d["request_id"] == pending["request_id"]]
    assert [d["kind"] for d in found] == ["summary_rewritten"]
    assert row["summary"] in found[0]["detail"]
    assert "harmless scratch" in found[0]["detail"]
