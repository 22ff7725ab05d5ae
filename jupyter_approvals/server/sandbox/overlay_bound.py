"""The bound on what a sandboxed kernel may stage: its overlay's upper folder.

The upper folder is on the state folder's disk, which the kernel could otherwise fill. No
single file can pass the bound (the kernel's ``RLIMIT_FSIZE``, :class:`.command.ProcessLimits`);
many files together can, so the server adds up each kernel's upper folder in its one-second
sweep and stops a kernel past the bound. The kernel can write for up to that second (and the
time one look takes) before it is stopped: the bound is the setting plus what it writes in
that time. What it staged stays, for a person to apply or discard.
"""

from __future__ import annotations

import asyncio
import logging
import stat
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ...core import errors
from .changes import upper_stats
from .command import KernelFolders

#: A look that took longer than this waits proportionally longer before the next (a kernel
#: with a hundred thousand staged files is not walked every second).
_LOOK_BUDGET = 0.05


def upper_bytes(upper: Path, stop_above: int) -> int:
    """The bytes the entries below ``upper`` hold on disk (allocated blocks, at least the size
    of each file), added up until they pass ``stop_above``."""
    total = 0
    for _path, info in upper_stats(upper):
        size = info.st_size if stat.S_ISREG(info.st_mode) else 0
        total += max(info.st_blocks * 512, size)
        if total > stop_above:
            break
    return total


class OverlayBound:
    """Stops sandboxed kernels whose staged changes pass ``most_bytes``."""

    def __init__(
        self,
        kernels: Callable[[], Iterable[tuple[str, KernelFolders]]],
        most_bytes: int,
        stop: Callable[[str, int], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._kernels = kernels
        self.most_bytes = most_bytes
        self._stop = stop
        self._clock = clock
        self._next_look: dict[str, float] = {}
        self._stopped: set[str] = set()

    def sweep(self) -> None:
        """Look at every sandboxed kernel due for a look; stop those past the bound."""
        now = self._clock()
        running = dict(self._kernels())
        for gone in [k for k in self._next_look if k not in running]:
            del self._next_look[gone]
        self._stopped &= running.keys()
        for kernel_id, folders in running.items():
            if kernel_id in self._stopped or self._next_look.get(kernel_id, 0.0) > now:
                continue
            started = self._clock()
            size = upper_bytes(folders.upper, self.most_bytes)
            took = self._clock() - started
            self._next_look[kernel_id] = now + max(0.0, took / _LOOK_BUDGET - 1.0)
            if size > self.most_bytes:
                self._stopped.add(kernel_id)
                self._stop(kernel_id, size)


def stop_overgrown(
    kernel_manager: Any,
    journal: Callable[..., None],
    log: logging.Logger | logging.LoggerAdapter[Any],
) -> Callable[[str, int], None]:
    """What :class:`OverlayBound` does with a kernel past its bound: say why in the server's
    log and journal (``refused``, ``APPROVAL_SANDBOX_LIMIT``), then stop the kernel."""
    stopping: set[asyncio.Future[Any]] = set()

    def stop(kernel_id: str, size: int) -> None:
        limit = errors.ApprovalSandboxLimit(
            f"sandboxed kernel {kernel_id} staged {size:,} bytes of changes, more than "
            "sandbox_overlay_bytes allows; the server stopped it. What it staged waits in the "
            "Approvals sidebar to be applied or discarded.",
            kernel_id=kernel_id,
            bytes=size,
        )
        log.warning("jupyter-approvals: %s", limit)
        journal(
            "refused",
            None,
            action="sandbox.limit",
            kernel_id=kernel_id,
            code=limit.code,
            reason=limit.message,
        )
        task = asyncio.ensure_future(kernel_manager.shutdown_kernel(kernel_id, now=True))
        stopping.add(task)
        task.add_done_callback(stopping.discard)

    return stop
