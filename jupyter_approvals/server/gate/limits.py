"""How much, and how fast, the gate takes from one agent: so an agent never slows the person.

Two bounds per agent, both refused with APPROVAL_AGENT_OVER_LIMIT before any work is done:
the size of one request body (checked before the handler parses it; the server has read it,
but parsing and previewing a body cost far more than reading it), and the rate of what it
sends (HTTP requests, document updates to rooms, execute requests), as a token bucket that
allows a burst of ten seconds' worth.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from ...core import errors

#: The bucket holds this many seconds' worth of the per-minute rate.
BURST_SECONDS = 10.0


@dataclass
class _Bucket:
    tokens: float
    stamp: float


class AgentLimits:
    """The size and rate limits of agents' requests, one bucket per agent."""

    def __init__(
        self,
        max_body_bytes: int,
        per_minute: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_body_bytes = max_body_bytes
        self.per_second = per_minute / 60.0
        self.capacity = max(1.0, self.per_second * BURST_SECONDS)
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}

    def check_body(self, agent: str, size: int) -> None:
        """Raise APPROVAL_AGENT_OVER_LIMIT for a body past the limit."""
        if size > self.max_body_bytes:
            raise errors.ApprovalAgentOverLimit(
                f"This request of agent {agent} is {size:,} bytes; the gate takes at most "
                f"{self.max_body_bytes:,} from an agent (ApprovalsServer.agent_max_body_bytes). "
                "Nothing was done. Write large data from code the person approved instead.",
                agent=agent,
                size=size,
                limit=self.max_body_bytes,
            )

    def take(self, agent: str) -> None:
        """Count one request of ``agent``; raise APPROVAL_AGENT_OVER_LIMIT past the rate."""
        now = self._clock()
        bucket = self._buckets.get(agent)
        if bucket is None:
            bucket = self._buckets[agent] = _Bucket(self.capacity, now)
        bucket.tokens = min(self.capacity, bucket.tokens + (now - bucket.stamp) * self.per_second)
        bucket.stamp = now
        if bucket.tokens < 1.0:
            wait = (1.0 - bucket.tokens) / self.per_second if self.per_second else 60.0
            raise errors.ApprovalAgentOverLimit(
                f"Agent {agent} sends faster than the gate takes from one agent "
                f"({self.per_second * 60:g} a minute, ApprovalsServer.agent_requests_per_minute). "
                f"Nothing was done. Wait {wait:.1f} s and send it again.",
                agent=agent,
                retry_after_s=round(wait, 1),
            )
        bucket.tokens -= 1.0
