"""to_sql (table.to_sql) on real SQLite files: what is replaced, appended, refused."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from jupyter_approvals.core import errors
from jupyter_approvals.kernel.session import KernelSession
from jupyter_approvals.ops import to_sql
from jupyter_approvals.previews.text import PREVIEW_BUDGET

from ..conftest import approve, ask, decide, request_of

# Engines made from URL strings are cached per URL; each test starts without them.
pytestmark = pytest.mark.usefixtures("sql_engines_closed")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A real SQLite file with a two-row table ``sales``."""
    path = tmp_path / "shop.db"
    connection = sqlite3.connect(path)
    with connection:
        connection.execute("CREATE TABLE sales (region TEXT, units INTEGER)")
        connection.executemany("INSERT INTO sales VALUES (?, ?)", [("north", 1), ("south", 2)])
    connection.close()
    return path


def url(path: Path) -> str:
    return f"sqlite:///{path}"


def rows(path: Path, table: str = "sales") -> list[Any]:
    connection = sqlite3.connect(path)
    try:
        return connection.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall()
    finally:
        connection.close()


FRAME = pd.DataFrame({"region": ["east", "west", "mid"], "units": [7, 8, 9]})


def test_replace_shows_what_is_replaced_and_replaces_it(session: KernelSession, db: Path) -> None:
    # Given a table with two rows and a frame of three
    call = lambda: to_sql(FRAME, "sales", url(db), if_exists="replace")  # noqa: E731
    # When the replace is asked for
    info = approve(session, call)
    # Then the preview shows the table's rows that would go, and the frame
    assert "Would REPLACE table 'sales' (2 rows now) with 3 rows" in info.preview
    assert "Table 'sales' now: 2 rows, dropped with the table (first 2):" in info.preview
    assert "    region (TEXT) | units (INTEGER)\n  - 'north' | 1\n" in info.preview
    assert "region (object)" in info.preview or "region (str)" in info.preview
    assert "east" in info.preview
    assert rows(db) == [("north", 1), ("south", 2)]
    # When it runs, Then the table holds the frame
    assert call() == 3
    assert rows(db) == [("east", 7), ("west", 8), ("mid", 9)]


def test_append_shows_the_row_count_before_and_after(session: KernelSession, db: Path) -> None:
    call = lambda: to_sql(FRAME, "sales", url(db), if_exists="append")  # noqa: E731
    info = approve(session, call)
    assert "Would APPEND 3 rows to table 'sales': 2 -> 5 rows." in info.preview
    assert call() == 3
    assert len(rows(db)) == 5


def test_a_new_table_is_created(session: KernelSession, db: Path) -> None:
    call = lambda: to_sql(FRAME, "regions", url(db), index=True)  # noqa: E731
    info = approve(session, call)
    assert "Would CREATE table 'regions' with 3 rows." in info.preview
    assert call() == 3
    assert rows(db, "regions") == [(0, "east", 7), (1, "west", 8), (2, "mid", 9)]


def test_a_table_changed_after_the_preview_refuses(session: KernelSession, db: Path) -> None:
    # Given an approved replace
    call = lambda: to_sql(FRAME, "sales", url(db), if_exists="replace")  # noqa: E731
    approve(session, call)
    # When the table changes before the run
    connection = sqlite3.connect(db)
    with connection:
        connection.execute("UPDATE sales SET units = 100 WHERE region = 'north'")
    connection.close()
    # Then the run is refused and the table keeps the new content
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        call()
    assert rows(db) == [("north", 100), ("south", 2)]


def test_a_table_created_after_the_preview_refuses(session: KernelSession, db: Path) -> None:
    # Given an approved replace of a table that does not exist yet
    call = lambda: to_sql(FRAME, "fresh", url(db), if_exists="replace")  # noqa: E731
    assert "Would CREATE table 'fresh'" in approve(session, call).preview
    # When someone creates it before the run, Then the run is refused
    connection = sqlite3.connect(db)
    with connection:
        connection.execute("CREATE TABLE fresh (x)")
    connection.close()
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        call()
    assert rows(db, "fresh") == []


