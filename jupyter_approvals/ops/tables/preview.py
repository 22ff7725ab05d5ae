"""The part of a table.write card that compares the new table with the file it replaces.

Columns added, removed or retyped; rows before and after; with a key, rows added, removed and
changed, with example keys and the changed columns. Every comparison is bounded by size and
by the preview's deadline, and says so when it is skipped. A CSV file is compared as text with
the text the new table will be written as, so type guessing never invents changes.

It is written into the card's structured preview through
:class:`...previews.table_structured.StructuredComparison` (the text is rendered from that
document). The first rows of the new table are
:func:`...previews.table_structured.add_head`; its name is importable from here too.
"""

from __future__ import annotations

from collections.abc import Hashable
from pathlib import Path
from typing import Any

from ...core.fixed_format import fixed_formatting
from ...previews.structured import StructuredPreview
from ...previews.table_diff import EXAMPLES, ColumnDiff, RowDiff, diff_columns, diff_rows
from ...previews.table_head import HEAD_COLUMNS, HEAD_ROWS, STRUCTURED_ROWS
from ...previews.table_structured import (
    TABLE_COLUMNS,
    ColumnTypes,
    StructuredComparison,
    add_head,
    cell_text,
)
from ...previews.text import Deadline, plural
from ..common.files_state import FileState
from .formats import csv_frame, csv_names, read_existing

__all__ = [
    "CSV_DIFF_LIMIT_CELLS",
    "DIFF_LIMIT_BYTES",
    "HEAD_COLUMNS",
    "HEAD_ROWS",
    "STRUCTURED_ROWS",
    "TABLE_COLUMNS",
    "add_changes",
    "add_csv_changes",
    "add_head",
    "cell_text",
]

#: A new table larger than this (bytes in memory) is not diffed row by row in the preview.
DIFF_LIMIT_BYTES = 512 * 1024 * 1024
#: Cells of a new table a CSV preview renders and compares by key (about 5 s at most here).
CSV_DIFF_LIMIT_CELLS = 5_000_000


def add_changes(
    structured: StructuredPreview,
    pd: Any,
    new: Any,
    target: Path,
    state: FileState,
    fmt: str,
    key: list[Hashable] | None,
    index: bool,
    deadline: Deadline,
) -> None:
    """Compare the new table with the file it replaces, as far as size and time allow."""
    existing = read_existing(pd, target, fmt, index, state.size or 0, state.data)
    shown = StructuredComparison(structured)
    if existing.problem is not None:
        shown.note(existing.problem)
    if existing.frame is None:
        columns = _names_only(existing.dtypes, new) if existing.dtypes is not None else None
        shown.changes(None, existing.rows, len(new), columns)
        return
    old = existing.frame
    columns = diff_columns(old, new)
    if key is None or _row_diff_skipped(old, new, key, deadline, shown):
        shown.changes(None, len(old), len(new), columns)
        return
    rows = diff_rows(pd, old, new, key, max(EXAMPLES, STRUCTURED_ROWS))
    _duplicates(rows, shown)
    shown.changes(rows, len(old), len(new), columns)
    if shown.on(deadline):
        types = {name: str(dtype) for name, dtype in new.dtypes.items()}
        old_types = {name: str(dtype) for name, dtype in old.dtypes.items()}
        shown.rows(rows, old, new, key, ColumnTypes(types, old_types, set(key)))


