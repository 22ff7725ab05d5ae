"""The server's own record of each decision it relays to a kernel, beside the kernel's.

A person decides in the sidebar (``POST pending/...``) or in a card, whose message passes the
server's kernel websocket. Either way the server journals a ``relayed`` line before the
kernel sees the decision: who sent it, the answer and fingerprint it carries, and the row as
the server's copy of the kernel's listing showed it (its summary, fingerprint and the sha256
of its preview). The kernel journals its own lines about the same request; code in the kernel
can rewrite what the kernel records, not what the server wrote when it relayed. Where the two
disagree (a decision retargeted or turned around in the kernel, a summary rewritten), the
History and ``jupyter approvals journal`` say so (:mod:`...core.journal.disagreements`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from ...core import errors
from .journals import ServerJournals

#: The row the kernel's last listing shows for (kernel id, request id), or None.
RowOf = Callable[[str, str], "dict[str, Any] | None"]


class RelayedDecisions:
    """Journals the decisions the server relays, with the row the person was shown."""

    def __init__(self, row_of: RowOf, journals: ServerJournals) -> None:
        self._row_of = row_of
        self._journals = journals

    def record(
        self,
        kernel_id: str,
        decision: dict[str, Any],
        *,
        channel: str,
        decided_by: str | None,
        refused: errors.ApprovalError | None = None,
    ) -> None:
        """Journal that ``decision`` (the ``id``, ``decision``, ``fingerprint`` and ``reason``
        a message carries) is being relayed to kernel ``kernel_id``, or, with ``refused``, that
        the server stopped it there for that reason. Never raises."""
        request_id = decision.get("id")
        if not isinstance(request_id, str):
            return
        row = self._row_of(kernel_id, request_id[:64])
        shown: dict[str, Any] = {"listed": row is not None}
        if row is not None:
            preview = row.get("preview")
            shown.update(
                shown_summary=row.get("summary"),
                shown_fingerprint=row.get("fingerprint"),
                shown_preview_sha256=hashlib.sha256(str(preview).encode()).hexdigest()
                if isinstance(preview, str)
                else None,
                action=row.get("action"),
            )
        notebook = row.get("notebook_path") if row is not None else None
        if refused is not None:
            shown.update(code=refused.code, why=refused.details.get("why"), source="websocket")
        self._journals.append(
            "refused" if refused is not None else "relayed",
            notebook if isinstance(notebook, str) else None,
            request_id=request_id[:64],
            kernel_id=kernel_id,
            decision=str(decision.get("decision"))[:20],
            fingerprint=str(decision.get("fingerprint"))[:80],
            channel=channel,
            decided_by=decided_by,
            recorded_by="server",
            **shown,
        )