def test_a_rejected_write_never_runs(session: KernelSession, db: Path) -> None:
    call = lambda: to_sql(FRAME, "sales", url(db), if_exists="replace")  # noqa: E731
    decide(session, ask(call), "reject", reason="no")
    with pytest.raises(errors.ApprovalRejected):
        call()
    assert rows(db) == [("north", 1), ("south", 2)]


def test_a_second_write_needs_a_new_approval(session: KernelSession, db: Path) -> None:
    call = lambda: to_sql(FRAME, "sales", url(db), if_exists="append")  # noqa: E731
    approve(session, call)
    call()
    ask(call)
    assert len(rows(db)) == 5


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"df": [1, 2]}, "df"),
        ({"name": ""}, "name"),
        ({"if_exists": "truncate"}, "if_exists"),
        ({"index": "yes"}, "index"),
        ({"if_exists": "fail"}, "if_exists"),  # the table exists
    ],
)
def test_invalid_input_is_refused_before_asking(
    session: KernelSession, db: Path, kwargs: dict[str, Any], argument: str
) -> None:
    arguments: dict[str, Any] = {"df": FRAME, "name": "sales", "database": url(db)}
    arguments.update(kwargs)
    with pytest.raises(errors.ApprovalInvalidArgument) as invalid:
        to_sql(**arguments)
    assert invalid.value.details["argument"] == argument
    assert session.store.pending() == []


@pytest.mark.parametrize("module", ["sqlalchemy", "pandas"])
def test_a_missing_package_names_the_sql_extra(
    session: KernelSession, db: Path, monkeypatch: pytest.MonkeyPatch, module: str
) -> None:
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(errors.ApprovalMissingDependency) as missing:
        to_sql(FRAME, "sales", url(db), if_exists="replace")
    assert missing.value.details["extra"] == "sql"
    assert "pip install '/path/to/your/clone[sql]'" in str(missing.value)
    assert missing.value.details["package"] == module
    assert session.store.pending() == []


def test_the_writer_refuses_outside_an_approved_run(db: Path) -> None:
    with pytest.raises(errors.ApprovalRequired):
        to_sql.fn(FRAME, "sales", url(db), if_exists="replace")
    assert rows(db) == [("north", 1), ("south", 2)]


def test_the_preview_stays_bounded_for_a_huge_frame(session: KernelSession, db: Path) -> None:
    # Given a frame with 3,000 long-named columns
    wide = pd.DataFrame({f"column_{i}_{'x' * 50}": range(3) for i in range(3_000)})
    info = request_of(session, ask(lambda: to_sql(wide, "wide", url(db))))
    assert len(info.preview) <= PREVIEW_BUDGET
    assert "2,980 more columns of the frame not shown" in info.preview


def test_a_table_changed_between_claim_and_write_rolls_back_and_refuses(
    session: KernelSession, db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given an approved append, and another writer that changes the table after the
    # claim read it, just before the run opens its transaction
    call = lambda: to_sql(FRAME, "sales", url(db), if_exists="append")  # noqa: E731
    approve(session, call)
    body = to_sql.fn

    def late_writer(*args: Any, **kwargs: Any) -> Any:
        connection = sqlite3.connect(db)
        with connection:
            connection.execute("UPDATE sales SET units = 100 WHERE region = 'north'")
        connection.close()
        return body(*args, **kwargs)

    monkeypatch.setattr(to_sql, "fn", late_writer)
    # When the approved call runs
    with pytest.raises(errors.ApprovalFingerprintMismatch) as mismatch:
        call()
    # Then it is refused and nothing was appended
    assert "nothing changed" in mismatch.value.message
    assert rows(db) == [("north", 100), ("south", 2)]
