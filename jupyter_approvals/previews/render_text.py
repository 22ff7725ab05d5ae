"""The text preview, rendered from the structured one: each fact is written once.

A ready operation builds one :class:`~.structured.StructuredPreview`; :func:`render_text`
turns its document (docs/protocol.md 4.1) into the deterministic ``text/plain`` preview that
agents, terminals and nbval read, and :func:`preview_of` returns both as a
:class:`~.structured.Preview`. The text therefore never says something the card does not.

The text is bounded like every preview: at most :data:`~.text.PREVIEW_BUDGET` characters,
each line at most about :data:`~.text.LINE_BUDGET` (the document's strings are cut there
already; code lines are wrapped, not cut). A document may hold three times more than the text
can, so the blocks share the text's room: a block that needs little gets all it needs, and
the long ones split the rest evenly, so a huge command or diff never pushes the facts after
it out of the text. Whatever a block cannot show is counted, and the text ends with one line
per kind of thing left out (the document's own counts included), then the notes.

How each block reads:

- the headline: its counts on one line, ``2 lines added, 1 line removed``;
- ``facts``: ``label: value``, one a line;
- ``argv``: the command as a shell would quote it (or one argument a line, when long);
- ``request``: ``METHOD url``;
- ``code``: its lines, indented by two spaces; a line longer than :data:`WRAP` characters
  continues on the next ones, each marked ``↪``;
- ``diff``: a unified diff (``---``/``+++``, ``@@`` hunk headers from the line numbers);
- ``table``: a header of the columns (``[key]`` and the type named), then one row a line,
  marked ``+`` added, ``-`` removed, ``~`` changed, a changed cell as ``old -> new``;
- ``paths``: ``path  detail``;
- ``text``: its lines.

A titled block starts with ``title:`` and indents what follows (a diff's lines excepted:
they stay as a unified diff has them). A value meant for one line (a label, a path, an
argument) has its control characters written as escapes (``\\n``, ``\\x1b``), so no value can
start a line that looks like another fact.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from .structured import Preview, StructuredPreview, clip, singular
from .text import LINE_BUDGET, PREVIEW_BUDGET, TAIL_RESERVE

__all__ = ["CONTROL_ESCAPES", "WRAP", "one_line", "preview_of", "render_text"]

#: How a control character is written in a value meant for one line (a tab stays a tab).
CONTROL_ESCAPES = {
    code: ("\\n" if code == 10 else "\\r" if code == 13 else f"\\x{code:02x}")
    for code in (*range(0x00, 0x09), *range(0x0A, 0x20), 0x7F)
}

#: Characters of a code line on one line of the text; the rest continues on the next.
WRAP = 200

#: The longest line the renderer writes: a label and a value, each cut at LINE_BUDGET in the
#: document, fit on one line; anything longer is cut here, announced the same way.
_LINE_LIMIT = 2 * LINE_BUDGET + 100

#: Each line's cost besides its characters: the line feed after it.
_NEWLINE = 1

_MARKS = {"added": "+", "removed": "-", "changed": "~", "same": " "}
_DIFF_MARKS = {"added": "+", "removed": "-", "context": " "}

#: What a block's lines are counted as when the text has no room for them.
_KINDS = {
    "facts": "facts",
    "argv": "arguments",
    "request": "lines",
    "code": "code lines",
    "diff": "diff lines",
    "table": "rows",
    "paths": "paths",
    "text": "lines",
}


def one_line(value: str) -> str:
    """``value`` with its control characters escaped, so that it stays on one line."""
    return value.translate(CONTROL_ESCAPES)


def preview_of(structured: StructuredPreview, budget: int = PREVIEW_BUDGET) -> Preview:
    """The preview a producer returns: the document, and the text rendered from it."""
    document = structured.document()
    return Preview(render_text(document, budget), document)


def render_text(document: Mapping[str, Any], budget: int = PREVIEW_BUDGET) -> str:
    """The bounded, deterministic text of a structured preview ``document``."""
    head = _headline(document.get("headline", []))
    blocks = [(_KINDS.get(block["type"], "lines"), _block(block)) for block in document["blocks"]]
    room = budget - TAIL_RESERVE - sum(len(line) + _NEWLINE for line in head)
    shares = _shares([sum(len(line) + _NEWLINE for line in lines) for _, lines in blocks], room)
    kept = list(head)
    cut = _LeftOut()
    for (kind, lines), share in zip(blocks, shares, strict=True):
        used = 0
        for index, line in enumerate(lines):
            used += len(line) + _NEWLINE
            if used > share:
                cut.add(kind, len(lines) - index)
                break
            kept.append(line)
    for entry in document.get("left_out", []):
        cut.add(entry["kind"], entry["count"])
    notes = [one_line(clip(note)) for note in document.get("notes", [])]
    text = "\n".join([*kept, *cut.lines(), *notes])
    if len(text) > budget:  # only with very many notes: the budget is a promise
        end = "\n… the rest of this preview is not shown"
        text = text[: budget - len(end)] + end
    return text


def _shares(sizes: Sequence[int], room: int) -> list[int]:
    """Room for each block: all it needs if it is small, the rest split evenly between the
    long ones (a water level: no block gets more than it needs, none less than the level)."""
    if sum(sizes) <= room:
        return list(sizes)
    level = 0.0
    left = max(room, 0)
    order = sorted(range(len(sizes)), key=lambda at: sizes[at])
    for position, at in enumerate(order):
        even = left / (len(sizes) - position)
        if sizes[at] > even:
            level = even
            break
        left -= sizes[at]
    return [min(size, int(level)) if size > level else size for size in sizes]


class _LeftOut:
    """Counts of what the text does not show, by kind, in the order first met.

    A document writes the kind of a count of 1 in the singular ("diff line"); it is merged
    with the renderer's own count of the same kind ("diff lines").
    """

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}

    def add(self, kind: str, count: int) -> None:
        if count > 0:
            kind = _PLURAL_OF.get(kind, kind)
            self._counts[kind] = self._counts.get(kind, 0) + count

    def lines(self) -> Iterator[str]:
        for kind, count in self._counts.items():
            shown = singular(kind) if count == 1 and kind in _PLURALS else kind
            yield one_line(f"… {count:,} more {shown} not shown")


#: The renderer's own kinds, and each one's singular (how a document writes a count of 1).
_PLURALS = frozenset(_KINDS.values())
_PLURAL_OF = {singular(kind): kind for kind in _PLURALS}


def _cut(line: str) -> str:
    if len(line) <= _LINE_LIMIT:
        return line
    return f"{line[:_LINE_LIMIT]} … ({len(line) - _LINE_LIMIT:,} more characters)"


def _headline(counts: Sequence[Mapping[str, Any]]) -> list[str]:
    """The headline's counts, joined on lines of at most LINE_BUDGET characters."""
    lines: list[str] = []
    for count in counts:
        item = one_line(f"{count['count']:,} {count['label']}")
        if lines and len(lines[-1]) + 2 + len(item) <= LINE_BUDGET:
            lines[-1] = f"{lines[-1]}, {item}"
        else:
            lines.append(_cut(item))
    return lines


