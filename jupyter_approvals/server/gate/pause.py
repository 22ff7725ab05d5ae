"""A pause reaches the requests an agent's code opened in kernels too.

The server's own store holds what an agent sends (its code, its writes); under
``agent_code = "protected-only"`` the code an agent ran may also have opened protected requests
inside a kernel, marked with the agent's name. Pausing the agent rejects those as well, each
through the kernel's own decision path (the same checks as a sidebar decision), with the pause
as the reason.
"""

from __future__ import annotations

from ..mirror.kernel_link import KernelBusy, KernelUnavailable, NoApprovals
from ..mirror.kernels import KernelLinks


def pause_reason(agent: str, by: str | None) -> str:
    """The reason every request rejected by a pause carries; ``by`` as people know the one who
    paused (their display name), not an opaque id."""
    return f"agent {agent} was paused" + (f" by {by}" if by else "")


async def reject_in_kernels(
    links: KernelLinks, agent: str, by: str | None, channel: str, by_name: str | None = None
) -> int:
    """Reject every pending kernel request of ``agent``; return how many kernels confirmed.

    A busy kernel is not sent the decision, and one that does not answer in time refuses it
    when it reads it later (the ``not_after`` of every decision): such a request stays pending
    for the person to reject.
    """
    listing = await links.list_all()
    rejected = 0
    for item in listing["pending"]:
        if item.get("agent") != agent or not isinstance(item.get("id"), str):
            continue
        try:
            verdict = await links.decide(
                str(item["kernel_id"]),
                item["id"],
                "reject",
                item.get("fingerprint"),
                pause_reason(agent, by_name or by),
                channel,
                by,
            )
        except (KeyError, KernelBusy, KernelUnavailable, NoApprovals):
            continue
        rejected += verdict.get("ok") is True
    return rejected
