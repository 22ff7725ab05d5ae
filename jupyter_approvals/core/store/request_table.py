"""Where a store keeps its requests: live ones by id, ended ones (bounded, oldest dropped
first), and the approvals it issued; and how a new request's record is made.

The table only keeps records; the store decides every change of state, under its lock.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from collections.abc import Iterator

from .. import errors
from ..fingerprint import same_fingerprint
from ..model import Approval, Origin, Request, Status
from ..policy import Limits
from ..structured import StructuredRefused, checked_structured
from ..visible import make_visible


class RequestTable:
    """Live and recently ended requests of one store, and the approvals it issued."""

    def __init__(self, max_ended_kept: int) -> None:
        self._max_ended_kept = max_ended_kept
        self.live: dict[str, Request] = {}
        self.ended: OrderedDict[str, Request] = OrderedDict()
        self.issued: dict[str, Approval] = {}

    def lookup(self, request_id: object) -> Request | None:
        """The request ``request_id``, live or recently ended (None: unknown or not an id)."""
        if not isinstance(request_id, str):
            return None
        return self.live.get(request_id) or self.ended.get(request_id)

    def get(self, request_id: object) -> Request:
        """The request ``request_id``; APPROVAL_UNKNOWN_REQUEST when there is none."""
        request = self.lookup(request_id)
        if request is None:
            raise errors.ApprovalUnknownRequest(
                f"No request {request_id!r} in this kernel (it may have ended long ago, or the "
                "kernel restarted).",
                request_id=request_id if isinstance(request_id, str) else None,
            )
        return request

    def find(
        self, action: str, fingerprint: str, status: Status, owner: str | None
    ) -> Request | None:
        """The live request of exactly this call in ``status``, if any."""
        for request in self.live.values():
            if (
                request.status is status
                and request.action == action
                and request.owner == owner
                and same_fingerprint(request.fingerprint, fingerprint)
            ):
                return request
        return None

    def newest_ended(self) -> Iterator[Request]:
        """Ended requests, newest first."""
        return reversed(self.ended.values())

    def retire(self, request: Request) -> None:
        """Move ``request`` from the live ones to the ended ones, dropping the oldest ended."""
        self.live.pop(request.id, None)
        self.ended[request.id] = request
        self.ended.move_to_end(request.id)
        while len(self.ended) > self._max_ended_kept:
            dropped_id, _ = self.ended.popitem(last=False)
            self.issued.pop(dropped_id, None)


def new_request(
    limits: Limits,
    now: float,
    mono: float,
    *,
    action: str,
    fingerprint: str,
    summary: str,
    preview: str,
    origin: Origin,
    slot: str,
    owner: str | None,
    function: str,
    structured: object = None,
) -> Request:
    """The record of a new pending request, its texts escaped and held to the limits."""
    # Escaped before the cut, so the limit holds for what the card really shows.
    preview = make_visible(preview)
    summary = make_visible(summary, keep_lines=False)
    kept_preview = preview[: limits.max_preview_chars]
    try:
        kept_structured = checked_structured(structured, limits.max_structured_chars)
    except StructuredRefused as exc:
        raise errors.ApprovalInvalidPreview(
            f"The structured preview does not have the documented shape: {exc}. No request "
            "was opened and nothing ran; see docs/protocol.md 4.1.",
            reason=str(exc),
        ) from None
    return Request(
        id=secrets.token_hex(8),
        action=action,
        slot=slot,
        summary=_clip(summary, limits.max_summary_chars),
        preview=kept_preview,
        preview_omitted=len(preview) - len(kept_preview),
        fingerprint=fingerprint,
        origin=origin,
        created_at=now,
        expires_at=now + limits.request_timeout_s,
        created_mono=mono,
        deadline_mono=mono + limits.request_timeout_s,
        owner=owner,
        function=function,
        structured=kept_structured,
    )


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
