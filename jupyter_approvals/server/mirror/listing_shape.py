"""What the server keeps of a kernel's ``pending``/``changed`` message: only its documented
shape (docs/protocol.md 3.1), whatever the kernel's code published. Code in a kernel can send
anything on its iopub; the server's copy of what is pending is built from this alone.
"""

from __future__ import annotations

import re
from typing import Any

from ...core.model import Status
from ...core.policy import MAX_STRUCTURED_CHARS, MIN_ANSWER_CEILING_S, MIN_ANSWER_S
from ...core.structured import checked_structured
from ...core.visible import make_visible

_REQUEST_ID = re.compile(r"[0-9a-f]{16}")
_FINGERPRINT = re.compile(r"sha256:[0-9a-f]{64}")
_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z")
_ERROR_CODE = re.compile(r"APPROVAL_[A-Z_]+")
_STATUSES = frozenset(status.value for status in Status)
_DECIDED_FIELDS = ("id", "action", "summary", "status", "channel", "decided_at")
#: What a person reads of a listed request and decides on: fixed when the kernel opened it.
_AS_OPENED = (
    "action",
    "summary",
    "preview",
    "preview_omitted",
    "function",
    "structured",
    "fingerprint",
    "created_at",
)
#: The texts of a listed request a person reads, and whether they keep their lines.
_TEXTS = {"action": False, "summary": False, "preview": True, "function": False, "reason": True}
#: Fields of a listed request that are text or null.
_NULLABLE_TEXTS = (
    "kernel_id",
    "notebook_path",
    "cell_id",
    "username",
    "display_name",
    "session",
    "agent",
)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _matching(pattern: re.Pattern[str], value: object) -> str | None:
    return value if isinstance(value, str) and pattern.fullmatch(value) else None


def _whole_number(value: object) -> int | None:
    return value if type(value) is int else None


def _request(request: dict[str, Any]) -> dict[str, Any] | None:
    """A listed request in its documented shape (``ListedRequest`` of
    core/schemas/comm.schema.json), or None to leave it out: a kernel runs code anyone with
    a cell can write, and the sidebar shows what it published.

    A request without a fingerprint, a status or its times cannot be decided or timed and is
    left out; every other field of another type becomes empty or null, and what a person
    reads is escaped (again). Fields the contract does not name are dropped.
    """
    fingerprint = _matching(_FINGERPRINT, request.get("fingerprint"))
    created_at = _matching(_TIME, request.get("created_at"))
    expires_at = _matching(_TIME, request.get("expires_at"))
    status = request.get("status")
    if fingerprint is None or created_at is None or expires_at is None:
        return None
    if not isinstance(status, str) or status not in _STATUSES:
        return None
    kept: dict[str, Any] = {"id": request["id"]}
    for name, keep_lines in _TEXTS.items():
        value = request.get(name)
        kept[name] = (
            make_visible(value, keep_lines, mark_bracket=False) if isinstance(value, str) else ""
        )
    for name in _NULLABLE_TEXTS:
        kept[name] = _text(request.get(name))
    omitted = _whole_number(request.get("preview_omitted"))
    kept.update(
        fingerprint=fingerprint,
        status=status,
        created_at=created_at,
        expires_at=expires_at,
        approval_expires_at=_matching(_TIME, request.get("approval_expires_at")),
        code=_matching(_ERROR_CODE, request.get("code")),
        execution_count=_whole_number(request.get("execution_count")),
        preview_omitted=omitted if omitted is not None and omitted >= 0 else 0,
    )
    try:
        kept["structured"] = checked_structured(
            request.get("structured"), MAX_STRUCTURED_CHARS, escaped_once=True
        )
    except Exception:
        kept["structured"] = None
    return kept


def _floor_ms(value: object) -> int:
    """A kernel's reading floor as it published it, never below the promised one second (a
    kernel cannot make the sidebar's buttons wait less than that, nor past the ceiling)."""
    floor = round(MIN_ANSWER_S * 1000)
    if type(value) is not int:
        return floor
    return min(max(value, floor), round(MIN_ANSWER_CEILING_S * 1000))


def well_formed(data: dict[str, Any]) -> dict[str, Any]:
    """The fields of a ``pending``/``changed`` message that have their documented types
    (docs/protocol.md 3.1): requests as objects with a request id, text as text."""
    requests = data.get("requests")
    journal = data.get("journal")
    awaited = data.get("awaited")
    decided = data.get("decided")
    return {
        "kernel_id": _text(data.get("kernel_id")),
        "notebook_path": _text(data.get("notebook_path")),
        "protocol": data.get("protocol") if isinstance(data.get("protocol"), int) else None,
        "requests": [
            kept
            for request in (requests if isinstance(requests, list) else [])
            if isinstance(request, dict)
            and isinstance(request.get("id"), str)
            and _REQUEST_ID.fullmatch(request["id"])
            and (kept := _request(request)) is not None
        ],
        "journal": {
            "path": _text(journal.get("path")),
            "error": _text(journal.get("error")),
        }
        if isinstance(journal, dict)
        else {"path": None, "error": None},
        "awaited": [a for a in awaited if isinstance(a, str)] if isinstance(awaited, list) else [],
        "min_answer_ms": _floor_ms(data.get("min_answer_ms")),
        "decided": [
            {key: _text(entry.get(key)) for key in _DECIDED_FIELDS}
            for entry in (decided if isinstance(decided, list) else [])
            if isinstance(entry, dict)
            and isinstance(entry.get("id"), str)
            and _REQUEST_ID.fullmatch(entry["id"])
            and _matching(_TIME, entry.get("decided_at")) is not None
            and isinstance(entry.get("action"), str)
            and isinstance(entry.get("summary"), str)
            and entry.get("status") in _STATUSES
        ],
    }


# Which reply op answers which request op (the kernel also publishes "changed" meanwhile).


def as_first_listed(previous: dict[str, Any] | None, current: dict[str, Any]) -> dict[str, Any]:
    """``current`` (a :func:`well_formed` listing) with every request that ``previous``, the
    same kernel process's last listing, already had keeping what it was listed with first.

    A request's content never changes once opened; only code in the kernel rewriting its
    store can make a later listing show another. The person keeps reading what was first
    listed, and the server's record of a relayed decision names it (the kernel's own record
    of the approval then disagrees with it, which the History shows).
    """
    if previous is None:
        return current
    first = {request["id"]: request for request in previous["requests"]}
    requests = []
    for request in current["requests"]:
        earlier = first.get(request["id"])
        if earlier is not None:
            request = {**request, **{name: earlier[name] for name in _AS_OPENED}}
        requests.append(request)
    return {**current, "requests": requests}
