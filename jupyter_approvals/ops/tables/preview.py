"""The part of a table.write card that compares the new table with the file it replaces.

Columns added, removed or retyped; rows before and after; with a key, rows added, removed and
changed, with example keys and the changed columns. Every comparison is bounded by size and
by the preview's deadline, and says so when it is skipped. A CSV file is compared as text with
the text the new table will be written as, so type guessing never invents changes.

The same pass fills the structured preview, when one is asked for: the counts first (rows
added, removed, changed; rows before and after; columns added, removed, retyped), then the
column changes as a table, then the changed rows with the old and new value of each changed
cell, then the added and removed rows with their values (at most :data:`STRUCTURED_ROWS` of
each, the rest counted). Values are shown as their own text (``5`` for an integer); a key of
text is quoted (``'5'``), and each column names its dtype. A CSV file holds text only: its
cells are shown as the file's text, under the dtype the new table has.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import Any

from ...previews.structured import StructuredPreview
from ...previews.table_diff import EXAMPLES, ColumnDiff, RowDiff, diff_columns, diff_rows
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
#: Rows of each kind (changed, added, removed) and column changes a structured preview shows.
STRUCTURED_ROWS = 20
#: Columns of a structured row table besides the key (the rest are counted).
TABLE_COLUMNS = HEAD_COLUMNS


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
    structured: StructuredPreview | None = None,
) -> None:
    """Compare the new table with the file it replaces, as far as size and time allow."""
    existing = read_existing(pd, target, fmt, index, state.size or 0, state.data)
    text.add(f"Changes against the existing file ({size_text(existing.size)}):")
    shown = _Shown(structured)
    if existing.problem is not None:
        text.add(f"  Note: {existing.problem}.")
        shown.note(existing.problem)
    if existing.frame is None:
        columns = None
        if existing.dtypes is not None:
            columns = _names_only(existing.dtypes, new)
            _add_column_changes(text, columns, types=False)
        if existing.rows is not None:
            text.add(f"  Rows: {existing.rows:,} -> {len(new):,}")
        shown.changes(None, existing.rows, len(new), columns)
        return
    old = existing.frame
    columns = diff_columns(old, new)
    _add_column_changes(text, columns, types=True)
    text.add(f"  Rows: {len(old):,} -> {len(new):,}")
    if key is None or _row_diff_skipped(text, old, new, key, deadline, shown):
        shown.changes(None, len(old), len(new), columns)
        return
    rows = diff_rows(pd, old, new, key, _examples_wanted(structured))
    _add_row_changes(text, rows, key, shown)
    shown.changes(rows, len(old), len(new), columns)
    if shown.on(deadline):
        types = {name: str(dtype) for name, dtype in new.dtypes.items()}
        old_types = {name: str(dtype) for name, dtype in old.dtypes.items()}
        shown.rows(rows, old, new, key, _Types(types, old_types, set(key)))


def add_csv_changes(
    text: PreviewText,
    pd: Any,
    df: Any,
    target: Path,
    state: FileState,
    key: list[Hashable] | None,
    index: bool,
    deadline: Deadline,
    structured: StructuredPreview | None = None,
) -> None:
    """Compare with a CSV file as text: the file's cells against what the new file will hold."""
    existing = read_existing(pd, target, "csv", index, state.size or 0, state.data)
    text.add(f"Changes against the existing file ({size_text(existing.size)}):")
    shown = _Shown(structured)
    if existing.problem is not None:
        text.add(f"  Note: {existing.problem}.")
        shown.note(existing.problem)
    if existing.frame is None:
        shown.changes(None, None, len(df), None)
        return
    old = existing.frame
    try:
        names = csv_names(pd, df, index)
    except Exception as exc:  # a frame CSV cannot render only changes what the preview says
        text.add(f"  Note: the new table's CSV header could not be read back: {exc}.")
        shown.note(f"the new table's CSV header could not be read back: {exc}")
        shown.changes(None, len(old), len(df), None)
        return
    # Index columns come first in the file, then df's columns in order.
    offset = df.index.nlevels if index else 0
    if len(names) != offset + len(df.columns):
        text.add("  Note: the new table's CSV header does not map to its columns; not compared.")
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
    _add_column_changes(text, columns, types=False)
    text.add(f"  Rows: {len(old):,} -> {len(df):,}")
    if key is None:
        shown.changes(None, len(old), len(df), columns)
        return
    key_names = [names[offset + df.columns.get_loc(name)] for name in key]
    if _row_diff_skipped(text, old, df, key_names, deadline, shown):
        shown.changes(None, len(old), len(df), columns)
        return
    if df.size > CSV_DIFF_LIMIT_CELLS:
        # Rendering the new table as CSV text and reading it back costs about a second per
        # million cells: past the limit the card would take too long to appear.
        skipped = (
            f"Row changes by key were not computed: the new table has {df.size:,} cells, more "
            f"than the {CSV_DIFF_LIMIT_CELLS:,} a CSV preview compares."
        )
        text.note(skipped)
        shown.note(skipped)
        shown.changes(None, len(old), len(df), columns)
        return
    new = csv_frame(pd, df, index)
    rows = diff_rows(pd, old, new, key_names, _examples_wanted(structured))
    _add_row_changes(text, rows, key, shown)
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
        shown.rows(rows, old, new, key_names, _Types(new_types, {}, quoted))


