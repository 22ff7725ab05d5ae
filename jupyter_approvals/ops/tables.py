"""``write_table``: write a pandas DataFrame to a CSV or Parquet file, after a person approved it.

The card shows the new table (schema, size, first rows) and, when a file is replaced, what
changes in it: columns added, removed or retyped, and rows added, removed or changed — by key
when a key is given. The approval covers the DataFrame (every value, through the
fingerprint's pandas encoding) and the current content of the file, so a file changed after
the preview refuses the run. The path is resolved (symlinks followed) before anything is
shown, so the card names the file really written; if it resolves elsewhere at write time,
nothing is written. The file is replaced atomically and keeps its permission bits.
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

from ..core.errors import ApprovalInvalidArgument
from ..core.lease import require_lease
from ..kernel.gate import protected
from ._atomic import atomic_path
from ._handoff import peek, recall, remember
from ._preview import Deadline, PreviewText, plural, size_text
from .files_state import FileState, read_state
from .table_diff import ColumnDiff, RowDiff, diff_columns, diff_rows
from .table_formats import (
    FORMATS,
    LABELS,
    READ_LIMIT_BYTES,
    SUFFIXES,
    csv_frame,
    csv_names,
    format_for,
    read_existing,
    require_pandas,
    write_frame,
)

__all__ = ["write_table"]

#: Columns listed in the schema part of the preview before the rest are counted.
SCHEMA_COLUMNS = 60
#: Rows and columns of the new table shown as its first rows.
HEAD_ROWS = 5
HEAD_COLUMNS = 12
#: A new table larger than this (bytes in memory) is not diffed row by row in the preview.
DIFF_LIMIT_BYTES = 512 * 1024 * 1024


def _prepare(df: Any, path: Any, format: Any, key: Any, index: Any) -> dict[str, Any]:
    """Check the arguments; return them normalized (real path, format name, key list)."""
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
        raise ApprovalInvalidArgument(
            f"path must be a file path (str or os.PathLike), got {type(path).__name__}. "
            "Nothing was asked or written.",
            argument="path",
        )
    # Resolved here, as the card must name the file a symlink leads to (even a dangling one).
    target = Path(os.path.realpath(os.fspath(path)))
    if format is not None and not isinstance(format, str):
        raise ApprovalInvalidArgument(
            f"format must be one of {', '.join(FORMATS)} or None, got {type(format).__name__}. "
            "Nothing was asked or written.",
            argument="format",
        )
    fmt = format_for(target, format)
    if fmt is None:
        given = f"format {format!r}" if format is not None else f"suffix {target.suffix!r}"
        raise ApprovalInvalidArgument(
            f"Unknown table format ({given}) for {target}. Pass format='csv' or "
            f"format='parquet', or use a file name ending in {', '.join(SUFFIXES)}. "
            "Nothing was asked or written.",
            argument="format",
            path=str(target),
            allowed=list(FORMATS),
        )
    pd = require_pandas(fmt)
    if type(df) is not pd.DataFrame:
        raise ApprovalInvalidArgument(
            f"df must be a pandas DataFrame, got {type(df).__module__}.{type(df).__qualname__}. "
            "Nothing was asked or written.",
            argument="df",
        )
    if not df.columns.is_unique:
        repeated = sorted({str(c) for c in df.columns[df.columns.duplicated()]})
        raise ApprovalInvalidArgument(
            f"df has repeated column names ({', '.join(repeated[:5])}); a table file needs "
            "unique column names. Nothing was asked or written.",
            argument="df",
            columns=repeated[:20],
        )
    if fmt == "parquet" and not all(isinstance(c, str) for c in df.columns):
        raise ApprovalInvalidArgument(
            "Parquet column names must be strings; rename the columns (for example "
            "df.columns = df.columns.map(str)). Nothing was asked or written.",
            argument="df",
        )
    if type(index) is not bool:
        raise ApprovalInvalidArgument(
            f"index must be True or False, got {index!r:.60}. Nothing was asked or written.",
            argument="index",
        )
    if target.is_dir():
        raise ApprovalInvalidArgument(
            f"{target} is a directory; give the path of a file. Nothing was asked or written.",
            argument="path",
            path=str(target),
        )
    if not target.parent.is_dir():
        raise ApprovalInvalidArgument(
            f"The folder {target.parent} does not exist; create it first. "
            "Nothing was asked or written.",
            argument="path",
            path=str(target),
        )
    return {
        "df": df,
        "path": str(target),
        "format": fmt,
        "key": _key_columns(df, key),
        "index": index,
    }


def _key_columns(df: Any, key: Any) -> list[Hashable] | None:
    """The key as a list of existing, distinct column names (None: no key)."""
    if key is None:
        return None
    names = list(key) if isinstance(key, (list, tuple)) else [key]
    problem = None
    if not names:
        problem = "key must name at least one column"
    elif len(set(map(repr, names))) != len(names):
        problem = f"key names a column twice: {names!r:.200}"
    else:
        missing = [name for name in names if name not in df.columns]
        if missing:
            problem = (
                f"key column(s) {', '.join(map(repr, missing))} are not columns of df "
                f"(columns: {', '.join(map(repr, list(df.columns)[:20]))})"
            )
    if problem is not None:
        raise ApprovalInvalidArgument(
            f"{problem}. Nothing was asked or written.", argument="key", key=repr(key)[:200]
        )
    return names


def _read_target(path: str) -> FileState:
    return read_state(path, keep=READ_LIMIT_BYTES)


def _subject(df: Any, path: str, format: str, key: Any, index: bool) -> dict[str, Any]:
    # The frame is already part of the arguments; the file's content and mode are added. One
    # read gives both the digest approved here and the bytes the preview compares with.
    state: FileState = remember(("table.write", path), _read_target(path))
    return state.subject(path)


def _target_state(path: str, keep: bool = True) -> FileState:
    """The reading the subject of this call made (read anew only if there is none)."""
    key = ("table.write", path)
    kept = peek(key) if keep else recall(key)
    return kept if kept is not None else _read_target(path)


def _summary(df: Any, path: str, format: str, key: Any, index: bool) -> str:
    verb = "Replace" if _target_state(path).size is not None else "Create"
    rows, columns = df.shape
    return (
        f"{verb} {LABELS[format]} table {path} "
        f"({plural(rows, 'row')} x {plural(columns, 'column')})"
    )


def _preview(df: Any, path: str, format: str, key: Any, index: bool) -> str:
    """The card's text: the new table, then what changes against the existing file."""
    deadline = Deadline()
    pd = require_pandas(format)
    text = PreviewText()
    target = Path(path)
    state = _target_state(path, keep=False)
    exists = state.size is not None
    verb = "Replace" if exists else "Create"
    text.add(f"{verb} {path} ({LABELS[format]}{', with the index' if index else ''})")
    new = df.reset_index() if index else df
    rows, columns = new.shape
    text.add(f"New table: {plural(rows, 'row')} x {plural(columns, 'column')}")
    if key is not None:
        text.add(f"Key: {', '.join(map(str, key))}")
    text.add("Columns:")
    for name, dtype in list(new.dtypes.items())[:SCHEMA_COLUMNS]:
        text.add(f"  {name}: {dtype}", "columns")
    text.left_out(columns - SCHEMA_COLUMNS, "columns")
    if rows:
        text.add(f"First {plural(min(rows, HEAD_ROWS), 'row')}:")
        text.extend(_head_lines(pd, new), "first-row lines")
    if exists and format == "csv":
        _add_csv_changes(text, pd, df, target, state, key, index, deadline)
    elif exists:
        _add_changes(text, pd, new, target, state, format, key, index, deadline)
    return text.render()


