"""What jupyter_server records of a kernel's state, read without a message to the kernel."""

from __future__ import annotations

from typing import Any


def execution_state(kernel_manager: Any, kernel_id: str) -> str | None:
    """jupyter_server's record of the kernel's state (``starting``, ``idle``, ``busy``, ...)."""
    try:
        state = getattr(kernel_manager.get_kernel(kernel_id), "execution_state", None)
    except KeyError:
        return None
    return state if isinstance(state, str) else None
