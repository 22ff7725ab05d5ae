"""A changed SQLite database shown as a table diff (a sandboxed kernel's change set)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from jupyter_approvals.previews.render_text import preview_of
from jupyter_approvals.previews.sqlite_file_change import is_sqlite, sqlite_change

pytest.importorskip("pandas")


def database(path: Path, *statements: str) -> bytes:
    connection = sqlite3.connect(path)
    for statement in statements:
        connection.execute(statement)
    connection.commit()
    connection.close()
    return path.read_bytes()


def test_tables_and_rows_changed_are_counted_and_cells_shown(tmp_path):
    # Given a database with two tables; then one row changed, one removed, a table added
    old = database(
        tmp_path / "old.db",
        "CREATE TABLE sales (region TEXT, total INTEGER)",
        "INSERT INTO sales VALUES ('north', 10), ('south', 20), ('east', 30)",
        "CREATE TABLE notes (text TEXT)",
        "INSERT INTO notes VALUES ('keep')",
    )
    new = database(
        tmp_path / "new.db",
        "CREATE TABLE sales (region TEXT, total INTEGER)",
        "INSERT INTO sales VALUES ('north', 10), ('south', 25), ('east', 30)",
        "DELETE FROM sales WHERE region = 'east'",
        "CREATE TABLE notes (text TEXT)",
        "INSERT INTO notes VALUES ('keep')",
        "CREATE TABLE audit (who TEXT)",
    )
    # When the change is previewed
    assert is_sqlite("shop.db", old)
    assert is_sqlite("shop.db", new)
    shown = sqlite_change("shop.db", old, new)
    assert shown is not None
    text = preview_of(shown).text
    # Then the tables added, the rows removed and changed, and the changed cell are shown
    assert text.startswith("1 table to add, 0 tables to remove")
    assert "audit" in text
    assert "sales" in text
    assert "20 -> 25" in text


def test_what_is_not_a_database_is_left_to_the_byte_diff(tmp_path):
    assert not is_sqlite("shop.db", b"not a database")
    assert not is_sqlite("notes.txt", b"SQLite format 3\x00")
    assert sqlite_change("x.db", b"SQLite format 3\x00garbage", b"SQLite format 3\x00") is None


def test_views_and_triggers_are_never_run(tmp_path):
    # Given a database whose view would call a function if it were read
    old = database(tmp_path / "a.db", "CREATE TABLE t (x)", "INSERT INTO t VALUES (1)")
    new = database(
        tmp_path / "b.db",
        "CREATE TABLE t (x)",
        "INSERT INTO t VALUES (2)",
        "CREATE VIEW v AS SELECT load_extension('evil') AS y",
    )
    # Then the preview reads the tables only, and says what changed in them
    text = preview_of(sqlite_change("a.db", old, new)).text
    assert "1 -> 2" in text
    assert " v " not in text
