"""Cell code rewrites or withholds the kernel's record of a decision (T3: it patches the
kernel's journal writer or store). That is not stopped; it is seen: the server journals each
decision it relays before the kernel sees it, and the History (``GET journal``) names where
the two records disagree once the approval time is over.

The server here is configured with a short approval time so that "over" comes in seconds.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from tornado.httpclient import HTTPClientError
from traitlets.config import Config

from tests.kernel.helpers import HUMAN_PAUSE_S, SETUP

from .conftest import API, decision_body

pytestmark = pytest.mark.timeout(120)

#: The approval time the server judges by, in seconds.
APPROVAL_TTL_S = 3


@pytest.fixture
def jp_server_config():
    return Config(
        {
            "ServerApp": {"jpserver_extensions": {"jupyter_approvals": True}},
            "ApprovalsServer": {"kernel_timeout": 3.0},
            "ApprovalsConfig": {"approval_ttl": APPROVAL_TTL_S},
        }
    )


#: Cell code that keeps the kernel's journal lines of the given events out of the journal.
WITHHOLD = """
from jupyter_approvals.kernel.session import KernelSession
_journal = KernelSession.current()._journal.journal
_append = _journal.append
def _withheld(event, **fields):
    if event not in {events!r}:
        return _append(event, **fields)
_journal.append = _withheld
"""


async def disagreements_of(jp_fetch, request_id: str, kind: str) -> list[dict]:
    """The History's disagreements about ``request_id``, once one of ``kind`` shows (the
    approval time must pass first; within 15 s)."""
    found: list[dict] = []
    for _ in range(150):
        page = json.loads((await jp_fetch(API, "journal")).body)
        found = [d for d in page["disagreements"] if d["request_id"] == request_id]
        if any(d["kind"] == kind for d in found):
            return found
        await asyncio.sleep(0.1)
    return found


async def sidebar_decision(jp_fetch, kernel_id: str, pending: dict, decision: str) -> dict:
    """A person's decision from the sidebar, after reading the row."""
    await asyncio.sleep(HUMAN_PAUSE_S)
    response = await jp_fetch(
        API,
        "pending",
        kernel_id,
        pending["request_id"],
        method="POST",
        body=decision_body(pending["fingerprint"], decision),
    )
    return json.loads(response.body)


async def test_a_rejection_the_kernel_keeps_out_of_its_record_is_named(jp_fetch, kernels):
    # Given a pending request, and cell code that keeps rejections out of the kernel's record
    kernel = await kernels()
    await kernel.run(SETUP)
    pending = await kernel.pending_call("save('x', 'precious.txt')")
    assert (await kernel.run(WITHHOLD.format(events=["rejected"])))["status"] == "ok"
    # When the person rejects it in the sidebar
    verdict = await sidebar_decision(jp_fetch, kernel.id, pending, "reject")
    assert verdict["status"] == "rejected", verdict
    # Then, once the approval time is over, the History says the kernel recorded nothing of
    # the decision the server relayed
    found = await disagreements_of(jp_fetch, pending["request_id"], "not_recorded")
    assert [d["kind"] for d in found] == ["not_recorded"], found


async def test_a_run_whose_line_went_missing_is_named_outcome_unknown(jp_fetch, kernels):
    # Given a request the person approved in the sidebar, and cell code that keeps the run's
    # line out of the kernel's record
    kernel = await kernels()
    await kernel.run(SETUP)
    pending = await kernel.pending_call("save('x', 'precious.txt')")
    verdict = await sidebar_decision(jp_fetch, kernel.id, pending, "approve")
    assert verdict["status"] == "approved", verdict
    assert (await kernel.run(WITHHOLD.format(events=["executed", "failed"])))["status"] == "ok"
    # When the approved call runs
    assert (await kernel.run("save('x', 'precious.txt')"))["status"] == "ok"
    # Then, once the approval time is over, the History says its outcome is unknown
    found = await disagreements_of(jp_fetch, pending["request_id"], "outcome_unknown")
    assert [d["kind"] for d in found] == ["outcome_unknown"], found


async def test_a_rejection_turned_into_an_approval_in_the_kernel_is_named(jp_fetch, kernels):
    # Given a pending request, and cell code that switches off the frontend guard (which
    # refuses a decision other than the one the person's message carries) and makes the
    # store approve whatever it is told
    kernel = await kernels()
    await kernel.run(SETUP)
    pending = await kernel.pending_call("save('x', 'precious.txt')")
    turn_around = (
        "from jupyter_approvals.kernel.session import KernelSession\n"
        "_store = KernelSession.current().store\n"
        "_store.decision_guard = lambda *args: None\n"
        "_decide = _store.decide\n"
        "_store.decide = lambda rid, decision, *rest: _decide(rid, 'approve', *rest)\n"
    )
    assert (await kernel.run(turn_around))["status"] == "ok"
    # When the person rejects it in the sidebar
    await sidebar_decision(jp_fetch, kernel.id, pending, "reject")
    # Then the History says the server relayed a rejection and the kernel recorded an approval
    found = await disagreements_of(jp_fetch, pending["request_id"], "turned_around")
    assert "turned_around" in [d["kind"] for d in found], found
    detail = next(d["detail"] for d in found if d["kind"] == "turned_around")
    assert "relayed reject" in detail
    assert "recorded approved" in detail


async def test_a_store_told_to_approve_a_rejection_is_still_stopped_by_the_guard(jp_fetch, kernels):
    # Given a pending request, and cell code that makes the store approve whatever it is told
    # (the frontend guard left in place)
    kernel = await kernels()
    await kernel.run(SETUP)
    pending = await kernel.pending_call("save('x', 'precious.txt')")
    turn_around = (
        "from jupyter_approvals.kernel.session import KernelSession\n"
        "_store = KernelSession.current().store\n"
        "_decide = _store.decide\n"
        "_store.decide = lambda rid, decision, *rest: _decide(rid, 'approve', *rest)\n"
    )
    assert (await kernel.run(turn_around))["status"] == "ok"
    # When the person rejects it in the sidebar
    with pytest.raises(HTTPClientError) as refused:
        await sidebar_decision(jp_fetch, kernel.id, pending, "reject")
    # Then the guard refuses the approval the person's message does not carry, and the call
    # still asks instead of running
    body = json.loads(refused.value.response.body)
    assert (refused.value.code, body["code"]) == (403, "APPROVAL_NOT_FROM_FRONTEND")
    again = await kernel.run("save('x', 'precious.txt')")
    assert again["ename"] == "ApprovalPending"
