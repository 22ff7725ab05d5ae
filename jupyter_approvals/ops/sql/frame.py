"""Protected ``to_sql`` (action ``table.to_sql``): write a DataFrame to a SQL table.

The preview shows the frame (schema, row count, first rows) and the table as it is now: for
``if_exists="replace"`` its columns, row count and first rows, all of which would be
replaced; for ``"append"`` the row count before and after. ``"fail"`` with an existing table
is refused before anything is asked. The fingerprint binds the frame and the table's current
content (row count and a digest of all its rows, or "absent"): a table changed between the
preview and the run refuses the run. On SQLite the run reads the table once more inside its
own transaction, under the write lock, and writes only if it is still as approved. Reading
the whole table costs about one full scan (two for a run on SQLite).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...core.errors import (
    ApprovalFingerprintMismatch,
    ApprovalInvalidArgument,
)
from ...core.lease import require_lease
from ...kernel.gate import protected
from ...previews.render_text import preview_of
from ...previews.structured import Preview, StructuredPreview
from ...previews.text import plural
from ..common.extras import require
from ..common.refusal import invalid_argument
from ..tables.preview import cell_text
from .database import (
    Database,
    Rows,
    database_of,
    quoted_table,
    read_rows,
    run_transaction,
)

if TYPE_CHECKING:
    import pandas as pd
    from sqlalchemy.engine import Connection, Engine

IF_EXISTS = ("fail", "replace", "append")

#: Columns of the frame a preview lists and shows in its first rows.
PREVIEW_COLUMNS = 20


def _prepare(df: Any, name: Any, database: Any, if_exists: Any, index: Any) -> dict[str, Any]:
    sa = require("sqlalchemy", "write a DataFrame to SQL")
    pd = require("pandas", "write a DataFrame to SQL", extra="sql")
    if not isinstance(df, pd.DataFrame):
        raise _invalid(f"df must be a pandas DataFrame, not {type(df).__name__}", "df")
    if not isinstance(name, str) or not name.strip() or "\x00" in name:
        raise _invalid("name must be a non-empty table name (str)", "name")
    if if_exists not in IF_EXISTS:
        raise _invalid(
            f"if_exists must be one of {', '.join(IF_EXISTS)}, not {if_exists!r}", "if_exists"
        )
    if not isinstance(index, bool):
        raise _invalid(f"index must be True or False, not {index!r}", "index")
    target = database_of(database)
    if if_exists == "fail":
        with target.engine.connect() as connection:
            exists = sa.inspect(connection).has_table(name)
        if exists:
            raise _invalid(
                f"table {name!r} already exists in {target.url} and if_exists='fail'; pass "
                "if_exists='replace' or 'append' to change it",
                "if_exists",
            )
    return {"df": df, "name": name, "database": target, "if_exists": if_exists, "index": index}


def _invalid(message: str, argument: str) -> ApprovalInvalidArgument:
    return invalid_argument(message, argument=argument)


class _Table:
    """A table as it is now: column names and types, and all its rows read once."""

    def __init__(self, columns: list[tuple[str, str]], rows: Rows) -> None:
        self.columns = columns
        self.rows = rows


def _table(database: Database, name: str) -> _Table | None:
    """The table ``name`` now, or None if absent (read once per call)."""
    key = ("table", name)
    if key not in database._memo:
        with database.engine.connect() as connection:
            database._memo[key] = _table_on(connection, name)
    found: _Table | None = database._memo[key]
    return found


def _table_on(connection: Connection, name: str) -> _Table | None:
    sa = require("sqlalchemy", "write a DataFrame to SQL")
    inspector = sa.inspect(connection)
    if not inspector.has_table(name):
        return None
    columns = [(str(c["name"]), str(c["type"])) for c in inspector.get_columns(name)]
    result = connection.execute(sa.text(f"SELECT * FROM {quoted_table(connection, name)}"))
    return _Table(columns, read_rows(result))


def _state(table: _Table | None) -> dict[str, Any]:
    if table is None:
        return {"table": "absent"}
    return {"table": {"columns": table.columns, **table.rows.state()}}


def _subject(
    df: pd.DataFrame, name: str, database: Database, if_exists: str, index: bool
) -> dict[str, Any]:
    return _state(_table(database, name))


def _check_unchanged(connection: Connection, database: Database, name: str) -> None:
    """Inside the run's transaction (write lock held): is the table still as approved?"""
    key = ("table", name)
    approved = _state(database._memo[key]) if key in database._memo else None
    found = _state(_table_on(connection, name))
    if found != approved:
        raise ApprovalFingerprintMismatch(
            f"Table {name!r} is no longer what the approval saw (another writer changed it "
            "between the approval and the run). The run was rolled back: nothing changed. "
            "Call again to see a new preview and ask again.",
            action="table.to_sql",
            approved=approved,
            found=found,
        )


