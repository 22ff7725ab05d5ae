"""The budgets of a preview's text: characters, line length and time; every cut announced.

A preview must fit in the card (the store keeps at most ``max_preview_chars``, 20,000 by
default) and must be built in seconds whatever the input. The text of a ready operation's
preview is rendered from its structured preview under :data:`PREVIEW_BUDGET` and
:data:`LINE_BUDGET` (:mod:`.render_text`). :class:`PreviewText`, lines under a character
budget whose overflow is counted, not kept, remains for ``benchmarks/bench_diff.py``.
:class:`Deadline` bounds the time a preview may spend; work it stops is announced. The
fingerprint always covers everything, whatever the preview leaves out.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

#: Characters a ready operation's preview may use; below the store's 20,000 so nothing is cut
#: silently there.
PREVIEW_BUDGET = 16_000

#: Characters one line of a preview may use before it is shortened.
LINE_BUDGET = 400

#: Characters kept free for the lines that say what was left out, and for notes.
TAIL_RESERVE = 1_000

#: Seconds a preview may spend computing (a diff, a dry run) before it reports what it skipped.
PREVIEW_SECONDS = 5.0


class PreviewText:
    """Lines of a preview under a character budget; what does not fit is counted and announced."""

    def __init__(self, budget: int = PREVIEW_BUDGET) -> None:
        self.budget = budget
        self._lines: list[str] = []
        self._used = 0
        self._left_out: dict[str, int] = {}
        self._notes: list[str] = []

    @property
    def full(self) -> bool:
        """True once the budget is spent."""
        return self._used >= self.budget

    def add(self, line: str, kind: str = "lines") -> bool:
        """Append one line (shortened past LINE_BUDGET); False, and counted, if it does not fit."""
        if len(line) > LINE_BUDGET:
            line = f"{line[:LINE_BUDGET]} … ({len(line) - LINE_BUDGET:,} more characters)"
        if self._used + len(line) + 1 > self.budget - TAIL_RESERVE:
            self._used = self.budget
            self._left_out[kind] = self._left_out.get(kind, 0) + 1
            return False
        self._lines.append(line)
        self._used += len(line) + 1
        return True

    def extend(self, lines: Iterable[str], kind: str = "lines") -> None:
        """Append lines while they fit; count the rest as left out."""
        for line in lines:
            self.add(line, kind)

    def left_out(self, count: int, kind: str) -> None:
        """Record that ``count`` more ``kind`` exist that the preview does not show."""
        if count > 0:
            self._left_out[kind] = self._left_out.get(kind, 0) + count

    def note(self, text: str) -> None:
        """A sentence always shown at the end (a skipped computation, a limit reached)."""
        self._notes.append(text if len(text) <= LINE_BUDGET else text[:LINE_BUDGET] + " …")

    def render(self) -> str:
        """The preview: the kept lines, then one line per kind of thing left out, then notes."""
        tail = [f"… {count:,} more {kind} not shown" for kind, count in self._left_out.items()]
        text = "\n".join([*self._lines, *tail, *self._notes])
        if len(text) > self.budget:  # only with very many notes; the budget is a promise
            cut = "\n… the rest of this preview is not shown"
            text = text[: self.budget - len(cut)] + cut
        return text


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
