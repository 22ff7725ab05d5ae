"""What a protected call says while its request waits, and whether it may wait for it.

A pending call raises :func:`pending_error`, worded for the person and the agent reading it;
``await fn.wait(...)`` first checks :func:`check_can_wait`: it needs a running event loop in
a Jupyter kernel (ipykernel 7 or newer) that handles widget messages while a cell awaits.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..core import errors
from ..core.fingerprint import short_fingerprint
from ..core.model import RequestInfo, Status, iso_utc


def pending_error(info: RequestInfo) -> errors.ApprovalPending:
    """The error a call raises while its request waits, telling an agent what to do next."""
    # An agent's cell must not be told to wait: its client would hang on the cell.
    waiting = (
        ""
        if info.origin.agent
        else "; or, in an async cell, `await fn.wait(...)` with the same arguments"
    )
    return errors.ApprovalPending(
        f"{info.action} needs a person's approval; nothing ran. Request {info.id} "
        f"(fingerprint {short_fingerprint(info.fingerprint)}) is shown in the notebook and in "
        f"the Approvals sidebar until {iso_utc(info.expires_at)}. Next: ask the person to "
        f"review and approve it there, then call again with exactly the same arguments{waiting}. "
        "Changing the arguments or the target asks for a new approval.",
        request_id=info.id,
        action=info.action,
        fingerprint=info.fingerprint,
        expires_at=iso_utc(info.expires_at),
        status=Status.PENDING.value,
        where=["notebook card", "Approvals sidebar"],
    )


def check_can_wait(shell: Any) -> None:
    """Refuse ``wait()`` where the kernel cannot deliver a decision while a cell awaits."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        raise errors.ApprovalWaitUnsupported(
            "wait() must be awaited inside a running event loop (an async notebook cell). "
            "Call the function without wait() to get the pending request instead.",
            reason="no running event loop",
        ) from None
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        raise errors.ApprovalWaitUnsupported(
            "wait() needs a Jupyter kernel that delivers the person's decision while a cell "
            "awaits; this process is not one. Call the function without wait() instead.",
            reason="not in a Jupyter kernel",
        )
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed_version

    try:
        release = installed_version("ipykernel")
    except PackageNotFoundError:
        release = "none"
    if tuple(int(p) for p in release.split(".")[:2] if p.isdigit()) < (7, 0):
        raise errors.ApprovalWaitUnsupported(
            f"wait() needs ipykernel 7 or newer (this kernel runs {release}), "
            "which handles widget messages while a cell awaits. Call the function without "
            "wait() instead, or upgrade ipykernel.",
            reason="ipykernel too old",
        )
