"""The unified-diff rendering of a line diff, and its preview bounded in size and time.

:func:`~.line_match.diff_lines` finds the changed blocks; :func:`unified_lines` renders them
in the format of :func:`difflib.unified_diff` (``---``/``+++`` headers, ``@@`` hunks, 3 lines
of context), and :func:`add_diff` puts the diff into a :class:`.StructuredPreview`: the counts
as its headline, then the hunks with the line numbers of each side and, in a removed line
paired with an added one, the words that differ marked (:func:`changed_words`), as far as its
budget allows. Only the lines it keeps are compared. The text preview is rendered from that
document (:mod:`.render_text`), in the same unified format.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator

from .line_match import Block, LineDiff, diff_lines, is_binary, split_lines
from .structured import DiffBlock, StructuredPreview
from .text import LINE_BUDGET, Deadline

__all__ = [
    "CONTEXT",
    "MAX_DIFF_BYTES",
    "Block",
    "LineDiff",
    "add_diff",
    "changed_words",
    "diff_lines",
    "hunk_range",
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


def _range(start: int, stop: int) -> str:
    # Same convention as difflib (and GNU diff): an empty range names the line before it.
    length = stop - start
    if length == 1:
        return f"{start + 1}"
    return f"{start + 1 if length else start},{length}"


_BOM = b"\xef\xbb\xbf"
#: Line endings by how people name them.
_ENDING_NAMES = {b"\r\n": "CRLF (Windows)", b"\n": "LF", b"\r": "CR (old Mac)"}


def _ending(line: bytes) -> bytes | None:
    for ending in (b"\r\n", b"\n", b"\r"):
        if line.endswith(ending):
            return ending
    return None


def _endings(lines: list[bytes]) -> dict[bytes, int]:
    """How many lines end with each kind of line ending (an unterminated last line: none)."""
    counts: dict[bytes, int] = {}
    for line in lines:
        ending = _ending(line)
        if ending is not None:
            counts[ending] = counts.get(ending, 0) + 1
    return counts


def _ending_words(counts: dict[bytes, int]) -> str:
    """ "CRLF (Windows) on 120 lines", "LF on 3 lines and CRLF (Windows) on 1 line"."""
    parts = [
        f"{_ENDING_NAMES[ending]} on {count:,} line{'s' if count != 1 else ''}"
        for ending, count in sorted(counts.items(), key=lambda item: -item[1])
    ]
    return " and ".join(parts)


def _same_endings(lines: list[bytes]) -> list[bytes]:
    """``lines`` with every line ending written ``\\n``, for comparing their content."""
    return [
        line[: -len(ending)] + b"\n" if (ending := _ending(line)) is not None else line
        for line in lines
    ]


def _without_bom(lines: list[bytes]) -> list[bytes]:
    if lines and lines[0].startswith(_BOM):
        return [lines[0][len(_BOM) :], *lines[1:]]
    return lines


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


def add_diff(
    structured: StructuredPreview,
    old: bytes,
    new: bytes,
    fromfile: str,
    tofile: str,
    deadline: Deadline | None = None,
) -> LineDiff:
    """Diff ``old`` and ``new`` into ``structured``: the counts as its headline, then the hunks
    while its budget lasts (the rest counted); the text preview is rendered from it.

    A change of line endings (CRLF to LF, say) or of a byte order mark is said in words, and
    lines that differ only by it are compared as equal: a line removed and added again, the
    same on screen, would hide it."""
    old_lines, new_lines = split_lines(old), split_lines(new)
    said: list[str] = []
    if old.startswith(_BOM) != new.startswith(_BOM):
        where = "added at" if new.startswith(_BOM) else "removed from"
        said.append(f"A UTF-8 byte order mark is {where} the start of the file.")
        old_lines, new_lines = _without_bom(old_lines), _without_bom(new_lines)
    old_endings, new_endings = _endings(old_lines), _endings(new_lines)
    if old_endings and new_endings and set(old_endings) != set(new_endings):
        changing = sum(n for kind, n in old_endings.items() if kind not in new_endings)
        structured.count("lines to change their line ending", changing, "changed")
        said.append(
            f"Line endings change: {_ending_words(old_endings)} now, "
            f"{_ending_words(new_endings)} after. Lines that differ only in their ending are "
            "shown as unchanged."
        )
        old_lines, new_lines = _same_endings(old_lines), _same_endings(new_lines)
    diff = diff_lines(old_lines, new_lines, deadline)
    bound = "" if diff.exact else " (at most)"
    structured.count(f"lines to add{bound}", diff.added, "added")
    structured.count(f"lines to remove{bound}", diff.removed, "removed")
    for sentence in said:
        structured.note(sentence)
    if not diff.exact:
        structured.note(
            f"The diff was cut off after {deadline.seconds if deadline else 0:g} s: some "
            "changes are shown as whole blocks replaced, so fewer lines may really change."
        )
    if not diff.blocks:
        return diff
    block = structured.diff(fromfile, tofile)
    # Hunks there is no room for, and their lines: counted once at the end.
    cut_hunks = cut_lines = 0
    for group in hunks(diff):
        if block is None or structured.full:
            cut_hunks += 1
            cut_lines += _structured_size(diff, group)
        else:
            _structured_hunk(structured, block, diff, group, fromfile, tofile)
    structured.left_out(cut_hunks, "hunks")
    structured.left_out(cut_lines, "diff lines")
    return diff


# -- the structured form ----------------------------------------------------------------------

#: Words, runs of white space, and single other characters: what a changed line is marked in.
_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")

#: Lines of up to this many tokens (both sides together) get a token-level diff; longer ones
#: have the run between their common start and common end marked, which costs next to nothing.
SHORT_TOKENS = 120

#: One part of a diff line: its text, and whether it differs from the paired line.
Part = tuple[str, bool]


def _structured_size(diff: LineDiff, group: list[Block]) -> int:
    """Lines a hunk has in the structured form (context, removed and added; no header)."""
    i1, i2, _, _ = hunk_range(diff, group)
    return (i2 - i1) + sum(b[3] - b[2] for b in group)


def _merge(parts: list[Part]) -> list[Part]:
    """Adjacent parts of one kind joined; white space between two changes counted changed."""
    merged: list[Part] = []
    for text, changed in parts:
        if not text:
            continue
        if merged and merged[-1][1] == changed:
            merged[-1] = (merged[-1][0] + text, changed)
        else:
            merged.append((text, changed))
    if len(merged) < 3:
        return merged or [("", False)]
    out: list[Part] = [merged[0]]
    for index in range(1, len(merged)):
        text, changed = merged[index]
        between = not changed and index + 1 < len(merged) and out[-1][1] and not text.strip()
        if between or (changed and out[-1][1]):
            out[-1] = (out[-1][0] + text, True)
        else:
            out.append((text, changed))
    return out


def changed_words(old: str, new: str) -> tuple[list[Part], list[Part]]:
    """The parts of a removed line ``old`` and of the added line ``new`` it pairs with.

    Both are split into words, white space and single other characters; the tokens the two
    do not share are marked changed (a token diff for short lines, else the run between the
    common start and the common end). Only the first ``LINE_BUDGET`` characters of each are
    compared (no more are shown); the rest of a line is one part, changed if the rests differ.
    """
    old_head, old_rest = old[:LINE_BUDGET], old[LINE_BUDGET:]
    new_head, new_rest = new[:LINE_BUDGET], new[LINE_BUDGET:]
    a, b = _TOKEN.findall(old_head), _TOKEN.findall(new_head)
    old_parts: list[Part] = []
    new_parts: list[Part] = []
    if len(a) + len(b) <= SHORT_TOKENS:
        matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            same = tag == "equal"
            old_parts.append(("".join(a[i1:i2]), not same))
            new_parts.append(("".join(b[j1:j2]), not same))
    else:
        limit = min(len(a), len(b))
        start = 0
        while start < limit and a[start] == b[start]:
            start += 1
        end = 0
        while end < limit - start and a[-1 - end] == b[-1 - end]:
            end += 1
        for tokens, parts in ((a, old_parts), (b, new_parts)):
            stop = len(tokens) - end
            parts.append(("".join(tokens[:start]), False))
            parts.append(("".join(tokens[start:stop]), True))
            parts.append(("".join(tokens[stop:]), False))
    rests_differ = old_rest != new_rest
    old_parts.append((old_rest, rests_differ))
    new_parts.append((new_rest, rests_differ))
    return _merge(old_parts), _merge(new_parts)


def _structured_lines(
    diff: LineDiff, group: list[Block], fromfile: str, tofile: str
) -> Iterator[tuple[str, int | None, int | None, list[Part], str | None]]:
    """The lines of one hunk as ``(op, old number, new number, parts, note)``, made lazily.

    A removed line and the added line at the same place of its block are compared when the
    removed one is reached (removed lines come first); the added one's parts are kept for it.
    ``note`` says so of a last line without a line ending (else None).
    """
    old, new = diff.old, diff.new
    i1, i2, _, _ = hunk_range(diff, group)
    at = i1
    shift = group[0][2] - group[0][0]  # new line number minus old one, before the first block
    for b_i1, b_i2, b_j1, b_j2 in group:
        for k in range(at, b_i1):
            yield "context", k + 1, k + 1 + shift, [(show_line(old[k]), False)], None
        pairs = min(b_i2 - b_i1, b_j2 - b_j1)
        paired: dict[int, list[Part]] = {}
        for k in range(b_i1, b_i2):
            text = show_line(old[k])
            if k - b_i1 < pairs:
                parts, paired[k - b_i1] = changed_words(text, show_line(new[b_j1 + k - b_i1]))
            else:
                parts = [(text, False)]
            end = k == len(old) - 1 and not old[k].endswith((b"\n", b"\r"))
            yield "removed", k + 1, None, parts, _NO_NEWLINE.format(fromfile) if end else None
        for k in range(b_j1, b_j2):
            kept = paired.pop(k - b_j1, None)
            parts = kept if kept is not None else [(show_line(new[k]), False)]
            end = k == len(new) - 1 and not new[k].endswith((b"\n", b"\r"))
            yield "added", None, k + 1, parts, _NO_NEWLINE.format(tofile) if end else None
        at = b_i2
        shift = b_j2 - b_i2
    for k in range(at, i2):
        yield "context", k + 1, k + 1 + shift, [(show_line(old[k]), False)], None


_NO_NEWLINE = "No newline at the end of {}."


def _structured_hunk(
    structured: StructuredPreview,
    block: DiffBlock,
    diff: LineDiff,
    group: list[Block],
    fromfile: str,
    tofile: str,
) -> None:
    """One hunk into ``block`` while the budget lasts; the rest of it counted as left out."""
    total = _structured_size(diff, group)
    i1, _, j1, _ = hunk_range(diff, group)
    if not block.hunk(i1 + 1, j1 + 1):
        structured.left_out(total, "diff lines")
        return
    lines = _structured_lines(diff, group, fromfile, tofile)
    for shown, (op, old_number, new_number, parts, note) in enumerate(lines):
        if not block.line(op, old_number, new_number, parts):
            structured.left_out(total - shown - 1, "diff lines")  # line() counted its own
            return
        if note is not None:
            structured.note(note)
