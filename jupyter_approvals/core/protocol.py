"""The facts of docs/protocol.md that more than one part of the project speaks, one home each.

The kernel, the server and the test driver import them from here; the card's view (card.js)
and the sidebar (labextension/src/tokens.ts) carry copies in their own languages, and
tests/layout/test_protocol_facts.py checks that those copies say the same.
"""

from __future__ import annotations

from typing import Final

#: The comm target of the kernel's endpoint (section 3).
COMM_TARGET: Final = "jupyter_approvals"
#: The id of a kernel's marker comm starts with this: its ``changed`` messages reach every
#: client of the kernel on iopub, which is how the server learns of changes unasked (3.2).
MARKER_COMM_PREFIX: Final = f"{COMM_TARGET}-here-"
#: The version of the comm messages; ``pending`` and ``changed`` carry it.
COMM_PROTOCOL_VERSION: Final = 1
#: The key in a Jupyter message's metadata under which the server stamps who sent it (7.4).
STAMP_KEY: Final = "jupyter_approvals"
#: The key in a cell's metadata under which the server marks an agent's cells (7.2).
CELL_METADATA_KEY: Final = "jupyter_approvals"
#: The MIME type a card's output carries beside the widget view: the request it showed, so a
#: notebook reopened without the kernel's widget can show what was asked and how it ended (4.2).
CARD_MIMETYPE: Final = "application/vnd.jupyter-approvals.card+json"
#: The MIME type of the quiet line a stopped call leaves under its card: the ApprovalPending
#: error's code, message and details, for agents that read outputs (4.2).
PENDING_MIMETYPE: Final = "application/vnd.jupyter-approvals.pending+json"
#: The MIME type of the server's answer to an agent's held code: the request it holds, which
#: the sidebar's extension renders as that request's card under the agent's cell (7.3).
HELD_MIMETYPE: Final = "application/vnd.jupyter-approvals.held+json"
#: The request fields a card's view reports as displayed; they must equal the store's record.
SHOWN_FIELDS: Final = (
    "action",
    "summary",
    "preview",
    "preview_omitted",
    "structured",
    "fingerprint",
    "function",
)
#: Every ``event`` a journal line may have (section 5).
JOURNAL_EVENTS: Final = frozenset(
    {
        "requested",
        "approved",
        "rejected",
        "withdrawn",
        "timed_out",
        "expired",
        "refused",
        "auto_answered",
        "dismissed",
        "executed",
        "failed",
        "lost",
        "agent_paused",
        "agent_resumed",
        "staged",
        "relayed",
    }
)
#: Journal events that record a person's decision, and so who made it.
DECISION_EVENTS: Final = frozenset({"approved", "rejected", "auto_answered"})

#: The environment variable a sandboxed kernel's provisioner sets, naming the kernel; the
#: kernel library reads it (with the overlay and the network it sees) to know it is sandboxed.
SANDBOX_ENVIRONMENT: Final = "JUPYTER_APPROVALS_SANDBOX"