def _row_diff_skipped(
    text: PreviewText,
    old: Any,
    new: Any,
    key: list[Hashable],
    deadline: Deadline,
    shown: _Shown,
) -> bool:
    """Say why rows cannot be compared by key, if they cannot; True then."""
    missing = [name for name in key if name not in old.columns]
    reason = None
    if missing:
        line = (
            f"Rows by key: the existing file has no column {', '.join(map(repr, missing))}; "
            "rows cannot be matched by key."
        )
        text.add("  " + line)
        shown.note(line)
        return True
    if deadline.passed():
        reason = "Row changes by key were not computed: reading the existing file took too long."
    elif new.memory_usage(index=False).sum() > DIFF_LIMIT_BYTES:
        reason = (
            "Row changes by key were not computed: the new table is too large to compare "
            "in the preview."
        )
    if reason is None:
        return False
    text.note(reason)
    shown.note(reason)
    return True


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


def _add_row_changes(
    text: PreviewText, rows: RowDiff, key: Sequence[Hashable], shown: _Shown
) -> None:
    # The text names EXAMPLES keys of each kind, however many the structured preview shows.
    key_label = ", ".join(map(str, key))
    text.add(
        f"  Rows by key ({key_label}): {rows.added:,} added, {rows.removed:,} removed, "
        f"{rows.changed:,} changed, {rows.unchanged:,} unchanged"
    )
    if rows.example_added:
        text.add(f"    added: {_examples(rows.example_added[:EXAMPLES], rows.added)}")
    if rows.example_removed:
        text.add(f"    removed: {_examples(rows.example_removed[:EXAMPLES], rows.removed)}")
    if rows.example_changed:
        text.add("    changed:")
        named = rows.example_changed[:EXAMPLES]
        for value, changed_columns in named:
            listed = ", ".join(map(str, changed_columns)) or "(values differ only in type)"
            text.add(f"      {_key_text(value)}: {listed}", "changed rows")
        text.left_out(rows.changed - len(named), "changed rows")
    for which, count, examples in (
        ("existing file", rows.duplicate_old, rows.example_duplicate_old[:EXAMPLES]),
        ("new table", rows.duplicate_new, rows.example_duplicate_new[:EXAMPLES]),
    ):
        if count:
            line = (
                f"Duplicate keys in the {which}: {plural(count, 'key')} "
                f"{'appears' if count == 1 else 'appear'} more than once "
                f"({_examples(examples, count)}); only the first row of each was compared."
            )
            text.add("  " + line)
            shown.note(line)