def _head_lines(pd: Any, frame: Any) -> list[str]:
    head = frame.iloc[:HEAD_ROWS, :HEAD_COLUMNS]
    with pd.option_context("display.width", 10_000, "display.max_colwidth", 30):
        lines = head.to_string(index=False).splitlines()
    if frame.shape[1] > HEAD_COLUMNS:
        lines.append(f"  (first {HEAD_COLUMNS} of {frame.shape[1]:,} columns)")
    return ["  " + line for line in lines]


def _add_changes(
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


def _add_csv_changes(
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


@protected(
    "table.write",
    summary=_summary,
    preview=_preview,
    subject=_subject,
    target="path",
    prepare=_prepare,
)
def write_table(
    df: Any,
    path: str | os.PathLike[str],
    *,
    format: str | None = None,
    key: Hashable | Sequence[Hashable] | None = None,
    index: bool = False,
) -> str:
    """Write DataFrame ``df`` to ``path`` as CSV or Parquet once a person approved it.

    ``format`` is "csv" or "parquet" (default: from the suffix .csv, .parquet, .pq). ``key``
    (a column name or a list of them) makes the preview compare rows by key with the file
    being replaced. ``index`` writes the DataFrame's index as well. The file is replaced
    atomically and keeps its permission bits. Returns the absolute path written.
    """
    require_lease("table.write")
    recall(("table.write", str(path)))  # the subject's reading is not needed any more
    with atomic_path(path, expected=os.path.abspath(path)) as temp:
        write_frame(df, temp, str(format), index)
    return str(path)