def _summary(df: pd.DataFrame, name: str, database: Database, if_exists: str, index: bool) -> str:
    return f"Write {plural(len(df), 'row')} to table {name!r} ({if_exists}) in {database.url}"


def _preview(
    df: pd.DataFrame, name: str, database: Database, if_exists: str, index: bool
) -> Preview:
    table = _table(database, name)
    shown = StructuredPreview()
    _add_counts(shown, df, table, if_exists)
    shown.facts(
        [
            ("table", name),
            ("database", database.url),
            ("dialect", database.dialect),
            ("if_exists", repr(if_exists)),
            ("index", str(index)),
            ("outcome", _verdict(df, name, table, if_exists)),
        ],
        title="Target",
    )
    _add_frame_rows(shown, df)
    if table is not None:
        _add_table_rows(shown, name, table, if_exists)
        if if_exists == "append":
            known = {column for column, _ in table.columns}
            unknown = [
                str(c)
                for c in [*df.columns, *([df.index.name] if index else [])]
                if str(c) not in known
            ]
            if unknown:
                shown.note(f"Columns not in the table (the write would fail): {', '.join(unknown)}")
    shown.note(
        "The approval binds the frame and the table's current content (or its absence): a "
        "change of either before the run refuses it."
    )
    return preview_of(shown)


def _add_counts(
    shown: StructuredPreview, df: pd.DataFrame, table: _Table | None, if_exists: str
) -> None:
    """The headline: rows the write adds, and those it drops or the table holds before."""
    shown.count("rows to add", len(df), "added")
    if table is not None and if_exists == "replace":
        shown.count("rows to remove", table.rows.count, "removed")
    elif table is not None:
        shown.count("rows now", table.rows.count)
        shown.count("rows after", table.rows.count + len(df))
    shown.count("columns of the frame", len(df.columns))


def _add_frame_rows(shown: StructuredPreview, df: pd.DataFrame) -> None:
    """The frame's first rows, up to PREVIEW_COLUMNS columns, each column with its dtype."""
    head = df.iloc[:5, :PREVIEW_COLUMNS]
    columns = [(column, str(dtype)) for column, dtype in head.dtypes.items()]
    title = f"First rows of the frame ({len(head)} of {len(df):,})"
    block = shown.table([(str(column), kind, False) for column, kind in columns], title=title)
    shown.left_out(len(df.columns) - len(columns), "columns of the frame")
    if block is None:
        return
    values = [head[column].tolist() for column, _ in columns]
    for at in range(len(head)):
        if shown.full:
            shown.left_out(len(head) - at, "rows of the frame")
            return
        block.row("added", [cell_text(value[at]) for value in values], "rows of the frame")


def _add_table_rows(shown: StructuredPreview, name: str, table: _Table, if_exists: str) -> None:
    """The table's first rows as they are now (each value as its ``repr``)."""
    rows = table.rows
    fate = "dropped with the table" if if_exists == "replace" else "kept"
    kinds = dict(table.columns)
    block = shown.table(
        [(column, kinds.get(column), False) for column in rows.columns],
        title=f"Table {name!r} now: {plural(rows.count, 'row')}, {fate} (first {len(rows.first)})",
    )
    change = "removed" if if_exists == "replace" else "same"
    for at, row in enumerate(rows.first):
        if block is None or shown.full:
            shown.left_out(len(rows.first) - at, "rows of the table")
            return
        block.row(change, [repr(value) for value in row], "rows of the table")
    shown.left_out(rows.count - len(rows.first), "rows of the table")


def _verdict(df: pd.DataFrame, name: str, table: _Table | None, if_exists: str) -> str:
    rows = plural(len(df), "row")
    if table is None:
        return f"Would CREATE table {name!r} with {rows}."
    if if_exists == "replace":
        return (
            f"Would REPLACE table {name!r} ({plural(table.rows.count, 'row')} now) with {rows}: "
            "the table is dropped and created again from the frame."
        )
    after = table.rows.count + len(df)
    return f"Would APPEND {rows} to table {name!r}: {table.rows.count:,} -> {after:,} rows."


@protected(
    "table.to_sql",
    summary=_summary,
    preview=_preview,
    subject=_subject,
    target=lambda df, name, database, if_exists, index: [database, name],
    prepare=_prepare,
)
def to_sql(
    df: pd.DataFrame,
    name: str,
    database: str | Engine | Database,
    *,
    if_exists: str = "fail",
    index: bool = False,
) -> int:
    """Write ``df`` to table ``name`` with pandas ``DataFrame.to_sql`` in one transaction.

    ``if_exists`` is "fail" (the table must not exist), "replace" or "append". Returns the
    number of rows written.
    """
    require_lease("table.to_sql")
    target = database if isinstance(database, Database) else database_of(database)
    with run_transaction(target) as connection:
        if target.is_sqlite:
            # Under the write lock: the table is still what the approval saw.
            _check_unchanged(connection, target, name)
        df.to_sql(name, connection, if_exists=if_exists, index=index)
    return len(df)
