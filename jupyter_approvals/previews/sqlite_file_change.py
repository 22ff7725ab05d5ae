"""The preview of a SQLite database file that changed, from its bytes before and after: the
tables added and removed, then per table its rows before and after, added, removed and
changed, and the changed rows of the first tables with each changed cell's old and new value.

Rows are matched on their ``rowid`` (a table without one, by position). Each version is opened
read-only from a private copy of its bytes, with ``trusted_schema`` off, and only its tables
are read (never a view or a trigger): the database is the sandboxed code's, not the person's.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
from collections.abc import Hashable, Iterator
from typing import Any

from .structured import StructuredPreview
from .table_diff import EXAMPLES, diff_rows
from .table_head import STRUCTURED_ROWS
from .table_structured import ColumnTypes, StructuredComparison
from .text import Deadline

#: The first bytes of every SQLite 3 database file.
SQLITE_HEADER = b"SQLite format 3\x00"
#: File name endings read as SQLite databases (when their bytes say so too).
SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db", ".db3")
#: Tables whose changed rows are shown (the others are counted).
TABLES_SHOWN = 3
#: The key column when rows are matched on ``rowid``.
ROW_ID = "rowid"


def is_sqlite(path: str, content: bytes | None) -> bool:
    """Whether ``path`` names a database by its ending and ``content`` is one."""
    return path.lower().endswith(SQLITE_SUFFIXES) and (content or b"").startswith(SQLITE_HEADER)


def sqlite_change(
    path: str, old: bytes, new: bytes, deadline: Deadline | None = None
) -> StructuredPreview | None:
    """The structured preview of database ``path`` changing from ``old`` to ``new``; None
    when pandas is missing or either version cannot be read (shown another way then)."""
    try:
        import pandas as pd
    except ImportError:
        return None
    deadline = deadline or Deadline()
    try:
        with _opened(old) as before, _opened(new) as after:
            return _compare(pd, path, before, after, deadline)
    except (sqlite3.Error, ValueError, OSError):
        return None


@contextlib.contextmanager
def _opened(content: bytes) -> Iterator[sqlite3.Connection]:
    with tempfile.TemporaryDirectory(prefix="jpa-sqlite-") as folder:
        copy = os.path.join(folder, "db")
        with open(copy, "wb") as out:
            out.write(content)
        connection = sqlite3.connect(f"file:{copy}?mode=ro&immutable=1", uri=True)
        try:
            connection.execute("PRAGMA trusted_schema = OFF")
            yield connection
        finally:
            connection.close()


def _tables(connection: sqlite3.Connection) -> dict[str, bool]:
    """Each table's name, and whether it has a rowid."""
    found = {}
    for name, sql in connection.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    ):
        found[str(name)] = "WITHOUT ROWID" not in str(sql or "").upper()
    return found


def _frame(pd: Any, connection: sqlite3.Connection, table: str, with_rowid: bool) -> Any:
    quoted = '"' + table.replace('"', '""') + '"'
    if with_rowid:
        frame = pd.read_sql_query(f"SELECT rowid AS {ROW_ID}, * FROM {quoted}", connection)
        if list(frame.columns).count(ROW_ID) == 1:
            return frame
    frame = pd.read_sql_query(f"SELECT * FROM {quoted}", connection)
    frame.insert(0, ROW_ID, range(1, len(frame) + 1))  # by position
    return frame


def _compare(
    pd: Any,
    path: str,
    before: sqlite3.Connection,
    after: sqlite3.Connection,
    deadline: Deadline,
) -> StructuredPreview:
    old_tables, new_tables = _tables(before), _tables(after)
    structured = StructuredPreview()
    added = sorted(set(new_tables) - set(old_tables))
    removed = sorted(set(old_tables) - set(new_tables))
    structured.count("tables to add", len(added), "added")
    structured.count("tables to remove", len(removed), "removed")
    structured.facts([("path:file", path), ("change", "Replace (compared as a SQLite database)")])
    summary = structured.table(
        [
            ("table", None, True),
            ("rows before", None, False),
            ("rows after", None, False),
            ("added", None, False),
            ("removed", None, False),
            ("changed", None, False),
        ],
        title="Tables",
    )
    changed_tables: list[tuple[str, Any, Any, Any]] = []
    for table in sorted(set(old_tables) | set(new_tables)):
        if table in added or table in removed:
            frame = _frame(pd, after if table in added else before, table, True)
            rows = ["", str(len(frame))] if table in added else [str(len(frame)), ""]
            kind = "added" if table in added else "removed"
            if summary is not None:
                summary.row(kind, [table, *rows, "", "", ""], "tables")
            continue
        with_rowid = old_tables[table] and new_tables[table]
        old, new = _frame(pd, before, table, with_rowid), _frame(pd, after, table, with_rowid)
        key: list[Hashable] = [ROW_ID]
        diff = diff_rows(pd, old, new, key, max(EXAMPLES, STRUCTURED_ROWS))
        touched = diff.added or diff.removed or diff.changed
        if summary is not None:
            counts = [str(len(old)), str(len(new)), str(diff.added), str(diff.removed)]
            summary.row(
                "changed" if touched else "same", [table, *counts, str(diff.changed)], "tables"
            )
        if touched:
            changed_tables.append((table, old, new, diff))
    for table, old, new, diff in changed_tables[:TABLES_SHOWN]:
        if deadline.passed():
            structured.note("The changed rows are not shown: the preview's time budget was spent.")
            break
        shown = StructuredComparison(structured)
        structured.facts([("table", table)])
        types = {name: str(dtype) for name, dtype in new.dtypes.items()}
        old_types = {name: str(dtype) for name, dtype in old.dtypes.items()}
        shown.rows(diff, old, new, [ROW_ID], ColumnTypes(types, old_types, set()))
    if len(changed_tables) > TABLES_SHOWN:
        structured.note(
            f"The rows of {len(changed_tables) - TABLES_SHOWN} more changed tables are counted "
            "in the table above, not shown."
        )
    return structured
