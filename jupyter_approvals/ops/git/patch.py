"""The start of a ``git diff -p`` as the blocks of a structured preview: files, hunks, words.

The commit card's text shows the first lines of the patch as git prints them; the structured
form shows the same lines as one ``diff`` block per file, each line with its old and new line
number, and in a removed line followed by an added one the words that differ marked as
changed. Only the lines the text shows are parsed (at most the previewed bytes of the patch).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from difflib import SequenceMatcher

from ...previews.structured import DiffBlock, StructuredPreview

__all__ = ["add_patch", "changed_words"]

_HUNK = re.compile(r"@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")
_WORD = re.compile(r"\w+|\s+|[^\w\s]")
# Paired lines longer than this are marked as wholly changed: comparing words costs time.
_WORD_LIMIT = 2_000

Parts = list[tuple[str, bool]]


def changed_words(old: str, new: str) -> tuple[Parts, Parts]:
    """``old`` and ``new`` as ``(text, changed)`` parts: the words not in the other are changed."""
    if len(old) > _WORD_LIMIT or len(new) > _WORD_LIMIT:
        return [(old, True)], [(new, True)]
    a, b = _WORD.findall(old), _WORD.findall(new)
    old_parts: Parts = []
    new_parts: Parts = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        same = op == "equal"
        if i2 > i1:
            _append(old_parts, "".join(a[i1:i2]), not same)
        if j2 > j1:
            _append(new_parts, "".join(b[j1:j2]), not same)
    return old_parts or [("", False)], new_parts or [("", False)]


def _append(parts: Parts, text: str, changed: bool) -> None:
    if parts and parts[-1][1] == changed:
        parts[-1] = (parts[-1][0] + text, changed)
    else:
        parts.append((text, changed))


def _file_name(header: str, prefix: str) -> str:
    name = header[4:]
    if name.startswith(prefix):
        return name[len(prefix) :]
    return name  # /dev/null


class _PatchReader:
    """Feeds patch lines to the builder, one diff block per file."""

    def __init__(self, structured: StructuredPreview) -> None:
        self.structured = structured
        self.diff: DiffBlock | None = None
        self.old_path = ""
        self.in_hunk = False
        self.old = self.new = 0
        self.removed: list[tuple[int, str]] = []
        self.added: list[tuple[int, str]] = []

    def feed(self, line: str) -> None:
        if line.startswith("diff --git "):
            self.flush()
            self.diff = None
            self.in_hunk = False
            return
        if not self.in_hunk and line.startswith("--- "):
            self.old_path = _file_name(line, "a/")
            return
        if not self.in_hunk and line.startswith("+++ "):
            self.diff = self.structured.diff(self.old_path, _file_name(line, "b/"))
            return
        match = _HUNK.match(line)
        if match is not None:
            self.flush()
            self.old, self.new = int(match.group(1)), int(match.group(2))
            # A hunk of a created or deleted file starts at line 0 on the missing side.
            self.in_hunk = self.diff is not None and self.diff.hunk(
                max(self.old, 1), max(self.new, 1)
            )
            self.old, self.new = max(self.old, 1), max(self.new, 1)
            return
        if not self.in_hunk or self.diff is None:
            return
        mark, text = line[:1], line[1:]
        if mark == "-":
            self.removed.append((self.old, text))
            self.old += 1
        elif mark == "+":
            self.added.append((self.new, text))
            self.new += 1
        elif mark == " ":
            self.flush()
            self.diff.line("context", self.old, self.new, [(text, False)])
            self.old += 1
            self.new += 1
        # "\ No newline at end of file" and anything else: not a line of either side

    def flush(self) -> None:
        """Write out a run of removed lines and the added lines after it, words paired."""
        if self.diff is None or not (self.removed or self.added):
            self.removed.clear()
            self.added.clear()
            return
        pairs = min(len(self.removed), len(self.added))
        marked = [changed_words(self.removed[i][1], self.added[i][1]) for i in range(pairs)]
        for index, (number, text) in enumerate(self.removed):
            parts = marked[index][0] if index < pairs else [(text, False)]
            self.diff.line("removed", number, None, parts)
        for index, (number, text) in enumerate(self.added):
            parts = marked[index][1] if index < pairs else [(text, False)]
            self.diff.line("added", None, number, parts)
        self.removed.clear()
        self.added.clear()


def add_patch(structured: StructuredPreview, lines: Sequence[str]) -> None:
    """Add the lines of a ``git diff -p`` as diff blocks; once the budget is spent the lines
    not read are counted as left out."""
    reader = _PatchReader(structured)
    for index, line in enumerate(lines):
        if structured.full:
            structured.left_out(len(lines) - index, "patch lines")
            break
        reader.feed(line)
    reader.flush()
