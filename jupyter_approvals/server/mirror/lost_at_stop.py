"""What a stopping server writes down about its kernels' requests.

When the server stops (the hub's spawner or idle culler sends it a signal, or the person stops
it), its kernels end with it, and with them every request still pending and every approval not
yet used. A kernel whose server is gone ends without a word (ipykernel's parent poller exits at
once); the server journals each such request ``lost`` from the kernels' last listings, before
its kernels stop.
"""

from __future__ import annotations

from typing import Any

from .journals import ServerJournals
from .kernels import KernelLinks

#: Why, in the journal.
REASON = "the Jupyter server stopped; its kernels ended with it"


def journal_lost_at_stop(links: KernelLinks, journals: ServerJournals) -> int:
    """Journal ``lost`` for every pending request and unused approval the kernels last listed;
    return how many. Never raises."""
    written = 0
    for kernel_id in links.running():
        link = links.link_of(kernel_id)
        listing: dict[str, Any] | None = getattr(link, "listing", None)
        if not listing:
            continue
        unfinished = [(request, "pending") for request in listing.get("requests", [])] + [
            (decided, "approved")
            for decided in listing.get("decided", [])
            if decided.get("status") == "approved"
        ]
        for item, status in unfinished:
            notebook = item.get("notebook_path") or listing.get("notebook_path")
            journals.append(
                "lost",
                notebook if isinstance(notebook, str) else None,
                request_id=item.get("id"),
                kernel_id=kernel_id,
                action=item.get("action"),
                summary=item.get("summary"),
                status=status,
                recorded_by="server",
                reason=REASON,
            )
            written += 1
    return written
