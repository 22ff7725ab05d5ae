"""The preview of a CSV file too large to load as a table (a change set's file over the diff
limit), compared line by line while both files stream through once.

Memory stays constant whatever the size: two lines at a time, and the first changed rows kept
as examples. Rows are matched by their position in the file, which is exact for rows changed
in place and for rows added or removed at the end; rows inserted or removed in the middle
shift the rest, which is then counted as changed (the preview says so when most rows differ).
Both files are hashed as they are read, so the caller can refuse a preview of other bytes than
the listed ones.
"""

from __future__ import annotations

import csv
import hashlib
import operator
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import compress
from pathlib import Path
from typing import Any, BinaryIO

from .structured import StructuredPreview
from .table_head import STRUCTURED_ROWS

#: Bytes read at a time from each file.
_BLOCK = 1 << 20
#: Past this share of rows changed, the preview says rows were probably shifted.
SHIFTED_SHARE = 0.5


@dataclass
class LineComparison:
    """What streaming the two files found."""

    old_sha256: str = ""
    new_sha256: str = ""
    header: tuple[list[str], list[str]] = ([], [])
    changed: int = 0
    unchanged: int = 0
    added: int = 0
    removed: int = 0
    #: (line number, old cells, new cells) of the first changed rows.
    examples: list[tuple[int, list[str], list[str]]] = field(default_factory=list)


def compare_lines(old: BinaryIO, new: BinaryIO, keep: int = STRUCTURED_ROWS) -> LineComparison:
    """Stream ``old`` and ``new`` (binary, at their start) line by line, in step.

    The files are read in blocks, hashed block by block, and split into lines in C; lines are
    compared a batch at a time (``map``), so Python steps only through changed rows."""
    found = LineComparison()
    old_digest, new_digest = hashlib.sha256(), hashlib.sha256()
    old_lines, new_lines = _lines(old, old_digest), _lines(new, new_digest)
    first_old, first_new = next(old_lines, None), next(new_lines, None)
    found.header = (_cells(_text(first_old)), _cells(_text(first_new)))
    before: list[bytes] = []
    after: list[bytes] = []
    number = 1  # the line number of the last line compared
    while True:
        if not before:
            before = next(old_lines, [])
        if not after:
            after = next(new_lines, [])
        if not before or not after:
            break
        count = min(len(before), len(after))
        differs = list(map(operator.ne, before[:count], after[:count]))
        changed = sum(differs)
        found.changed += changed
        found.unchanged += count - changed
        if changed and len(found.examples) < keep:
            for at in compress(range(count), differs):
                old_cells, new_cells = _cells(_text(before[at])), _cells(_text(after[at]))
                found.examples.append((number + 1 + at, old_cells, new_cells))
                if len(found.examples) == keep:
                    break
        number += count
        before, after = before[count:], after[count:]
    found.removed = len(before) + sum(len(batch) for batch in old_lines)
    found.added = len(after) + sum(len(batch) for batch in new_lines)
    found.old_sha256, found.new_sha256 = old_digest.hexdigest(), new_digest.hexdigest()
    return found


def _lines(handle: BinaryIO, digest: Any) -> Iterator[Any]:
    """The header line first, then batches of the following lines (without line ends)."""
    rest = b""
    first = True
    while chunk := handle.read(_BLOCK):
        digest.update(chunk)
        lines = (rest + chunk).split(b"\n")
        rest = lines.pop()
        if first and lines:
            first = False
            yield lines[0]
            lines = lines[1:]
        if lines:
            yield lines
    if rest:
        if first:
            yield rest
        else:
            yield [rest]


def _text(line: bytes | None) -> str:
    return (line or b"").decode("utf-8", errors="replace").rstrip("\r\n")


def _cells(text: str) -> list[str]:
    try:
        return next(csv.reader([text]), [])
    except csv.Error:
        return [text]


def large_csv_change(
    path: str, old_file: Path, new_file: Path
) -> tuple[StructuredPreview, LineComparison]:
    """The structured preview of CSV ``path`` changing from ``old_file`` to ``new_file``, and
    the comparison it came from (with both files' sha256, to check against the listing)."""
    with old_file.open("rb") as old, new_file.open("rb") as new:
        found = compare_lines(old, new)
    structured = StructuredPreview()
    structured.count("rows to add", found.added, "added")
    structured.count("rows to remove", found.removed, "removed")
    structured.count("rows to change", found.changed, "changed")
    structured.count("rows unchanged", found.unchanged)
    structured.facts(
        [("path:file", path), ("change", "Replace (compared line by line: a large CSV)")]
    )
    old_header, new_header = found.header
    if old_header != new_header:
        structured.facts(
            [("header before", ",".join(old_header)), ("header after", ",".join(new_header))]
        )
    rows = found.changed + found.unchanged
    if rows and found.changed / rows > SHIFTED_SHARE:
        structured.note(
            "Most rows differ at the same position: rows were probably inserted or removed "
            "before them, and the rows after are counted as changed"
        )
    width = max([len(new_header), *(len(after) for _, _, after in found.examples)])
    names = [*new_header, *(f"column {i + 1}" for i in range(len(new_header), width))]
    table = structured.table(
        [("line", None, True), *((name, None, False) for name in names)],
        title=f"Changed rows (old -> new; {len(found.examples)} of {found.changed:,})",
    )
    for number, old_cells, new_cells in found.examples:
        if table is None:
            break
        cells: list[str | tuple[str, str]] = [str(number)]
        for at in range(width):
            was = old_cells[at] if at < len(old_cells) else ""
            now = new_cells[at] if at < len(new_cells) else ""
            cells.append(now if was == now else (was, now))
        table.row("changed", cells)
    structured.note(
        "Compared line by line, in file order: the file is too large to load as a table"
    )
    return structured, found
