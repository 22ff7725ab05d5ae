"""The structured preview of a table comparison, which its text is rendered from.

The counts first (rows added, removed, changed; rows before and after; columns added,
removed, retyped), then the column changes as a table, then the changed rows with the old and
new value of each changed cell, then the added and removed rows with their values (at most
:data:`STRUCTURED_ROWS` of each, the rest counted), and the first rows of the new table.
Values are shown as their own text (``5`` for an integer); a key of text is quoted (``'5'``),
and each column names its dtype. A CSV file holds text only: its cells are shown as the
file's text, under the dtype the new table has. The comparison that feeds this is in
:mod:`..ops.tables.preview` (a table.write card) and :mod:`.table_file_change` (a changed
table file).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

from .structured import StructuredPreview
from .table_diff import ColumnDiff, RowDiff
from .table_head import HEAD_COLUMNS, HEAD_ROWS, STRUCTURED_ROWS
from .text import Deadline, plural

#: Columns of a structured row table besides the key (the rest are counted).
TABLE_COLUMNS = HEAD_COLUMNS


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


class ColumnTypes:
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


class StructuredComparison:
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
            shown.count("rows to add", rows.added, "added")
            shown.count("rows to remove", rows.removed, "removed")
            shown.count("rows to change", rows.changed, "changed")
            shown.count("rows unchanged", rows.unchanged)
        if before is not None:
            shown.count("rows now", before)
        shown.count("rows after", after)
        if columns is None:
            return
        if columns.empty:  # said, so that a reader knows the columns were compared
            shown.count("columns to change", 0)
            return
        for label, count, tone in (
            ("columns to add", len(columns.added), "added"),
            ("columns to remove", len(columns.removed), "removed"),
            ("columns to retype", len(columns.retyped), "changed"),
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
        self, rows: RowDiff, old: Any, new: Any, key: Sequence[Hashable], types: ColumnTypes
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
        types: ColumnTypes,
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
