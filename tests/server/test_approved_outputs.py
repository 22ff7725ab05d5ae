"""What the gate remembers of outputs the kernel produced for agent code a person approved."""

from __future__ import annotations

from jupyter_approvals.server.gate.approved_outputs import KEEP_S, ApprovedOutputs, data_key


class Clock:
    def __init__(self) -> None:
        self.now = 10.0

    def __call__(self) -> float:
        return self.now


def test_outputs_of_an_approved_execution_count_for_its_agent_for_a_while():
    # Given an approved execution of agent bot sent on connection 1
    clock = Clock()
    outputs = ApprovedOutputs(clock)
    outputs.executing("m1", "bot", 1)
    # When the kernel publishes a display and a stream for it, and something for another message
    html = {"text/html": "<b>x</b>", "text/plain": "x"}
    outputs.published("m1", "display_data", {"data": html, "metadata": {}})
    outputs.published("m1", "stream", {"name": "stdout", "text": "y"})
    outputs.published("other", "display_data", {"data": {"text/html": "<i>z</i>"}})
    # Then only the display of the approved execution counts, for bot, from connection 1
    assert outputs.of("bot") == {data_key(html)}
    assert outputs.of("someone") == frozenset()
    assert outputs.asked_on("m1", 1)
    assert not outputs.asked_on("m1", 2)
    # And not after a while
    clock.now += KEEP_S + 1
    assert outputs.of("bot") == frozenset()
    assert not outputs.watching
