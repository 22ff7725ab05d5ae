"""REST handlers for the person's control of agents: list them, pause and resume one.

``GET agents`` and ``POST agents/{name}/pause|resume`` (docs/protocol.md 6.2.2). Agents get 403
here like on every route of this API. A pause rejects the agent's held requests at once.
"""

from __future__ import annotations

from typing import Any

from jupyter_server.auth.decorator import authorized
from tornado import web

from ...core import errors
from ..gate.identity import display_name_of, username_of
from ..gate.pause import reject_in_kernels
from .handlers import ApprovalsHandler


class AgentsHandler(ApprovalsHandler):
    """``GET agents``: the registered agents, paused or not, with their held requests."""

    #: A sidebar poll is not the person working: the hub's idle culler must not see it.
    _track_activity = False

    @web.authenticated
    @authorized
    async def get(self) -> None:
        """Names, states and pending counts; never tokens or their hashes."""
        self.check_not_agent()
        records = self.gate.registry.records()
        pending: dict[str, int] = {}
        for item in self.gate.hold.listing(shown=False):
            pending[item["agent"]] = pending.get(item["agent"], 0) + 1
        agents: list[dict[str, Any]] = [
            {**record.public(), "pending": pending.get(name, 0)}
            for name, record in sorted(records.items())
        ]
        self.reply({"agents": agents})


class AgentPauseHandler(ApprovalsHandler):
    """``POST agents/{name}/pause`` or ``.../resume``."""

    @web.authenticated
    @authorized
    async def post(self, name: str, action: str) -> None:
        """Pause (reject its requests, held or in kernels; close its sockets; refuse its token)
        or resume."""
        self.check_decider()
        try:
            record = self.gate.registry.set_paused(name, action == "pause")
        except errors.ApprovalError as exc:
            exc.details.setdefault("name", name)
            raise
        person = username_of(self.current_user)
        shown_as = display_name_of(self.current_user) or person
        for agent in self.gate.apply_pauses(by=person, by_name=shown_as):
            await reject_in_kernels(self.links, agent, person, "sidebar", by_name=shown_as)
        self.gate.sweep()
        self.reply({"ok": True, "code": None, "message": "", **record.public()})
