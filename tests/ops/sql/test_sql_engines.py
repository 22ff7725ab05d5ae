"""SQL operations on SQLite engines set up the ways SQLAlchemy's sqlite docs recommend.

Recipe (a) of the docs: the driver's own transaction handling is turned off
(``isolation_level = None``) and a ``"begin"`` event emits ``BEGIN``. Python 3.12's
``autocommit=False`` keeps a transaction open at all times (opened on connect and again after
every commit and rollback); this runs on Python 3.11, so a ``sqlite3.Connection`` subclass
does what that mode does, with the same real SQLite underneath.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.pool import StaticPool

from jupyter_approvals.kernel.session import KernelSession
from jupyter_approvals.ops import execute_sql, to_sql
from jupyter_approvals.ops.sql import dry_run as sql_dry_run

from ..conftest import approve, ask, request_of, second_writer_during_check

# Engines made from URL strings are cached per URL; each test starts without them.
pytestmark = pytest.mark.usefixtures("sql_engines_closed")


class AlwaysInTransaction(sqlite3.Connection):
    """A connection as Python 3.12's ``autocommit=False`` keeps it: always in a transaction.

    Like CPython's ``_sqlite/connection.c`` in that mode: a transaction is opened on connect,
    and ``commit()`` / ``rollback()`` end one unconditionally (an error if none is open),
    then open the next. Made with ``isolation_level=None`` so nothing else is implicit.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.execute("BEGIN")

    def commit(self) -> None:
        self.execute("COMMIT")
        self.execute("BEGIN")

    def rollback(self) -> None:
        self.execute("ROLLBACK")
        self.execute("BEGIN")


def recipe_a(engine: sa.Engine) -> sa.Engine:
    """``engine`` with the docs' recipe: no driver transactions, ``BEGIN`` on SQLAlchemy's begin."""

    @event.listens_for(engine, "connect")
    def _no_driver_transactions(dbapi_connection: Any, record: Any) -> None:
        dbapi_connection.isolation_level = None

    @event.listens_for(engine, "begin")
    def _begin(connection: sa.Connection) -> None:
        connection.exec_driver_sql("BEGIN")

    return engine


def recipe_file(path: Path) -> sa.Engine:
    return recipe_a(sa.create_engine(f"sqlite:///{path}"))


def recipe_memory() -> sa.Engine:
    return recipe_a(sa.create_engine("sqlite://", poolclass=StaticPool))


def always_in_transaction_memory() -> sa.Engine:
    def connect() -> sqlite3.Connection:
        return sqlite3.connect(
            ":memory:", isolation_level=None, check_same_thread=False, factory=AlwaysInTransaction
        )

    return sa.create_engine("sqlite://", creator=connect, poolclass=StaticPool)


def plain_memory() -> sa.Engine:
    return sa.create_engine("sqlite://", poolclass=StaticPool)


MEMORY_ENGINES: dict[str, Callable[[], sa.Engine]] = {
    "plain": plain_memory,
    "recipe-a": recipe_memory,
    "always-in-transaction": always_in_transaction_memory,
}


def fill(engine: sa.Engine) -> None:
    """Table ``t`` with the values 1, 2 and 3, written through the engine itself."""
    with engine.begin() as connection:
        connection.exec_driver_sql("CREATE TABLE t (x INTEGER)")
        connection.exec_driver_sql("INSERT INTO t VALUES (1), (2), (3)")


def values(engine: sa.Engine) -> list[int]:
    with engine.connect() as connection:
        return [row[0] for row in connection.exec_driver_sql("SELECT x FROM t ORDER BY x")]


@pytest.fixture(params=sorted(MEMORY_ENGINES))
def memory(request: pytest.FixtureRequest) -> Iterator[sa.Engine]:
    """An in-memory database on one kept connection (StaticPool), filled with ``t``."""
    engine = MEMORY_ENGINES[request.param]()
    fill(engine)
    yield engine
    engine.dispose()


def test_asking_for_approval_keeps_an_in_memory_database(
    session: KernelSession, memory: sa.Engine
) -> None:
    # Given an in-memory database whose only connection is kept by a StaticPool
    # When a DELETE on it is only asked for (its dry run is rolled back)
    info = request_of(session, ask(lambda: execute_sql(memory, "DELETE FROM t WHERE x = 1")))
    # Then the preview counted the row, and the database still has all its content
    assert "Dry run (rolled back): would delete 1 row." in info.preview
    assert values(memory) == [1, 2, 3]


