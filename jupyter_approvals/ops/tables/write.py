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

from ...core.atomic import atomic_path
from ...core.errors import ApprovalInvalidArgument
from ...core.lease import require_lease
from ...kernel.gate import protected
from ...kernel.handoff import peek, recall, remember
from ...previews.render_text import preview_of
from ...previews.structured import Preview, StructuredPreview
from ...previews.table_head import HEAD_COLUMNS
from ...previews.table_structured import add_head
from ...previews.text import Deadline, plural, size_text
from ..common.files_state import FileState, read_state
from ..common.paths import path_text
from .formats import (
    FORMATS,
    LABELS,
    READ_LIMIT_BYTES,
    SUFFIXES,
    format_for,
    require_pandas,
    write_frame,
)
from .preview import add_changes, add_csv_changes

__all__ = ["write_table"]

#: Columns of a wide new table listed with their dtypes before the rest are counted.
SCHEMA_COLUMNS = 60


def _prepare(df: Any, path: Any, format: Any, key: Any, index: Any) -> dict[str, Any]:
    """Check the arguments; return them normalized (real path, format name, key list)."""
    # Read once, and resolved here, as the card must name the file a symlink leads to (even
    # a dangling one).
    target = Path(os.path.realpath(path_text(path, "path")))
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


def _preview(df: Any, path: str, format: str, key: Any, index: bool) -> Preview:
    """The card's structured preview, and its text rendered from it."""
    return preview_of(structured_preview(df, path, format, key, index))


def structured_preview(df: Any, path: str, format: str, key: Any, index: bool) -> StructuredPreview:
    """What changes against the existing file, the first rows of the new table, its columns
    and the target, as one structured preview.

    The counts first, then the column changes, the changed, added and removed rows with their
    values, the first rows of the new table, its columns (when it has more than the first
    rows show), and the target's facts.
    """
    deadline = Deadline()
    pd = require_pandas(format)
    shown = StructuredPreview()
    target = Path(path)
    state = _target_state(path, keep=False)
    exists = state.size is not None
    verb = "Replace" if exists else "Create"
    new = df.reset_index() if index else df
    rows, columns = new.shape
    if exists and format == "csv":
        add_csv_changes(shown, pd, df, target, state, key, index, deadline)
    elif exists:
        add_changes(shown, pd, new, target, state, format, key, index, deadline)
    else:
        shown.count("rows to write", rows, "added")
        shown.count("columns", columns)
    add_head(shown, new, key)
    if columns > HEAD_COLUMNS:
        listed = list(new.dtypes.items())[:SCHEMA_COLUMNS]
        shown.facts(
            ((str(name), str(dtype)) for name, dtype in listed),
            title=f"Columns of the new table ({columns:,})",
            kind="columns",
        )
        shown.left_out(columns - len(listed), "columns")
    facts = [
        ("path:file", path),
        ("action", f"{verb} ({LABELS[format]}{', with the index' if index else ''})"),
        ("new table", f"{plural(rows, 'row')} x {plural(columns, 'column')}"),
        ("existing file", size_text(state.size or 0) if exists else "none"),
    ]
    if key is not None:
        facts.append(("key", ", ".join(map(str, key))))
    shown.facts(facts, title="Target")
    return shown


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
