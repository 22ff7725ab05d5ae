"""What the kernel can tell about the message it is handling right now.

A decision counts only while the kernel is handling a ``comm_msg`` from a frontend. When cell
code calls a button's ``click()`` or a decision handler directly, the message being handled
is that cell's ``execute_request``. Deliberate code can forge the parent (docs/security.md,
T3); this check stops the careless and the protocol-curious agent, not a determined one.
"""

from __future__ import annotations

from typing import Any

FRONTEND_MESSAGE_TYPE = "comm_msg"


def current_parent() -> dict[str, Any]:
    """The message the kernel is handling now, or ``{}`` outside a kernel."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency of ipywidgets
        return {}
    shell = get_ipython()
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return {}
    try:
        parent = kernel.get_parent()
    except Exception:
        return {}
    return parent if isinstance(parent, dict) else {}


def current_message_type() -> str | None:
    """``header.msg_type`` of the message being handled, if any."""
    header = current_parent().get("header") or {}
    msg_type = header.get("msg_type") if isinstance(header, dict) else None
    return msg_type if isinstance(msg_type, str) else None


def from_frontend() -> bool:
    """True when the code runs because a frontend sent a comm message."""
    return current_message_type() == FRONTEND_MESSAGE_TYPE


def caller_context() -> dict[str, str | None]:
    """Cell id and the claimed username/session of the message being handled."""
    parent = current_parent()
    header = parent.get("header") or {}
    metadata = parent.get("metadata") or {}

    def text(value: object) -> str | None:
        return value if isinstance(value, str) and value else None

    return {
        "cell_id": text(metadata.get("cellId")) if isinstance(metadata, dict) else None,
        "username": text(header.get("username")) if isinstance(header, dict) else None,
        "session": text(header.get("session")) if isinstance(header, dict) else None,
    }
