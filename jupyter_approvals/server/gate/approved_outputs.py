"""The outputs a kernel produced for agent code a person approved.

An agent client (jupyter-mcp-server) writes the outputs of the code it ran into the cell,
through the notebook's room. When that cell is one the person had trusted, rich output in it
would run in the person's page, so the room screen refuses rich output that was not trusted
before (:mod:`.notebook_shadow`). Output the kernel itself produced for code the person approved
is what the person's own run of that code would show: the room screen lets such output into a
trusted cell. This module remembers it: the ``data`` of each ``display_data``,
``execute_result`` and ``update_display_data`` the kernel published for an approved execution,
per agent, for a few minutes.
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

#: How long an approved execution's outputs may still be written into a cell, in seconds.
KEEP_S = 300.0
#: Most outputs remembered per agent (the oldest go first).
MOST = 200
#: iopub messages whose ``data`` is output a client writes into the cell.
OUTPUT_TYPES = frozenset({"display_data", "execute_result", "update_display_data"})


def data_key(data: Any) -> str:
    """The form an output's ``data`` is compared in."""
    return json.dumps(data, sort_keys=True, default=str)


class ApprovedOutputs:
    """Approved executions in flight, and the outputs they produced, per agent."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        #: msg_id of an approved execute_request -> (agent, the connection that sent it, until
        #: when its outputs count). Outputs reach every client of the kernel: one is counted
        #: once, from the connection that asked.
        self._executions: dict[str, tuple[str, int, float]] = {}
        self._outputs: dict[str, OrderedDict[str, float]] = {}

    def executing(self, msg_id: str, agent: str, connection: int) -> None:
        """Approved code of ``agent`` was sent to its kernel as ``msg_id`` on ``connection``
        (an id)."""
        self._executions[msg_id] = (agent, connection, self._clock() + KEEP_S)

    @property
    def watching(self) -> bool:
        """Whether any approved execution's outputs are still looked for."""
        if not self._executions:
            return False
        now = self._clock()
        for msg_id in [m for m, (_, _, until) in self._executions.items() if until < now]:
            del self._executions[msg_id]
        return bool(self._executions)

    def asked_on(self, parent_msg_id: str, connection: int) -> bool:
        """Whether ``parent_msg_id`` is an approved execution sent on ``connection``."""
        entry = self._executions.get(parent_msg_id)
        return entry is not None and entry[1] == connection

    def published(self, parent_msg_id: str, msg_type: str, content: Any) -> None:
        """The kernel published ``msg_type`` with ``content`` in answer to ``parent_msg_id``."""
        entry = self._executions.get(parent_msg_id)
        if entry is None or msg_type not in OUTPUT_TYPES or not isinstance(content, dict):
            return
        data = content.get("data")
        if not isinstance(data, dict):
            return
        agent, _, until = entry
        outputs = self._outputs.setdefault(agent, OrderedDict())
        outputs[data_key(data)] = until
        outputs.move_to_end(data_key(data))
        while len(outputs) > MOST:
            outputs.popitem(last=False)

    def of(self, agent: str) -> frozenset[str]:
        """The ``data`` (as :func:`data_key`) of outputs ``agent``'s approved code produced."""
        outputs = self._outputs.get(agent)
        if not outputs:
            return frozenset()
        now = self._clock()
        for key in [k for k, until in outputs.items() if until < now]:
            del outputs[key]
        return frozenset(outputs)
