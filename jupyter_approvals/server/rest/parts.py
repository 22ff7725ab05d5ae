"""What the REST handlers work with, typed: made once when the extension loads (``app.py``)
and handed to every handler as its ``initialize()`` keyword argument, so that a handler names
its collaborators by attribute rather than by a string key of the web app's settings."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...doctor.report import Check
from ..gate.agent_gate import AgentGate
from ..mirror.journals import ServerJournals
from ..mirror.kernels import KernelLinks
from ..mirror.relayed import RelayedDecisions
from ..sandbox.change_sets import ChangeSets
from .pending_rows import PendingRows
from .refusals import RestRefusals


@dataclass(frozen=True)
class RestParts:
    """The extension's collaborators the handlers share."""

    #: The server's connections to its kernels and its copy of their pending lists.
    links: KernelLinks
    #: The agent gate: identities, the server's hold of agent requests, pauses.
    gate: AgentGate
    #: Journals the decisions the server refuses before any kernel sees them.
    refusals: RestRefusals
    #: The rendered rows of ``GET pending``, reused while unchanged.
    pending_rows: PendingRows
    #: The server's root directory, resolved.
    server_root: Path
    #: The jupyter_server application (for the doctor's checks of what is in force).
    serverapp: Any
    #: The sandboxed kernels' change sets, as shown and decided.
    change_sets: ChangeSets
    #: The server's own journals (per project).
    journals: ServerJournals
    #: The server's record of each decision it relays to a kernel.
    relayed: RelayedDecisions
    #: How long an approval may wait to be used (``ApprovalsConfig.approval_ttl``): after it,
    #: a relayed decision or an approval with no outcome recorded is a disagreement.
    approval_ttl_s: float
    #: The doctor's checks of the bridges to other agent runners (Jupyter AI's).
    bridge_checks: Callable[[], list[Check]] = field(default=lambda: [])
    #: The server extensions whose agents pass the gate through such a bridge now.
    gated_extensions: Callable[[], frozenset[str]] = field(default=frozenset)
