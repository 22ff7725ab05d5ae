"""What the parts of the Jupyter AI bridge share: the gate's hold and registry, where an
agent's paths are read, and how a refused client call is journaled and told to the agent."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...core import errors
from ...core.agents import JUPYTER_AI_NAME_PREFIX, AgentRegistry
from ..gate.hold import AgentHold
from ..rest.refusals import RestRefusals
from .effects import Where

#: The JSON-RPC error code of a client call the bridge refused (its data carries the APPROVAL_*
#: code and the message).
REFUSED_RPC_CODE = -32001


def agent_name(persona: Any) -> str:
    """The agent identity of a Jupyter AI persona: ``jupyter-ai-<its name>`` (an agent name of
    the registry: at most 40 characters)."""
    name = str(getattr(persona, "name", "") or type(persona).__name__)
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "agent"
    return f"{JUPYTER_AI_NAME_PREFIX}{slug}"[:40].rstrip("-")


@dataclass
class BridgeContext:
    """The server's parts the bridge works with."""

    hold: AgentHold
    registry: AgentRegistry
    root: Path
    secret_dirs: Callable[[], Iterable[Path]]
    refusals: RestRefusals
    log: logging.Logger | logging.LoggerAdapter[Any]

    def persona(self, client: Any, session_id: str) -> Any:
        """The persona of Jupyter AI's session ``session_id`` on ``client``."""
        persona = client._personas_by_session.get(session_id)
        if persona is None:
            raise errors.ApprovalUnknownRequest(f"No Jupyter AI session {session_id!r}.")
        return persona

    def admitted(self, persona: Any) -> str:
        """The agent of ``persona``; raises unless it may act now: registered as Jupyter AI's
        (on first sight, so the person sees it and can pause it), and not paused."""
        agent = agent_name(persona)
        record = self.registry.runner_agent(agent, "jupyter-ai")
        if record.paused:
            raise errors.ApprovalAgentPaused(
                f"Agent {agent} is paused: a person stopped it in the Approvals sidebar (or with "
                "`jupyter approvals agent pause`). Nothing ran.",
                agent=agent,
            )
        return agent

    def where(self, persona: Any) -> Where:
        """Where ``persona``'s paths are read: the root, and its chat's folder."""
        try:
            cwd = str(persona.get_chat_dir())
        except Exception:  # a persona without a chat: the root
            cwd = os.fspath(self.root)
        return Where(self.root, os.path.join(os.fspath(self.root), cwd), self.secret_dirs())

    def refused(self, exc: errors.ApprovalError, agent: str, what: str, **fields: Any) -> Any:
        """Log and journal a client call refused here; the error the agent gets."""
        from acp import RequestError

        self.log.warning("jupyter-approvals refused %s of %s: %s", what, agent, exc.message)
        self.hold.journal_agent(
            "refused", agent, None, code=exc.code, source="jupyter-ai", attempted=what, **fields
        )
        return RequestError(
            REFUSED_RPC_CODE,
            f"{exc.code}: {exc.message}",
            {"code": exc.code, "message": exc.message},
        )