def _examples(values: list[Any], total: int) -> str:
    shown = ", ".join(_key_text(v) for v in values)
    more = total - len(values)
    return f"{shown}, … {more:,} more" if more > 0 else shown


def _key_text(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _examples_wanted(structured: StructuredPreview | None) -> int:
    """Example rows to find: what the structured preview shows, else what the text names."""
    return EXAMPLES if structured is None else max(EXAMPLES, STRUCTURED_ROWS)


def add_head(structured: StructuredPreview, new: Any, key: Sequence[Hashable] | None) -> None:
    """The first rows of the new table, each column with its dtype (keys marked)."""
    keys = set(key or ())
    head = new.iloc[:HEAD_ROWS, :HEAD_COLUMNS]
    rows, width = new.shape
    title = (
        f"First {plural(len(head), 'row')} of the new table"
        if rows
        else "The new table has no rows; its columns"
    )
    columns = [(name, str(dtype)) for name, dtype in head.dtypes.items()]
    values = {name: head[name].tolist() for name, _ in columns}
    table = structured.table([(str(n), t, n in keys) for n, t in columns], title=title)
    structured.left_out(width - HEAD_COLUMNS, "columns of the first rows")
    if table is None:
        structured.left_out(len(head), "first rows")
        return
    for at in range(len(head)):
        if structured.full:
            structured.left_out(len(head) - at, "first rows")
            return
        table.row("same", [cell_text(values[n][at], n in keys) for n, _ in columns], "first rows")


def cell_text(value: Any, quote: bool = False) -> str:
    """A value as its own text: ``5``, ``1.5``, ``None``; text quoted (``'5'``) if ``quote``."""
    if isinstance(value, str):
        return repr(value) if quote else value
    if isinstance(value, bytes | bytearray):
        return repr(value)
    return str(value)


class _Types:
    """The dtypes a structured preview names per column, and the key columns whose text is
    quoted (every key of a typed table; in a CSV file, keys the new table holds as text)."""

    def __init__(self, new: dict[Any, str], old: dict[Any, str], quoted: set[Any]) -> None:
        self.new = new
        self.old = old
        self.quoted = quoted

    def of_new(self, name: Any) -> str | None:
        return self.new.get(name)

    def of_old(self, name: Any) -> str | None:
        return self.old.get(name, self.new.get(name))

    def of_changed(self, name: Any) -> str | None:
        old, new = self.old.get(name), self.new.get(name)
        return f"{old} -> {new}" if old is not None and old != new else new


class _Shown:
    """The structured side of one table comparison; does nothing without a structured preview."""

    def __init__(self, structured: StructuredPreview | None) -> None:
        self.structured = structured

    def note(self, text: str) -> None:
        if self.structured is not None:
            text = text[:1].upper() + text[1:]
            self.structured.note(text if text.endswith(".") else text + ".")

    def on(self, deadline: Deadline) -> bool:
        """True if rows' values are to be shown: a structured preview, and time left."""
        if self.structured is None:
            return False
        if deadline.passed():
            self.structured.note(
                "The values of changed, added and removed rows are not shown: the preview's "
                "time budget was spent."
            )
            return False
        return True

    def changes(
        self, rows: RowDiff | None, before: int | None, after: int, columns: ColumnDiff | None
    ) -> None:
        """The headline counts, then the column changes as a table."""
        shown = self.structured
        if shown is None:
            return
        if rows is not None:
            shown.count("rows added", rows.added, "added")
            shown.count("rows removed", rows.removed, "removed")
            shown.count("rows changed", rows.changed, "changed")
            shown.count("rows unchanged", rows.unchanged)
        if before is not None:
            shown.count("rows before", before)
        shown.count("rows after", after)
        if columns is None or columns.empty:
            return
        for label, count, tone in (
            ("columns added", len(columns.added), "added"),
            ("columns removed", len(columns.removed), "removed"),
            ("columns retyped", len(columns.retyped), "changed"),
        ):
            if count:
                shown.count(label, count, tone)
        changes = [
            *(("added", [str(n), "", t]) for n, t in columns.added),
            *(("removed", [str(n), t, ""]) for n, t in columns.removed),
            *(("changed", [str(n), old, new]) for n, old, new in columns.retyped),
        ]
        kept = changes[:STRUCTURED_ROWS]
        table = shown.table(
            [("column", None, False), ("before", None, False), ("after", None, False)],
            title="Column changes (dtype before and after)",
        )
        _fill(shown, table, kept, "column changes")
        shown.left_out(len(changes) - len(kept), "column changes")

    def rows(
        self, rows: RowDiff, old: Any, new: Any, key: Sequence[Hashable], types: _Types
    ) -> None:
        """Changed rows with the old and new value of each changed cell; added, removed rows."""
        shown = self.structured
        if shown is None:
            return
        key = list(key)
        keys = [(str(k), types.of_new(k), True) for k in key]
        if rows.changed_rows:
            differing = {c for _, columns in rows.example_changed for c in columns}
            union = [c for c in rows.compared_columns if c in differing]
            kept = union[:TABLE_COLUMNS]
            shown.left_out(len(union) - len(kept), "columns of changed rows")
            olds = _values(old, [at for at, _ in rows.changed_rows], kept)
            news = _values(new, [at for _, at in rows.changed_rows], [*key, *kept])
            table = shown.table(
                [*keys, *((str(c), types.of_changed(c), False) for c in kept)],
                title=f"Changed rows (old -> new; {len(rows.changed_rows):,} of {rows.changed:,})",
            )
            cells = []
            for at, (_, columns) in enumerate(rows.example_changed):
                line: list[str | tuple[str, str]] = [
                    cell_text(news[k][at], k in types.quoted) for k in key
                ]
                for c in kept:
                    now = cell_text(news[c][at])
                    line.append((cell_text(olds[c][at]), now) if c in columns else now)
                cells.append(("changed", line))
            _fill(shown, table, cells, "changed rows")
        shown.left_out(rows.changed - len(rows.changed_rows), "changed rows")
        self._plain_rows("added", rows.added, rows.added_rows, new, key, types, types.of_new)
        self._plain_rows("removed", rows.removed, rows.removed_rows, old, key, types, types.of_old)

    def _plain_rows(
        self,
        change: str,
        count: int,
        at: list[int],
        frame: Any,
        key: list[Hashable],
        types: _Types,
        type_of: Callable[[Any], str | None],
    ) -> None:
        """Added or removed rows: the key, then the other columns, values as they are."""
        shown = self.structured
        if shown is None:
            return
        if at:
            others = [c for c in frame.columns if c not in key]
            kept = others[:TABLE_COLUMNS]
            shown.left_out(len(others) - len(kept), f"columns of {change} rows")
            values = _values(frame, at, [*key, *kept])
            table = shown.table(
                [(str(k), type_of(k), True) for k in key]
                + [(str(c), type_of(c), False) for c in kept],
                title=f"{change.capitalize()} rows ({len(at):,} of {count:,})",
            )
            lines = [
                (
                    change,
                    [cell_text(values[k][i], k in types.quoted) for k in key]
                    + [cell_text(values[c][i]) for c in kept],
                )
                for i in range(len(at))
            ]
            _fill(shown, table, lines, f"{change} rows")
        shown.left_out(count - len(at), f"{change} rows")


def _values(frame: Any, rows: list[int], columns: list[Hashable]) -> dict[Hashable, list[Any]]:
    """The values of ``columns`` in the rows at positions ``rows``, as plain Python values."""
    part = frame.iloc[rows]
    return {column: part[column].tolist() for column in columns}


def _fill(
    shown: StructuredPreview,
    table: Any,
    rows: Sequence[tuple[str, Sequence[str | tuple[str, str]]]],
    kind: str,
) -> None:
    """Rows into ``table`` while the budget lasts; the rest counted as ``kind``."""
    for at, (change, cells) in enumerate(rows):
        if table is None or shown.full:
            shown.left_out(len(rows) - at, kind)
            return
        table.row(change, cells, kind)
