"""The unified-diff rendering of a line diff, and its preview bounded in size and time.

:func:`~.line_match.diff_lines` finds the changed blocks; :func:`unified_lines` renders them
in the format of :func:`difflib.unified_diff` (``---``/``+++`` headers, ``@@`` hunks, 3 lines
of context), and :func:`add_diff_preview` puts as much as fits into a :class:`PreviewText`,
always stating how many lines are added and removed.
"""

from __future__ import annotations

from collections.abc import Iterator

from .line_match import Block, LineDiff, diff_lines, is_binary, split_lines
from .text import Deadline, PreviewText, plural

__all__ = [
    "CONTEXT",
    "MAX_DIFF_BYTES",
    "Block",
    "LineDiff",
    "add_diff_preview",
    "diff_lines",
    "hunk_range",
    "hunk_size",
    "hunks",
    "is_binary",
    "show_line",
    "split_lines",
    "unified_lines",
]

#: Lines of unchanged context around each change, as in ``diff -u``.
CONTEXT = 3

#: Content larger than this (either side) is not diffed: the preview gives sizes and sha256s.
MAX_DIFF_BYTES = 64 << 20


def hunks(diff: LineDiff, context: int = CONTEXT) -> Iterator[list[Block]]:
    """Blocks grouped into hunks: blocks closer than ``2 * context`` lines share a hunk."""
    group: list[Block] = []
    for block in diff.blocks:
        if group and block[0] - group[-1][1] > 2 * context:
            yield group
            group = []
        group.append(block)
    if group:
        yield group


def hunk_range(diff: LineDiff, group: list[Block], context: int = CONTEXT) -> Block:
    """``(old start, old end, new start, new end)`` of a hunk, context included."""
    first, last = group[0], group[-1]
    lead = min(context, first[0], first[2])
    trail = min(context, len(diff.old) - last[1], len(diff.new) - last[3])
    return first[0] - lead, last[1] + trail, first[2] - lead, last[3] + trail


def hunk_size(diff: LineDiff, group: list[Block], context: int = CONTEXT) -> int:
    """Lines :func:`unified_lines` writes for this hunk, its ``@@`` header included."""
    i1, i2, _, _ = hunk_range(diff, group, context)
    return 1 + (i2 - i1) + sum(b[3] - b[2] for b in group)


def _range(start: int, stop: int) -> str:
    # Same convention as difflib (and GNU diff): an empty range names the line before it.
    length = stop - start
    if length == 1:
        return f"{start + 1}"
    return f"{start + 1 if length else start},{length}"


def show_line(line: bytes) -> str:
    """One line as text for the card: decoded (bad bytes replaced), without its line ending."""
    text = line.decode("utf-8", errors="replace")
    if text.endswith("\n"):
        text = text[:-1]
    if text.endswith("\r"):
        text = text[:-1]
    return text


def unified_lines(
    diff: LineDiff, fromfile: str, tofile: str, context: int = CONTEXT
) -> Iterator[str]:
    """The diff in unified format, one line at a time, without line endings.

    As :func:`difflib.unified_diff` with ``lineterm=""``; in addition a changed last line
    without a line ending is followed by ``\\ No newline at end of file``, as in GNU diff.
    """
    if not diff.blocks:
        return
    yield f"--- {fromfile}"
    yield f"+++ {tofile}"
    for group in hunks(diff, context):
        yield from _hunk_lines(diff, group, context)


def _hunk_lines(diff: LineDiff, group: list[Block], context: int) -> Iterator[str]:
    old, new = diff.old, diff.new
    i1, i2, j1, j2 = hunk_range(diff, group, context)
    yield f"@@ -{_range(i1, i2)} +{_range(j1, j2)} @@"
    at = i1
    for b_i1, b_i2, b_j1, b_j2 in group:
        for k in range(at, b_i1):
            yield " " + show_line(old[k])
        for k in range(b_i1, b_i2):
            yield "-" + show_line(old[k])
            if k == len(old) - 1 and not old[k].endswith((b"\n", b"\r")):
                yield "\\ No newline at end of file"
        for k in range(b_j1, b_j2):
            yield "+" + show_line(new[k])
            if k == len(new) - 1 and not new[k].endswith((b"\n", b"\r")):
                yield "\\ No newline at end of file"
        at = b_i2
    for k in range(at, i2):
        yield " " + show_line(old[k])


def add_diff_preview(
    preview: PreviewText,
    old: bytes,
    new: bytes,
    fromfile: str,
    tofile: str,
    deadline: Deadline | None = None,
) -> LineDiff:
    """Diff ``old`` and ``new`` into ``preview``: counts first, then hunks while they fit."""
    diff = diff_lines(split_lines(old), split_lines(new), deadline)
    counts = f"+{diff.added:,} -{diff.removed:,} lines"
    if not diff.exact:
        counts += " at most"
    preview.add(f"Changes: {counts} ({plural(len(diff.blocks), 'changed block')})")
    if not diff.exact:
        preview.note(
            f"The diff was cut off after {deadline.seconds if deadline else 0:g} s: some "
            "changes are shown as whole blocks replaced, so fewer lines may really change."
        )
    if not diff.blocks:
        return diff
    preview.add(f"--- {fromfile}", "diff lines")
    preview.add(f"+++ {tofile}", "diff lines")
    groups = hunks(diff)
    for group in groups:
        if preview.full:
            preview.left_out(hunk_size(diff, group), "diff lines")
            continue
        for line in _hunk_lines(diff, group, CONTEXT):
            preview.add(line, "diff lines")
    return diff
