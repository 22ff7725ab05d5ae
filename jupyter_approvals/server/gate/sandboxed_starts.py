"""Kernels an agent identity starts run sandboxed (policy ``sandbox``).

An agent asks for a kernel by name (``POST api/kernels``, ``POST api/sessions``; clients such
as jupyter-mcp-server ask for the default). The name is not read from the request: the agent
gate marks the request as an agent's while it is handled (:data:`AGENT_REQUEST`), and the
kernel manager's ``start_kernel``, where the kernel actually starts, gives every new kernel
started under that mark the sandboxed kernelspec instead of the one asked for. Where the
sandbox is unavailable the kernel starts as asked, and the agent's code in it is held per cell.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import Any

#: The agent whose request is being handled in this task (set by the agent gate's admission).
AGENT_REQUEST: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "jupyter_approvals_agent_request", default=None
)


def sandbox_agents_kernels(
    kernel_manager: Any, sandboxed_name: str, available: Callable[[], bool], log: Any
) -> None:
    """Wrap ``kernel_manager.start_kernel`` so that a new kernel started while an agent's
    request is handled gets the kernelspec ``sandboxed_name`` when ``available()``."""
    if getattr(kernel_manager, "jupyter_approvals_sandboxes_agents", False):
        return
    start_kernel = kernel_manager.start_kernel

    async def start_sandboxed_for_agents(*args: Any, **kwargs: Any) -> Any:
        agent = AGENT_REQUEST.get()
        existing = kwargs.get("kernel_id")
        new_kernel = existing is None or existing not in kernel_manager
        if agent is not None and new_kernel and available():
            asked = kwargs.get("kernel_name")
            if asked != sandboxed_name:
                log.info(
                    "jupyter-approvals: agent %s asked for kernel %r; it starts %r",
                    agent,
                    asked,
                    sandboxed_name,
                )
            kwargs["kernel_name"] = sandboxed_name
        return await start_kernel(*args, **kwargs)

    kernel_manager.start_kernel = start_sandboxed_for_agents
    kernel_manager.jupyter_approvals_sandboxes_agents = True
