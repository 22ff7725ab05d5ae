"""The budgets of a preview's text: characters, line length and time; every cut announced.

A preview must fit in the card (the store keeps at most ``max_preview_chars``, 20,000 by
default) and must be built in seconds whatever the input. The text of a ready operation's
preview is rendered from its structured preview under :data:`PREVIEW_BUDGET` and
:data:`LINE_BUDGET` (:mod:`.render_text`). :class:`Deadline` bounds the time a preview may
spend; work it stops is announced. The fingerprint always covers everything, whatever the
preview leaves out.
"""

from __future__ import annotations

import time

#: Characters a ready operation's preview may use; below the store's 20,000 so nothing is cut
#: silently there.
PREVIEW_BUDGET = 16_000

#: Characters one line of a preview may use before it is shortened.
LINE_BUDGET = 400

#: Characters kept free for the lines that say what was left out, and for notes.
TAIL_RESERVE = 1_000

#: Seconds a preview may spend computing (a diff, a dry run) before it reports what it skipped.
PREVIEW_SECONDS = 5.0


class Deadline:
    """A time budget for preview work, measured on the monotonic clock."""

    def __init__(self, seconds: float = PREVIEW_SECONDS) -> None:
        self.seconds = seconds
        self._end = time.monotonic() + seconds

    def passed(self) -> bool:
        """True once the time budget is spent."""
        return time.monotonic() >= self._end


def size_text(size: int) -> str:
    """``1,234,567 bytes (1.2 MiB)``: exact bytes, then a rounded reading for people."""
    exact = f"{size:,} byte" + ("" if size == 1 else "s")
    if size < 1024:
        return exact
    value = float(size)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024
        if value < 1024 or unit == "TiB":
            return f"{exact} ({value:.1f} {unit})"
    return exact  # unreachable: the loop returns at TiB


def plural(count: int, noun: str) -> str:
    """``1 row``, ``1,204 rows``."""
    return f"{count:,} {noun}" + ("" if count == 1 else "s")
