"""What the server keeps of a kernel's ``pending``/``changed`` message: only its documented
shape (docs/protocol.md 3.1), whatever the kernel's code published. Code in a kernel can send
anything on its iopub; the server's copy of what is pending is built from this alone.
"""

from __future__ import annotations

import re
from typing import Any

from ...core.policy import MAX_STRUCTURED_CHARS, MIN_ANSWER_CEILING_S, MIN_ANSWER_S
from ...core.structured import checked_structured
from ...core.visible import make_visible

_REQUEST_ID = re.compile(r"[0-9a-f]{16}")
_DECIDED_FIELDS = ("id", "action", "summary", "status", "channel", "decided_at")
#: The texts of a listed request a person reads, and whether they keep their lines.
_TEXTS = {"action": False, "summary": False, "preview": True, "function": False}


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _request(request: dict[str, Any]) -> dict[str, Any]:
    """A listed request with what a person reads escaped (again) and its structured preview
    in the documented shape, or null: a kernel runs code anyone with a cell can write, and
    the sidebar shows what it published."""
    kept = dict(request)
    for name, keep_lines in _TEXTS.items():
        value = kept.get(name)
        kept[name] = (
            make_visible(value, keep_lines, mark_bracket=False) if isinstance(value, str) else None
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
            _request(request)
            for request in (requests if isinstance(requests, list) else [])
            if isinstance(request, dict)
            and isinstance(request.get("id"), str)
            and _REQUEST_ID.fullmatch(request["id"])
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
            and isinstance(entry.get("decided_at"), str)
        ],
    }


# Which reply op answers which request op (the kernel also publishes "changed" meanwhile).
