"""An agent that sends too much, or too fast, is refused before the server does the work, and
the person is not affected: the size and rate bounds of the agent gate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from traitlets.config import Config

from jupyter_approvals.core import errors
from jupyter_approvals.server.gate.limits import AgentLimits
from tests.server.agent_client import call


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_is_taken_then_refused_with_the_wait_and_refilled_over_time():
    # Given 60 requests a minute: a burst of ten seconds' worth
    clock = Clock()
    limits = AgentLimits(1000, 60, clock)
    for _ in range(10):
        limits.take("bot")
    # When the eleventh comes at once
    with pytest.raises(errors.ApprovalAgentOverLimit) as over:
        limits.take("bot")
    # Then it is refused with how long to wait, and another agent is not affected
    assert over.value.details["retry_after_s"] == 1.0
    limits.take("other")
    # And a second later one more is taken
    clock.now += 1.0
    limits.take("bot")


def test_a_body_past_the_limit_is_refused_with_its_size():
    limits = AgentLimits(1000, 60)
    limits.check_body("bot", 1000)
    with pytest.raises(errors.ApprovalAgentOverLimit) as over:
        limits.check_body("bot", 1001)
    assert (over.value.details["size"], over.value.details["limit"]) == (1001, 1000)


@pytest.fixture
def jp_server_config():
    return Config(
        {
            "ServerApp": {"jpserver_extensions": {"jupyter_approvals": True}},
            "ApprovalsServer": {"agent_max_body_bytes": 4096, "agent_requests_per_minute": 30},
        }
    )


async def test_an_agents_oversized_write_is_refused_before_it_is_read_and_the_persons_is_not(
    jp_fetch, jp_root_dir, agent_token
):
    # Given a server that takes at most 4 KiB from an agent
    big = json.dumps({"type": "file", "format": "text", "content": "x" * 10_000})
    # When the agent writes 10 KB
    status, _, reply = await call(
        jp_fetch, "api", "contents", "big.txt", token=agent_token, method="PUT", body=big
    )
    # Then it is refused with a code and its size, and nothing is held or written
    assert (status, reply["code"]) == (413, "APPROVAL_AGENT_OVER_LIMIT")
    assert reply["size"] > 4096
    assert not (Path(jp_root_dir) / "big.txt").exists()
    _, _, listing = await call(jp_fetch, "jupyter-approvals", "api", "pending")
    assert [i for i in listing["pending"] if i.get("held_at") == "server"] == []
    # While the person's own write of the same is done
    status, _, _ = await call(jp_fetch, "api", "contents", "big.txt", method="PUT", body=big)
    assert status == 201


async def test_an_agent_past_its_rate_is_told_when_to_come_back_and_the_person_is_not(
    jp_fetch, agent_token
):
    # Given 30 requests a minute: a burst of five
    statuses = []
    for _ in range(8):
        status, headers, reply = await call(jp_fetch, "api", "status", token=agent_token)
        statuses.append(status)
    # Then the burst is answered, the rest refused with a code and Retry-After
    assert statuses[:5] == [200] * 5
    assert statuses[5:] == [429] * 3
    assert reply["code"] == "APPROVAL_AGENT_OVER_LIMIT"
    assert int(headers["Retry-After"]) >= 1
    # While the person's requests are answered as ever
    for _ in range(8):
        status, _, _ = await call(jp_fetch, "api", "status")
        assert status == 200
