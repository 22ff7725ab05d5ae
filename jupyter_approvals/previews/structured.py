"""Building a structured preview, under a budget; the text preview is rendered from it.

A ready operation describes its change once, as the blocks of a :class:`StructuredPreview`
(what a card and the sidebar render: counts first, hunks with line numbers and changed words,
tables of old and new values, highlighted code); :mod:`.render_text` turns that document into
the deterministic ``text/plain`` preview agents, terminals and nbval read. The shape is the
one :mod:`jupyter_approvals.core.structured` checks and docs/protocol.md 4.1 documents.

Like the text, the structured preview is bounded: every string but a code block's lines
(code is judged to the character) is cut at the text's line budget and announced, and once
:data:`STRUCTURED_BUDGET` characters (of the escaped JSON) are spent every further entry is
counted, not kept, and listed in ``left_out``. The fingerprint covers everything,
whatever either preview leaves out.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Iterable, Sequence
from typing import Any

from ..core.structured import STRUCTURED_VERSION, Preview
from ..core.visible import make_visible
from .text import LINE_BUDGET

__all__ = [
    "SHARE_ITEM_COST",
    "STRUCTURED_BUDGET",
    "Preview",
    "StructuredPreview",
    "clip",
    "fitting",
    "singular",
]

#: JSON characters a structured preview may use; below the store's limit
#: (``max_structured_chars``) so that nothing is refused there.
STRUCTURED_BUDGET = 48_000

# What one entry and each of its strings cost besides the characters: keys, quotes, brackets
# (estimates kept on the high side, so the budget holds for the real JSON).
_ENTRY_COST = 64
_RESERVE = 1_000
_STRING_COST = 32


#: What a producer reckons one line or item costs, besides its characters, when it shares the
#: budget between blocks (an estimate on the high side of what the builder charges).
SHARE_ITEM_COST = 100


def fitting(items: Sequence[str], share: int) -> int:
    """How many of the first ``items`` to give a block so that it takes at most about ``share``
    characters of the budget (each reckoned cut at the line budget): producers leave room this
    way for the blocks that follow a long one."""
    used = 0
    for index, item in enumerate(items):
        used += min(len(item), LINE_BUDGET) + SHARE_ITEM_COST
        if used > share:
            return index
    return len(items)


def clip(value: str) -> str:
    """``value`` cut at the line budget, the cut announced as in the text preview."""
    if len(value) <= LINE_BUDGET:
        return value
    return f"{value[:LINE_BUDGET]} … ({len(value) - LINE_BUDGET:,} more characters)"


class StructuredPreview:
    """The blocks of one structured preview, under a budget; what does not fit is counted."""

    def __init__(self, budget: int = STRUCTURED_BUDGET) -> None:
        self.budget = budget
        # The document's frame and its left_out entries are written last: room kept for them.
        self._used = _RESERVE
        self._headline: list[dict[str, Any]] = []
        self._blocks: list[dict[str, Any]] = []
        # Blocks placed after every other one although built (and charged) early.
        self._last_blocks: list[dict[str, Any]] = []
        self._left_out: dict[str, int] = {}
        self._notes: list[str] = []

    @property
    def full(self) -> bool:
        """True once the budget is spent."""
        return self._used >= self.budget

    @property
    def remaining(self) -> int:
        """Characters of the budget not spent yet (a producer may share them between blocks)."""
        return max(0, self.budget - self._used)

    def spend(self, *texts: str, kind: str) -> bool:
        """Charge one entry of ``texts``; False, and counted as ``kind``, if it does not fit."""
        if self._used >= self.budget:
            self.left_out(1, kind)
            return False
        # Counted as the store will keep them: escaped, and JSON-quoted.
        cost = _ENTRY_COST + sum(
            len(json.dumps(make_visible(text[: LINE_BUDGET + 1]), ensure_ascii=False))
            + _STRING_COST
            for text in texts
        )
        if self._used + cost > self.budget:
            self._used = self.budget
            self.left_out(1, kind)
            return False
        self._used += cost
        return True

    def left_out(self, count: int, kind: str) -> None:
        """Record that ``count`` more ``kind`` (plural) exist that the preview does not show."""
        if count > 0:
            self._left_out[kind] = self._left_out.get(kind, 0) + count

    def note(self, text: str) -> None:
        """A sentence always shown after the blocks (a skipped computation, a limit reached)."""
        text = clip(text)
        self._used += _ENTRY_COST + len(text)  # always kept, so always charged
        self._notes.append(text)

    def count(self, label: str, count: int, tone: str = "neutral", first: bool = False) -> None:
        """A headline count ("3 rows to add"), shown before every block. ``label`` is plural;
        for a count of 1 its first plural word is made singular ("1 row to add"). A zero is
        shown in the neutral tone: nothing is added or removed. ``first`` puts it before the
        counts so far (a warning: secret-looking files)."""
        count = operator.index(count)  # a numpy integer becomes an int the shape allows
        tone = tone if count else "neutral"
        self._used += _ENTRY_COST + len(label)  # always kept, so always charged
        item = {"label": label if count != 1 else singular(label), "count": count, "tone": tone}
        self._headline.insert(0 if first else len(self._headline), item)

    def _block(
        self, kind: str, title: str | None, fold: bool = False, last: bool = False, **fields: Any
    ) -> dict[str, Any] | None:
        if not self.spend(title or "", kind="blocks"):
            return None
        block = {"type": kind, "title": None if title is None else clip(title), **fields}
        if fold:
            block["fold"] = True
        (self._last_blocks if last else self._blocks).append(block)
        return block

    def facts(
        self,
        items: Iterable[tuple[str, str]],
        title: str | None = None,
        kind: str = "facts",
        fold: bool = False,
        last: bool = False,
    ) -> None:
        """Labelled values ("program", "/usr/bin/git"); a ``path:`` label prefix marks a path.
        ``fold`` marks plumbing a renderer shows closed, after the other blocks. ``last``
        places the block after every block added later (where and by whom, read after what
        changes), charged now: a long list of changes cannot crowd it out."""
        block = self._block("facts", title, fold, last, items=[])
        if block is None:
            return
        for label, value in items:
            is_path = label.startswith("path:")
            label = label.removeprefix("path:")
            if self.spend(label, value, kind=kind):
                block["items"].append({"label": clip(label), "value": clip(value), "path": is_path})

    def argv(
        self,
        items: Sequence[str],
        title: str | None = None,
        kind: str = "arguments",
        fold: bool = False,
    ) -> None:
        """The exact argument vector of a command, one entry per argument; ``fold`` when it is
        plumbing (a git commit's), not what the person judges (a shell command's)."""
        block = self._block("argv", title, fold, items=[])
        if block is None:
            return
        for item in items:
            if self.spend(item, kind=kind):
                block["items"].append(clip(item))

    def request(self, method: str, url: str, title: str | None = None) -> None:
        """An HTTP method and the exact URL."""
        self._block("request", title, method=clip(method), url=clip(url))

    def code(
        self, text: str, language: str, title: str | None = None, kind: str = "code lines"
    ) -> None:
        """Code to highlight: as many whole lines as fit, each exactly as it is (code is judged
        to the character), charged by its length as JSON."""
        block = self._block("code", title, language=language, text="")
        if block is None:
            return
        lines = text.split("\n")
        room = self.remaining
        used = 0
        kept = 0
        for line in lines:
            # As the store keeps it: escaped and JSON-quoted (the quotes pay for the "\n").
            cost = len(json.dumps(make_visible(line), ensure_ascii=False))
            if used + cost > room:
                break
            used += cost
            kept += 1
        self._used += used
        if kept < len(lines):
            self._used = self.budget
            self.left_out(len(lines) - kept, kind)
        block["text"] = "\n".join(lines[:kept])

    def lines(self, lines: Iterable[str], title: str | None = None, kind: str = "lines") -> None:
        """Plain lines, as in the text preview."""
        block = self._block("text", title, lines=[])
        if block is None:
            return
        for line in lines:
            if self.spend(line, kind=kind):
                block["lines"].append(clip(line))

    def paths(self, title: str | None = None) -> PathsBlock | None:
        """A list of paths with a detail each (size, kind); None if the budget is spent."""
        block = self._block("paths", title, items=[])
        return None if block is None else PathsBlock(self, block)

    def diff(self, old_path: str, new_path: str, title: str | None = None) -> DiffBlock | None:
        """A file diff to fill with hunks; None if the budget is spent."""
        block = self._block(
            "diff", title, old_path=clip(old_path), new_path=clip(new_path), hunks=[]
        )
        return None if block is None else DiffBlock(self, block)

    def table(
        self, columns: Sequence[tuple[str, str | None, bool]], title: str | None = None
    ) -> TableBlock | None:
        """A small table of ``(name, type, is_key)`` columns to fill with rows."""
        if not self.spend(*(f"{n}{t or ''}" for n, t, _ in columns), kind="blocks"):
            return None
        block = self._block(
            "table",
            title,
            columns=[{"name": clip(n), "type": t, "key": k} for n, t, k in columns],
            rows=[],
        )
        return None if block is None else TableBlock(self, block)

    def document(self) -> dict[str, Any]:
        """The structured preview in its documented shape (docs/protocol.md 4.1)."""
        return {
            "version": STRUCTURED_VERSION,
            "headline": list(self._headline),
            "blocks": [*self._blocks, *self._last_blocks],
            "left_out": [
                {"kind": k if c != 1 else singular(k), "count": c}
                for k, c in self._left_out.items()
            ],
            "notes": list(self._notes),
        }


def singular(label: str) -> str:
    """``label`` with its first plural word made singular (``rows added`` -> ``row added``)."""
    words = label.split(" ")
    for index, word in enumerate(words):
        if len(word) > 2 and word.endswith("s") and not word.endswith("ss"):
            words[index] = word[:-1]
            break
    return " ".join(words)


class PathsBlock:
    """A ``paths`` block being filled."""

    def __init__(self, owner: StructuredPreview, block: dict[str, Any]) -> None:
        self._owner = owner
        self._items: list[dict[str, Any]] = block["items"]

    def add(self, path: str, detail: str | None = None, kind: str = "paths") -> bool:
        """Append one path; False, and counted, if it does not fit."""
        if not self._owner.spend(path, detail or "", kind=kind):
            return False
        self._items.append({"path": clip(path), "detail": None if detail is None else clip(detail)})
        return True


class DiffBlock:
    """A ``diff`` block being filled, hunk by hunk."""

    def __init__(self, owner: StructuredPreview, block: dict[str, Any]) -> None:
        self._owner = owner
        self._hunks: list[dict[str, Any]] = block["hunks"]
        self._lines: list[dict[str, Any]] | None = None

    def hunk(self, old_start: int, new_start: int) -> bool:
        """Start a hunk at these 1-based line numbers; False, and counted, if it does not fit."""
        if not self._owner.spend("", kind="hunks"):
            self._lines = None
            return False
        hunk: dict[str, Any] = {"old_start": old_start, "new_start": new_start, "lines": []}
        self._hunks.append(hunk)
        self._lines = hunk["lines"]
        return True

    def line(
        self, op: str, old: int | None, new: int | None, parts: Sequence[tuple[str, bool]]
    ) -> bool:
        """Append a line to the current hunk: ``parts`` are ``(text, changed)`` pieces."""
        texts = [text for text, _ in parts]
        if self._lines is None or not self._owner.spend(*texts, kind="diff lines"):
            return False
        kept: list[dict[str, Any]] = []
        room = LINE_BUDGET
        for text, changed in parts:
            if room <= 0:
                break
            piece = text[:room]
            room -= len(piece)
            kept.append({"text": piece, "changed": changed})
        length = sum(len(text) for text in texts)
        if length > LINE_BUDGET:
            kept.append(
                {"text": f" … ({length - LINE_BUDGET:,} more characters)", "changed": False}
            )
        self._lines.append({"op": op, "old": old, "new": new, "parts": kept})
        return True


class TableBlock:
    """A ``table`` block being filled, row by row."""

    def __init__(self, owner: StructuredPreview, block: dict[str, Any]) -> None:
        self._owner = owner
        self._width = len(block["columns"])
        self._rows: list[dict[str, Any]] = block["rows"]

    def row(self, change: str, cells: Sequence[str | tuple[str, str]], kind: str = "rows") -> bool:
        """Append a row: each cell a text, or ``(old, new)`` for a changed value."""
        if len(cells) != self._width:
            raise ValueError(f"a row of this table has {self._width} cells, not {len(cells)}")
        texts = [part for cell in cells for part in ((cell,) if isinstance(cell, str) else cell)]
        if not self._owner.spend(*texts, kind=kind):
            return False
        self._rows.append(
            {
                "change": change,
                "cells": [
                    {"text": clip(cell)}
                    if isinstance(cell, str)
                    else {"old": clip(cell[0]), "new": clip(cell[1])}
                    for cell in cells
                ],
            }
        )
        return True
