"""The records of the approval flow: a request, its read-only view, an approval, a lease.

A request is created by a protected call and owned by the store, which alone changes it.
An :class:`Approval` is issued by the store when a person approves; it is frozen and compared
by identity, so nothing built elsewhere (a dict, a look-alike object) can stand in for one.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any


class Status(str, enum.Enum):
    """Where a request is in its life. Only PENDING and APPROVED are live."""

    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    WITHDRAWN = "withdrawn"
    DISMISSED = "dismissed"
    TIMED_OUT = "timed_out"
    EXPIRED = "expired"
    AUTO_ANSWERED = "auto_answered"
    REFUSED = "refused"
    RUNNING = "running"
    EXECUTED = "executed"
    FAILED = "failed"

    @property
    def live(self) -> bool:
        """True while the request can still lead to a run."""
        return self in (Status.PENDING, Status.APPROVED)


@dataclass(frozen=True)
class Origin:
    """Where a request came from, as far as the kernel can tell.

    ``username`` and ``session`` are what the executing client claimed in its message
    header (``username``, where the header has none, the person the server's stamp names):
    shown to the person as a hint, never trusted as an identity. ``agent`` names the
    agent identity that sent the code, as the server stamped it (docs/protocol.md 7.4).
    ``execution_count`` is the number the notebook shows next to the cell while it runs
    (``[5]:``), or None where the run has none (a silent run, one kept out of the history, or
    a call made outside a cell's run). ``display_name`` is the name the stamped person goes by
    in JupyterLab ("Anonymous Io" without a login), shown before the username.
    """

    kernel_id: str | None = None
    notebook_path: str | None = None
    cell_id: str | None = None
    username: str | None = None
    session: str | None = None
    agent: str | None = None
    execution_count: int | None = None
    display_name: str | None = None

    def to_wire(self) -> dict[str, str | int | None]:
        """The JSON form used in comm messages and the journal."""
        return {
            "kernel_id": self.kernel_id,
            "notebook_path": self.notebook_path,
            "cell_id": self.cell_id,
            "execution_count": self.execution_count,
            "username": self.username,
            "display_name": self.display_name,
            "session": self.session,
            "agent": self.agent,
        }


def iso_utc(epoch_seconds: float) -> str:
    """ISO 8601 in UTC with milliseconds and a ``Z``, the time format of every wire message."""
    moment = datetime.fromtimestamp(epoch_seconds, tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


@dataclass(frozen=True, eq=False)
class Approval:
    """A person's approval of one action on one fingerprint, issued by a store.

    Compared by identity: only the very object the store issued redeems.
    """

    request_id: str
    action: str
    fingerprint: str
    owner: str | None
    decided_at: float
    expires_at: float
    expires_mono: float
    channel: str
    latency_ms: int


@dataclass(frozen=True, eq=False)
class Lease:
    """Proof, while a protected function runs, that its action was approved and redeemed."""

    request_id: str
    action: str
    fingerprint: str


@dataclass(frozen=True)
class RequestInfo:
    """A read-only snapshot of a request, safe to hand to callers and frontends."""

    id: str
    action: str
    summary: str
    preview: str
    preview_omitted: int
    fingerprint: str
    status: Status
    created_at: float
    expires_at: float
    origin: Origin
    function: str = ""
    reason: str = ""
    channel: str | None = None
    latency_ms: int | None = None
    decided_at: float | None = None
    approval_expires_at: float | None = None
    code: str | None = None
    #: Which calls compete for one approval (see ``protected(target=...)``); not on the wire.
    slot: str = ""
    #: The structured preview (docs/protocol.md 4.1), checked and escaped; None if none.
    structured: dict[str, Any] | None = None

    def to_wire(self) -> dict[str, Any]:
        """The JSON form of the comm contract (docs/protocol.md)."""
        return {
            "id": self.id,
            "action": self.action,
            "summary": self.summary,
            "preview": self.preview,
            "preview_omitted": self.preview_omitted,
            "structured": self.structured,
            "fingerprint": self.fingerprint,
            "function": self.function,
            "status": self.status.value,
            "created_at": iso_utc(self.created_at),
            "expires_at": iso_utc(self.expires_at),
            "approval_expires_at": (
                iso_utc(self.approval_expires_at) if self.approval_expires_at else None
            ),
            "reason": self.reason,
            "code": self.code,
            **self.origin.to_wire(),
        }

    def journal_fields(self) -> dict[str, Any]:
        """What every journal line about this request records of it (docs/protocol.md 5),
        whoever writes the line (a kernel, or the server for what it holds)."""
        return {
            "request_id": self.id,
            "action": self.action,
            "summary": self.summary,
            "fingerprint": self.fingerprint,
            "status": self.status.value,
            "channel": self.channel,
            "latency_ms": self.latency_ms,
            "reason": self.reason or None,
            "code": self.code,
            "agent": self.origin.agent,
        }


@dataclass
class Request:
    """The store's own, mutable record of a request. Never handed out; see :class:`RequestInfo`."""

    id: str
    action: str
    slot: str
    summary: str
    preview: str
    preview_omitted: int
    fingerprint: str
    origin: Origin
    created_at: float
    expires_at: float
    created_mono: float
    deadline_mono: float
    status: Status = Status.PENDING
    owner: str | None = None
    function: str = ""
    shown_mono: float | None = None
    reason: str = ""
    channel: str | None = None
    latency_ms: int | None = None
    decided_at: float | None = None
    code: str | None = None
    approval: Approval | None = None
    reported: bool = False
    structured: dict[str, Any] | None = None

    def info(self) -> RequestInfo:
        """A frozen snapshot of this request as it is now."""
        return RequestInfo(
            id=self.id,
            action=self.action,
            summary=self.summary,
            preview=self.preview,
            preview_omitted=self.preview_omitted,
            fingerprint=self.fingerprint,
            status=self.status,
            created_at=self.created_at,
            expires_at=self.expires_at,
            origin=self.origin,
            function=self.function,
            reason=self.reason,
            channel=self.channel,
            latency_ms=self.latency_ms,
            decided_at=self.decided_at,
            approval_expires_at=self.approval.expires_at if self.approval else None,
            code=self.code,
            slot=self.slot,
            structured=self.structured,
        )


#: How many of the latest decisions a listing names (docs/protocol.md 3.1, ``decided``).
DECIDED_LISTED = 5


def decided_recently(infos: list[RequestInfo]) -> list[dict[str, Any]]:
    """The latest decisions among ``infos``, newest first, as listings name them: what was
    decided, how it stands now, and where (the card, the sidebar...)."""
    decided = sorted(
        (info for info in infos if info.decided_at is not None),
        key=lambda info: info.decided_at or 0.0,
        reverse=True,
    )
    return [
        {
            "id": info.id,
            "action": info.action,
            "summary": info.summary,
            "status": info.status.value,
            "channel": info.channel,
            "decided_at": iso_utc(info.decided_at or 0.0),
        }
        for info in decided[:DECIDED_LISTED]
    ]