def _block(block: Mapping[str, Any]) -> list[str]:
    """The lines of one block, its title first."""
    title = block.get("title")
    indent = "" if title is None else "  "
    kind = block["type"]
    if kind == "facts":
        body = [f"{one_line(i['label'])}: {one_line(i['value'])}" for i in block["items"]]
    elif kind == "argv":
        body = _argv(block["items"])
    elif kind == "request":
        body = [f"{one_line(block['method'])} {one_line(block['url'])}"]
    elif kind == "code":
        indent = "  "
        code = block["text"]
        body = [piece for line in code.split("\n") for piece in _wrapped(line)] if code else []
    elif kind == "diff":
        indent = ""
        body = _diff(block)
    elif kind == "table":
        body = _table(block)
    elif kind == "paths":
        body = [_path(item) for item in block["items"]]
    elif kind == "text":
        body = [one_line(line) for line in block["lines"]]
    else:  # a shape checked by core.structured has no other block; say so rather than guess
        body = [f"(a {one_line(str(kind))} block, which this text cannot show)"]
    lines = [] if title is None else [f"{one_line(title)}:"]
    lines.extend(_cut(f"{indent}{line}") for line in body)
    return lines


def _wrapped(line: str) -> list[str]:
    """A code line in pieces of at most WRAP characters, each after the first marked ``↪``:
    code is judged to the character, so a long line is wrapped, never cut (a second SQL
    statement after 400 spaces stays in sight)."""
    pieces = [line[at : at + WRAP] for at in range(0, len(line), WRAP)] or [""]
    return [pieces[0], *(f"↪ {piece}" for piece in pieces[1:])]


def _argv(items: Sequence[str]) -> list[str]:
    """The command on one line as a shell would quote it; one argument a line when long."""
    quoted = [one_line(shlex.quote(item)) for item in items]
    line = " ".join(quoted)
    return [line] if len(line) <= LINE_BUDGET else quoted


def _path(item: Mapping[str, Any]) -> str:
    detail = item.get("detail")
    path = one_line(item["path"])
    return path if detail is None else f"{path}  {one_line(detail)}"


def _range(start: int, length: int) -> str:
    # As a unified diff writes it: an empty range names the line before it.
    if length == 1:
        return f"{start}"
    return f"{start if length else start - 1},{length}"


def _diff(block: Mapping[str, Any]) -> list[str]:
    lines = [f"--- {one_line(block['old_path'])}", f"+++ {one_line(block['new_path'])}"]
    for hunk in block["hunks"]:
        body = hunk["lines"]
        old = sum(1 for line in body if line["op"] != "added")
        new = sum(1 for line in body if line["op"] != "removed")
        lines.append(f"@@ -{_range(hunk['old_start'], old)} +{_range(hunk['new_start'], new)} @@")
        for line in body:
            text = "".join(part["text"] for part in line["parts"])
            lines.append(_DIFF_MARKS.get(line["op"], " ") + text)
    return lines


def _table(block: Mapping[str, Any]) -> list[str]:
    header = " | ".join(
        one_line(column["name"])
        + (" [key]" if column.get("key") else "")
        + (f" ({one_line(column['type'])})" if column.get("type") else "")
        for column in block["columns"]
    )
    lines = [f"  {clip(header)}"]
    for row in block["rows"]:
        cells = " | ".join(
            one_line(cell["text"])
            if "text" in cell
            else f"{one_line(cell['old'])} -> {one_line(cell['new'])}"
            for cell in row["cells"]
        )
        lines.append(f"{_MARKS.get(row['change'], ' ')} {clip(cells)}")
    return lines