def add_csv_changes(
    structured: StructuredPreview,
    pd: Any,
    df: Any,
    target: Path,
    state: FileState,
    key: list[Hashable] | None,
    index: bool,
    deadline: Deadline,
) -> None:
    """Compare with a CSV file as text: the file's cells against what the new file will hold."""
    existing = read_existing(pd, target, "csv", index, state.size or 0, state.data)
    shown = StructuredComparison(structured)
    if existing.problem is not None:
        shown.note(existing.problem)
    if existing.frame is None:
        shown.changes(None, None, len(df), None)
        return
    old = existing.frame
    try:
        names = csv_names(pd, df, index)
    except Exception as exc:  # a frame CSV cannot render only changes what the preview says
        shown.note(f"the new table's CSV header could not be read back: {exc}")
        shown.changes(None, len(old), len(df), None)
        return
    # Index columns come first in the file, then df's columns in order.
    offset = df.index.nlevels if index else 0
    if len(names) != offset + len(df.columns):
        shown.note("the new table's CSV header does not map to its columns; not compared")
        shown.changes(None, len(old), len(df), None)
        return
    new_types = {
        name: str(
            df.index.get_level_values(at).dtype if at < offset else df.dtypes.iloc[at - offset]
        )
        for at, name in enumerate(names)
    }
    columns = ColumnDiff(
        added=[(n, t) for n, t in new_types.items() if n not in old.columns],
        removed=[(n, "text") for n in old.columns if n not in new_types],
    )
    if key is None:
        shown.changes(None, len(old), len(df), columns)
        return
    key_names = [names[offset + df.columns.get_loc(name)] for name in key]
    if _row_diff_skipped(old, df, key_names, deadline, shown):
        shown.changes(None, len(old), len(df), columns)
        return
    if df.size > CSV_DIFF_LIMIT_CELLS:
        # Rendering the new table as CSV text and reading it back costs about a second per
        # million cells: past the limit the card would take too long to appear.
        shown.note(
            f"Row changes by key were not computed: the new table has {df.size:,} cells, more "
            f"than the {CSV_DIFF_LIMIT_CELLS:,} a CSV preview compares."
        )
        shown.changes(None, len(old), len(df), columns)
        return
    new = csv_frame(pd, df, index)
    rows = diff_rows(pd, old, new, key_names, max(EXAMPLES, STRUCTURED_ROWS))
    _duplicates(rows, shown)
    shown.changes(rows, len(old), len(df), columns)
    if shown.on(deadline):
        # The file holds text: its cells are shown as text, under the new table's dtypes; a
        # key is quoted only where the new table's key column holds text.
        quoted = {
            name
            for name in key_names
            if pd.api.types.is_object_dtype(new_types[name])
            or pd.api.types.is_string_dtype(new_types[name])
        }
        shown.rows(rows, old, new, key_names, ColumnTypes(new_types, {}, quoted))


def _row_diff_skipped(
    old: Any,
    new: Any,
    key: list[Hashable],
    deadline: Deadline,
    shown: StructuredComparison,
) -> bool:
    """Say why rows cannot be compared by key, if they cannot; True then."""
    missing = [name for name in key if name not in old.columns]
    reason = None
    if missing:
        reason = (
            f"Rows by key: the existing file has no column {', '.join(map(repr, missing))}; "
            "rows cannot be matched by key."
        )
    elif deadline.passed():
        reason = "Row changes by key were not computed: reading the existing file took too long."
    elif new.memory_usage(index=False).sum() > DIFF_LIMIT_BYTES:
        reason = (
            "Row changes by key were not computed: the new table is too large to compare "
            "in the preview."
        )
    if reason is None:
        return False
    shown.note(reason)
    return True


def _names_only(old_types: dict[Any, str], new: Any) -> ColumnDiff:
    # Types from a Parquet footer are Arrow types, not comparable with pandas dtypes.
    new_types = {name: str(dtype) for name, dtype in new.dtypes.items()}
    return ColumnDiff(
        added=[(n, t) for n, t in new_types.items() if n not in old_types],
        removed=[(n, t) for n, t in old_types.items() if n not in new_types],
    )


def _duplicates(rows: RowDiff, shown: StructuredComparison) -> None:
    """A note for each side whose key is not unique: rows were matched by their first row."""
    for which, count, examples in (
        ("existing file", rows.duplicate_old, rows.example_duplicate_old[:EXAMPLES]),
        ("new table", rows.duplicate_new, rows.example_duplicate_new[:EXAMPLES]),
    ):
        if count:
            shown.note(
                f"Duplicate keys in the {which}: {plural(count, 'key')} "
                f"{'appears' if count == 1 else 'appear'} more than once "
                f"({_examples(examples, count)}); only the first row of each was compared."
            )


def _examples(values: list[Any], total: int) -> str:
    shown = ", ".join(_key_text(v) for v in values)
    more = total - len(values)
    return f"{shown}, … {more:,} more" if more > 0 else shown


def _key_text(value: Any) -> str:
    with fixed_formatting():
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
