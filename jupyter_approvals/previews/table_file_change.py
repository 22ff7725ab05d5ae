"""The preview of a table file (CSV, Parquet) that changed, from its bytes before and after:
the counts first, the column changes, then the changed rows with each changed cell's old and
new value, and the added and removed rows (the engine of a table.write card,
:mod:`.table_structured`).

Rows are matched on the first column when it identifies them in both versions (unique, no
gaps), else by their position in the file. A CSV file is compared as the text it holds (every
cell a string, nothing read as missing), as a table.write card compares one.
"""

from __future__ import annotations

import io
from collections.abc import Hashable
from pathlib import PurePosixPath
from typing import Any

from .structured import StructuredPreview
from .table_diff import EXAMPLES, diff_columns, diff_rows
from .table_head import STRUCTURED_ROWS
from .table_structured import ColumnTypes, StructuredComparison
from .text import Deadline

#: How both sides of a CSV comparison are read: every cell as its text, an empty cell as "".
CSV_READ: dict[str, Any] = {"dtype": str, "keep_default_na": False}
#: File name endings read as tables, and their format.
TABLE_SUFFIXES = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}
#: The column that numbers rows when no column of the file identifies them.
POSITION = "row #"


def table_format(path: str) -> str | None:
    """``"csv"`` or ``"parquet"`` for a path with a table's ending, else None."""
    return TABLE_SUFFIXES.get(PurePosixPath(path).suffix.lower())


def table_change(
    path: str, old: bytes, new: bytes, fmt: str, deadline: Deadline | None = None
) -> StructuredPreview | None:
    """The structured preview of table file ``path`` changing from ``old`` to ``new``; None
    when pandas is not installed or either version cannot be read as a table (the caller
    shows a line or byte diff instead)."""
    try:
        import pandas as pd
    except ImportError:
        return None
    try:
        before, after = _read(pd, old, fmt), _read(pd, new, fmt)
    except Exception:  # any parser failure only means it is shown another way
        return None
    structured = StructuredPreview()
    structured.facts([("path:file", path), ("change", "Replace (compared as a table)")])
    shown = StructuredComparison(structured)
    columns = diff_columns(before, after)
    key = _identifying_column(before, after)
    if key is None:
        if POSITION in before.columns or POSITION in after.columns:
            return None
        before, after = _numbered(before), _numbered(after)
        key = [POSITION]
        shown.note("No column identifies the rows in both versions; rows are matched by position")
    rows = diff_rows(pd, before, after, key, max(EXAMPLES, STRUCTURED_ROWS))
    shown.changes(rows, len(before), len(after), columns)
    if shown.on(deadline or Deadline()):
        types = {name: str(dtype) for name, dtype in after.dtypes.items()}
        old_types = {name: str(dtype) for name, dtype in before.dtypes.items()}
        quoted = set(key) if fmt == "parquet" else set()
        shown.rows(rows, before, after, key, ColumnTypes(types, old_types, quoted))
    return structured


def _read(pd: Any, data: bytes, fmt: str) -> Any:
    if fmt == "csv":
        return pd.read_csv(io.BytesIO(data), **CSV_READ)
    return pd.read_parquet(io.BytesIO(data))


def _identifying_column(old: Any, new: Any) -> list[Hashable] | None:
    if not len(old.columns) or not len(new.columns) or old.columns[0] != new.columns[0]:
        return None
    first = old.columns[0]
    for frame in (old, new):
        column = frame[first]
        if column.isna().any() or not column.is_unique:
            return None
    return [first]


def _numbered(frame: Any) -> Any:
    numbered = frame.reset_index(drop=True)
    numbered.insert(0, POSITION, range(1, len(numbered) + 1))
    return numbered
