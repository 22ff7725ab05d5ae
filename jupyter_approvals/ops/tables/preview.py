"""The part of a table.write card that compares the new table with the file it replaces.

Columns added, removed or retyped; rows before and after; with a key, rows added, removed and
changed, with example keys and the changed columns. Every comparison is bounded by size and
by the preview's deadline, and says so when it is skipped. A CSV file is compared as text with
the text the new table will be written as, so type guessing never invents changes.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

from ...previews.table_diff import ColumnDiff, RowDiff, diff_columns, diff_rows
from ...previews.text import Deadline, PreviewText, plural, size_text
from ..common.files_state import FileState
from .formats import csv_frame, csv_names, read_existing

#: Rows and columns of the new table shown as its first rows.
HEAD_ROWS = 5
HEAD_COLUMNS = 12
#: A new table larger than this (bytes in memory) is not diffed row by row in the preview.
DIFF_LIMIT_BYTES = 512 * 1024 * 1024
#: Cells of a new table a CSV preview renders and compares by key (about 5 s at most here).
CSV_DIFF_LIMIT_CELLS = 5_000_000


def head_lines(pd: Any, frame: Any) -> list[str]:
    head = frame.iloc[:HEAD_ROWS, :HEAD_COLUMNS]
    with pd.option_context("display.width", 10_000, "display.max_colwidth", 30):
        lines = head.to_string(index=False).splitlines()
    if frame.shape[1] > HEAD_COLUMNS:
        lines.append(f"  (first {HEAD_COLUMNS} of {frame.shape[1]:,} columns)")
    return ["  " + line for line in lines]


def add_changes(
    text: PreviewText,
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
    text.add(f"Changes against the existing file ({size_text(existing.size)}):")
    if existing.problem is not None:
        text.add(f"  Note: {existing.problem}.")
    if existing.frame is None:
        if existing.dtypes is not None:
            _add_column_changes(text, _names_only(existing.dtypes, new), types=False)
        if existing.rows is not None:
            text.add(f"  Rows: {existing.rows:,} -> {len(new):,}")
        return
    old = existing.frame
    _add_column_changes(text, diff_columns(old, new), types=True)
    text.add(f"  Rows: {len(old):,} -> {len(new):,}")
    if key is None or _row_diff_skipped(text, old, new, key, deadline):
        return
    _add_row_changes(text, diff_rows(pd, old, new, key), key)


def add_csv_changes(
    text: PreviewText,
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
    text.add(f"Changes against the existing file ({size_text(existing.size)}):")
    if existing.problem is not None:
        text.add(f"  Note: {existing.problem}.")
    if existing.frame is None:
        return
    old = existing.frame
    try:
        names = csv_names(pd, df, index)
    except Exception as exc:  # a frame CSV cannot render only changes what the preview says
        text.add(f"  Note: the new table's CSV header could not be read back: {exc}.")
        return
    # Index columns come first in the file, then df's columns in order.
    offset = df.index.nlevels if index else 0
    if len(names) != offset + len(df.columns):
        text.add("  Note: the new table's CSV header does not map to its columns; not compared.")
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
    _add_column_changes(text, columns, types=False)
    text.add(f"  Rows: {len(old):,} -> {len(df):,}")
    if key is None:
        return
    key_names = [names[offset + df.columns.get_loc(name)] for name in key]
    if _row_diff_skipped(text, old, df, key_names, deadline):
        return
    if df.size > CSV_DIFF_LIMIT_CELLS:
        # Rendering the new table as CSV text and reading it back costs about a second per
        # million cells: past the limit the card would take too long to appear.
        text.note(
            f"Row changes by key were not computed: the new table has {df.size:,} cells, more "
            f"than the {CSV_DIFF_LIMIT_CELLS:,} a CSV preview compares."
        )
        return
    new = csv_frame(pd, df, index)
    _add_row_changes(text, diff_rows(pd, old, new, key_names), key)


def _row_diff_skipped(
    text: PreviewText, old: Any, new: Any, key: list[Hashable], deadline: Deadline
) -> bool:
    """Say why rows cannot be compared by key, if they cannot; True then."""
    missing = [name for name in key if name not in old.columns]
    if missing:
        text.add(
            f"  Rows by key: the existing file has no column {', '.join(map(repr, missing))}; "
            "rows cannot be matched by key."
        )
        return True
    if deadline.passed():
        text.note("Row changes by key were not computed: reading the existing file took too long.")
        return True
    if new.memory_usage(index=False).sum() > DIFF_LIMIT_BYTES:
        text.note(
            "Row changes by key were not computed: the new table is too large to compare "
            "in the preview."
        )
        return True
    return False


def _names_only(old_types: dict[Any, str], new: Any) -> ColumnDiff:
    # Types from a Parquet footer are Arrow types, not comparable with pandas dtypes.
    new_types = {name: str(dtype) for name, dtype in new.dtypes.items()}
    return ColumnDiff(
        added=[(n, t) for n, t in new_types.items() if n not in old_types],
        removed=[(n, t) for n, t in old_types.items() if n not in new_types],
    )


def _add_column_changes(text: PreviewText, columns: ColumnDiff, types: bool) -> None:
    if columns.empty:
        text.add("  Columns: unchanged" + ("" if types else " (names)"))
        return
    if columns.added:
        listed = ", ".join(f"{name} ({dtype})" for name, dtype in columns.added)
        text.add(f"  Columns added ({len(columns.added):,}): {listed}")
    if columns.removed:
        listed = ", ".join(f"{name} ({dtype})" for name, dtype in columns.removed)
        text.add(f"  Columns removed ({len(columns.removed):,}): {listed}")
    if columns.retyped:
        listed = ", ".join(f"{name} {old} -> {new}" for name, old, new in columns.retyped)
        text.add(f"  Columns retyped ({len(columns.retyped):,}): {listed}")


def _add_row_changes(text: PreviewText, rows: RowDiff, key: Sequence[Hashable]) -> None:
    key_label = ", ".join(map(str, key))
    text.add(
        f"  Rows by key ({key_label}): {rows.added:,} added, {rows.removed:,} removed, "
        f"{rows.changed:,} changed, {rows.unchanged:,} unchanged"
    )
    if rows.example_added:
        text.add(f"    added: {_examples(rows.example_added, rows.added)}")
    if rows.example_removed:
        text.add(f"    removed: {_examples(rows.example_removed, rows.removed)}")
    if rows.example_changed:
        text.add("    changed:")
        for value, changed_columns in rows.example_changed:
            listed = ", ".join(map(str, changed_columns)) or "(values differ only in type)"
            text.add(f"      {_key_text(value)}: {listed}", "changed rows")
        text.left_out(rows.changed - len(rows.example_changed), "changed rows")
    for which, count, examples in (
        ("existing file", rows.duplicate_old, rows.example_duplicate_old),
        ("new table", rows.duplicate_new, rows.example_duplicate_new),
    ):
        if count:
            text.add(
                f"  Duplicate keys in the {which}: {plural(count, 'key')} "
                f"{'appears' if count == 1 else 'appear'} more than once "
                f"({_examples(examples, count)}); only the first row of each was compared."
            )


def _examples(values: list[Any], total: int) -> str:
    shown = ", ".join(_key_text(v) for v in values)
    more = total - len(values)
    return f"{shown}, … {more:,} more" if more > 0 else shown


def _key_text(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