def test_a_stopped_dry_run_keeps_an_in_memory_database(
    session: KernelSession, memory: sa.Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given an in-memory database with a table big enough to stop a dry run in,
    # and a dry-run budget already spent
    with memory.begin() as connection:
        connection.exec_driver_sql(
            "CREATE TABLE big AS WITH RECURSIVE n(i) AS "
            "(SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000) SELECT i FROM n"
        )
    monkeypatch.setattr(sql_dry_run, "DRY_RUN_SECONDS", 0.0)
    # When a DELETE of every row is asked for
    info = request_of(session, ask(lambda: execute_sql(memory, "DELETE FROM big")))
    # Then the dry run was stopped, and the database still has all its content
    assert "Dry run (rolled back): STOPPED" in info.preview
    assert values(memory) == [1, 2, 3]
    with memory.connect() as connection:
        assert connection.exec_driver_sql("SELECT count(*) FROM big").scalar() == 5000


def test_an_approved_run_works_on_an_in_memory_database(
    session: KernelSession, memory: sa.Engine
) -> None:
    # Given an approved DELETE on an in-memory database
    call = lambda: execute_sql(memory, "DELETE FROM t WHERE x = 1")  # noqa: E731
    approve(session, call)
    # When it runs, Then it deletes the one row and keeps the others
    assert call() == 1
    assert values(memory) == [2, 3]
    # And a second run needs a new approval
    ask(call)


def test_an_approved_run_works_with_the_begin_event_recipe(
    session: KernelSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a SQLite file used through an engine with recipe (a), and an approved DELETE
    engine = recipe_file(tmp_path / "r.db")
    try:
        fill(engine)
        call = lambda: execute_sql(engine, "DELETE FROM t WHERE x >= 2")  # noqa: E731
        info = approve(session, call)
        assert "Dry run (rolled back): would delete 2 rows." in info.preview
        # And another writer that tries to write while the run checks
        refused = second_writer_during_check(
            monkeypatch, tmp_path / "r.db", "INSERT INTO t VALUES (9)"
        )
        # When the approved call runs
        # Then it deletes the rows, and the run held the write lock while it checked
        assert call() == 2
        assert refused == ["database is locked"]
        assert values(engine) == [1]
    finally:
        engine.dispose()


def test_ddl_runs_with_the_begin_event_recipe(session: KernelSession, tmp_path: Path) -> None:
    # Given an engine with recipe (a) and an approved DROP TABLE
    engine = recipe_file(tmp_path / "r.db")
    try:
        fill(engine)
        call = lambda: execute_sql(engine, "DROP TABLE t")  # noqa: E731
        info = approve(session, call)
        assert "Dry run (rolled back): would drop table t." in info.preview
        # When it runs, Then the table is gone
        assert call() == -1
        with engine.connect() as connection:
            assert connection.exec_driver_sql("SELECT name FROM sqlite_master").all() == []
    finally:
        engine.dispose()


@pytest.mark.parametrize("recipe", [False, True])
def test_vacuum_runs_outside_a_transaction(
    session: KernelSession, tmp_path: Path, recipe: bool
) -> None:
    # Given a SQLite file (used plainly or with recipe (a)) and an approved VACUUM, which
    # SQLite refuses inside a transaction
    path = tmp_path / "v.db"
    engine = recipe_file(path) if recipe else sa.create_engine(f"sqlite:///{path}")
    try:
        fill(engine)
        call = lambda: execute_sql(engine, "VACUUM")  # noqa: E731
        approve(session, call)
        # When it runs, Then it is not refused, and the data is still there
        call()
        assert values(engine) == [1, 2, 3]
    finally:
        engine.dispose()


def test_vacuum_runs_on_an_in_memory_database(session: KernelSession, memory: sa.Engine) -> None:
    # Given an approved VACUUM on an in-memory database
    call = lambda: execute_sql(memory, "VACUUM")  # noqa: E731
    approve(session, call)
    # When it runs, Then it is not refused, and the data is still there
    call()
    assert values(memory) == [1, 2, 3]


def test_to_sql_works_with_the_begin_event_recipe(session: KernelSession, tmp_path: Path) -> None:
    # Given an engine with recipe (a), and an approved append of two rows
    engine = recipe_file(tmp_path / "r.db")
    try:
        fill(engine)
        frame = pd.DataFrame({"x": [7, 8]})
        call = lambda: to_sql(frame, "t", engine, if_exists="append", index=False)  # noqa: E731
        approve(session, call)
        # When it runs, Then both rows are there after the old ones
        assert call() == 2
        assert values(engine) == [1, 2, 3, 7, 8]
    finally:
        engine.dispose()
