"""execute_sql (sql.execute) on real SQLite files: dry runs, approvals, mismatches, refusals."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from jupyter_approvals.core import errors
from jupyter_approvals.core.fingerprint import fingerprint
from jupyter_approvals.kernel.session import KernelSession
from jupyter_approvals.ops import execute_sql
from jupyter_approvals.ops.sql import dry_run as sql_dry_run
from jupyter_approvals.ops.sql.database import Database, redacted_url
from jupyter_approvals.previews.text import PREVIEW_BUDGET

from ..conftest import approve, ask, decide, request_of, second_writer_during_check

# Engines made from URL strings are cached per URL; each test starts without them.
pytestmark = pytest.mark.usefixtures("sql_engines_closed")


def url(path: Path) -> str:
    return f"sqlite:///{path}"


def dump(path: Path) -> dict[str, Any]:
    """The schema and every table's rows, read with sqlite3 directly."""
    db = sqlite3.connect(path)
    try:
        schema = db.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
        tables = [name for kind, name, _ in schema if kind == "table"]
        rows = {t: db.execute(f"SELECT * FROM {t} ORDER BY rowid").fetchall() for t in tables}
        return {"schema": schema, **rows}
    finally:
        db.close()


def run_sql(path: Path, statement: str) -> None:
    db = sqlite3.connect(path)
    try:
        with db:
            db.execute(statement)
    finally:
        db.close()


DELETE = "DELETE FROM orders WHERE status = :status"


def test_delete_preview_count_equals_the_real_count(session: KernelSession, shop: Path) -> None:
    # Given a DELETE of the cancelled orders
    before = dump(shop)
    call = lambda: execute_sql(url(shop), DELETE, {"status": "cancelled"})  # noqa: E731
    # When it is asked for
    info = approve(session, call)
    # Then the preview says what a dry run found, and the dry run changed nothing
    assert "Dry run (rolled back): would delete 4 rows." in info.preview
    assert "Parameters:\n  :status: 'cancelled'\n" in info.preview
    assert "'cancelled'" in info.preview.split("Rows it would delete")[1]
    assert info.summary == f"Run SQL DELETE on {url(shop)}"
    assert dump(shop) == before
    # When it runs after the approval
    # Then the real count is the previewed one and the rows are gone
    assert call() == 4
    assert dump(shop)["orders"] == [row for row in before["orders"] if row[1] != "cancelled"]


@pytest.mark.parametrize(
    ("statement", "verb", "count"),
    [
        ("UPDATE orders SET amount = amount + 1 WHERE amount >= 50", "update", 5),
        ("INSERT INTO archive SELECT * FROM orders WHERE status = 'open'", "insert", 6),
        (
            "WITH gone AS (SELECT id FROM orders WHERE amount < 30) "
            "DELETE FROM orders WHERE id IN (SELECT id FROM gone); -- old ones",
            "delete",
            3,
        ),
    ],
)
def test_dry_run_count_equals_the_real_count(
    session: KernelSession, shop: Path, statement: str, verb: str, count: int
) -> None:
    # Given a DML statement, When it is previewed, approved and run
    before = dump(shop)
    info = approve(session, lambda: execute_sql(url(shop), statement))
    assert dump(shop) == before
    # Then the previewed count is the real one
    assert f"would {verb} {count} rows." in info.preview
    assert execute_sql(url(shop), statement) == count
    assert dump(shop) != before


def test_a_change_after_the_preview_refuses_the_run(session: KernelSession, shop: Path) -> None:
    # Given an approved DELETE
    call = lambda: execute_sql(url(shop), DELETE, {"status": "cancelled"})  # noqa: E731
    approve(session, call)
    # When another cancelled order arrives before the run
    run_sql(shop, "INSERT INTO orders (status, amount) VALUES ('cancelled', 1)")
    after_change = dump(shop)
    # Then the run is refused and nothing is deleted
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        call()
    assert dump(shop) == after_change


def test_a_changed_affected_row_refuses_the_run_at_the_same_count(
    session: KernelSession, shop: Path
) -> None:
    # Given an approved DELETE of 4 rows
    call = lambda: execute_sql(url(shop), DELETE, {"status": "cancelled"})  # noqa: E731
    approve(session, call)
    # When one of those rows changes (the count stays 4)
    run_sql(shop, "UPDATE orders SET amount = 999 WHERE id = 1")
    changed = dump(shop)
    # Then the digest of the affected rows differs and nothing runs
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        call()
    assert dump(shop) == changed


def test_a_rejected_statement_never_runs(session: KernelSession, shop: Path) -> None:
    # Given a pending DELETE
    before = dump(shop)
    call = lambda: execute_sql(url(shop), "DELETE FROM orders")  # noqa: E731
    pending = ask(call)
    # When the person rejects it
    decide(session, pending, "reject", reason="keep the orders")
    # Then the call raises ApprovalRejected and the table is untouched
    with pytest.raises(errors.ApprovalRejected):
        call()
    assert dump(shop) == before


def test_a_second_run_needs_a_new_approval(session: KernelSession, shop: Path) -> None:
    # Given an approved and run UPDATE
    statement = "UPDATE orders SET status = 'open'"
    approve(session, lambda: execute_sql(url(shop), statement))
    assert execute_sql(url(shop), statement) == 10
    # When it is called again
    # Then it asks again (the dry run now finds the same 10 rows, but the approval is spent)
    ask(lambda: execute_sql(url(shop), statement))


def test_drop_table_is_dry_run_and_shows_what_is_lost(session: KernelSession, shop: Path) -> None:
    # Given a DROP TABLE on SQLite (transactional DDL)
    before = dump(shop)
    call = lambda: execute_sql(url(shop), "DROP TABLE orders")  # noqa: E731
    info = approve(session, call)
    # Then the preview names the table, its row count and first rows; nothing was dropped
    assert "Dry run (rolled back): would drop table orders." in info.preview
    assert "Table orders now: 10 rows; first 5:\n    id | status | amount\n" in info.preview
    assert dump(shop) == before
    # When it runs, the table is gone
    assert call() == -1
    assert "orders" not in dump(shop)


def test_a_ddl_change_of_the_dropped_table_refuses(session: KernelSession, shop: Path) -> None:
    # Given an approved DROP TABLE, When the table gains a row before the run
    call = lambda: execute_sql(url(shop), "DROP TABLE orders")  # noqa: E731
    approve(session, call)
    run_sql(shop, "INSERT INTO orders (status, amount) VALUES ('open', 5)")
    # Then the run is refused and the table still exists
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        call()
    assert len(dump(shop)["orders"]) == 11


def test_a_failing_statement_shows_the_error_in_the_preview(
    session: KernelSession, shop: Path
) -> None:
    # Given a statement the database refuses, When it is asked for
    info = request_of(session, ask(lambda: execute_sql(url(shop), "DELETE FROM nowhere")))
    # Then the preview shows the database's error
    assert "the statement FAILED: OperationalError: no such table: nowhere" in info.preview


def test_a_select_is_classified_by_keywords_and_returns_rows(
    session: KernelSession, shop: Path
) -> None:
    # Given a SELECT, When it is asked for, approved and run
    statement = "SELECT id, amount FROM orders WHERE id <= :n ORDER BY id"
    info = approve(session, lambda: execute_sql(url(shop), statement, {"n": 2}))
    # Then the preview says how it was classified without claiming it only reads
    assert (
        "Dry run: none (SELECT is classified by its keywords (not checked) as a read, so no "
        "dry run is made; a function it calls could still change data)." in info.preview
    )
    assert "only reads" not in info.preview
    # And the rows come back as tuples
    assert execute_sql(url(shop), statement, {"n": 2}) == [(1, 0), (2, 10)]


def test_an_in_memory_database_keeps_its_content_between_calls(session: KernelSession) -> None:
    # Given an in-memory SQLite URL, When a table is created and filled in two approved calls
    for statement in ("CREATE TABLE t (x INTEGER)", "INSERT INTO t VALUES (1), (2)"):
        approve(session, lambda s=statement: execute_sql("sqlite://", s))
        execute_sql("sqlite://", statement)
    # Then both ran on one database
    approve(session, lambda: execute_sql("sqlite://", "SELECT count(*) FROM t"))
    assert execute_sql("sqlite://", "SELECT count(*) FROM t") == [(2,)]


def test_an_engine_passed_in_is_used_and_not_disposed(session: KernelSession, shop: Path) -> None:
    # Given the caller's own engine
    import sqlalchemy as sa

    engine = sa.create_engine(url(shop))
    try:
        statement = "UPDATE orders SET amount = 0 WHERE id = 1"
        info = approve(session, lambda: execute_sql(engine, statement))
        # When it runs, Then it changes the file, and the card names the URL
        assert url(shop) in info.preview
        assert execute_sql(engine, statement) == 1
        with engine.connect() as connection:
            assert (
                connection.exec_driver_sql("SELECT amount FROM orders WHERE id = 1").scalar() == 0
            )
    finally:
        engine.dispose()


def test_credentials_never_reach_the_card(session: KernelSession, tmp_path: Path) -> None:
    # Given a SQLite URI whose query carries a token
    secret_url = f"sqlite:///file:{tmp_path}/t.db?mode=rwc&token=hunter2&uri=true"
    # When a statement on it is asked for
    info = request_of(session, ask(lambda: execute_sql(secret_url, "CREATE TABLE t (x)")))
    # Then summary and preview show the URL with the token masked
    assert "hunter2" not in info.preview + info.summary
    assert "token=***" in info.summary
    # And a password in a URL is masked the same way (for any database)
    from sqlalchemy.engine import make_url

    assert redacted_url(make_url("postgresql://user:secret@host/db")) == (
        "postgresql://user:***@host/db"
    )


def test_a_missing_driver_is_named_without_the_password(session: KernelSession) -> None:
    # Given a PostgreSQL URL with a password, and no PostgreSQL driver installed
    # When it is used
    with pytest.raises(errors.ApprovalMissingDependency) as missing:
        execute_sql("postgresql://user:secret@host/db", "SELECT 1")
    # Then the error names the database without its password; nothing was asked
    assert "postgresql://user:***@host/db" in str(missing.value)
    assert "secret" not in str(missing.value)
    assert session.store.pending() == []


def test_a_database_is_fingerprinted_as_its_redacted_url(shop: Path) -> None:
    # Given a Database for an engine
    import sqlalchemy as sa

    engine = sa.create_engine(url(shop))
    try:
        # Then its fingerprint is that of {"database": <redacted URL>}, not of the engine
        assert fingerprint(Database(engine)) == fingerprint({"database": url(shop)})
    finally:
        engine.dispose()


@pytest.mark.parametrize(
    ("statement", "parameters", "argument"),
    [
        ("", None, "statement"),
        ("  -- nothing\n ; ", None, "statement"),
        ("DELETE FROM orders; DROP TABLE orders", None, "statement"),
        ("BEGIN", None, "statement"),
        ("SELECT 'unterminated", None, "statement"),
        (b"SELECT 1", None, "statement"),
        ("SELECT :a", [1], "parameters"),
        ("SELECT :a", {}, "parameters"),
        ("SELECT 1", {"a": 1}, "parameters"),
        ("SELECT :a", {1: 1}, "parameters"),
    ],
)
def test_invalid_input_is_refused_before_asking(
    session: KernelSession, shop: Path, statement: Any, parameters: Any, argument: str
) -> None:
    # When execute_sql is called with arguments it cannot run
    with pytest.raises(errors.ApprovalInvalidArgument) as invalid:
        execute_sql(url(shop), statement, parameters)
    # Then it is refused naming the argument, and nothing is asked
    assert invalid.value.code == "APPROVAL_INVALID_ARGUMENT"
    assert invalid.value.details["argument"] == argument
    assert session.store.pending() == []


@pytest.mark.parametrize("database", [42, "not a url", "nosuchdb://x"])
def test_an_invalid_database_is_refused(session: KernelSession, database: Any) -> None:
    with pytest.raises(errors.ApprovalInvalidArgument):
        execute_sql(database, "SELECT 1")
    assert session.store.pending() == []


def test_semicolons_in_quotes_and_comments_are_one_statement(
    session: KernelSession, shop: Path
) -> None:
    # Given semicolons inside quoted text and comments, and a trailing ';'
    statement = "UPDATE orders SET status = 'a;b' /* ; */ WHERE id = 1 -- ;\n;"
    # When it is previewed and run, Then it is one statement
    info = approve(session, lambda: execute_sql(url(shop), statement))
    assert "would update 1 row." in info.preview
    assert execute_sql(url(shop), statement) == 1


def test_missing_sqlalchemy_names_the_extra(
    session: KernelSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given no SQLAlchemy in the kernel
    monkeypatch.setitem(sys.modules, "sqlalchemy", None)
    # When execute_sql is called, Then it names the extra to install; nothing is asked
    with pytest.raises(errors.ApprovalMissingDependency) as missing:
        execute_sql("sqlite://", "SELECT 1")
    assert missing.value.details["extra"] == "sql"
    assert "/path/to/your/clone[sql]" in str(missing.value)
    assert session.store.pending() == []


def test_the_writer_refuses_outside_an_approved_run(shop: Path) -> None:
    # When the function body is called directly, Then it refuses and nothing changes
    before = dump(shop)
    with pytest.raises(errors.ApprovalRequired):
        execute_sql.fn(url(shop), "DELETE FROM orders")
    assert dump(shop) == before


def test_the_preview_stays_bounded_for_huge_input(session: KernelSession, shop: Path) -> None:
    # Given a 200,000-character statement and a huge parameter
    ids = ", ".join(str(i) for i in range(40_000))
    statement = f"DELETE FROM orders WHERE id IN ({ids}) AND status != :note"
    info = request_of(
        session, ask(lambda: execute_sql(url(shop), statement, {"note": "x" * 10**6}))
    )
    # Then the preview fits the budget, keeps the verdict and announces the cuts
    assert len(info.preview) <= PREVIEW_BUDGET
    assert "would delete 10 rows." in info.preview
    assert "more characters of the statement not shown" in info.preview


def test_a_slow_dry_run_is_stopped_and_changes_nothing(
    session: KernelSession, shop: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a dry-run budget already spent and a statement with real work
    run_sql(shop, "INSERT INTO archive SELECT * FROM orders")
    for _ in range(8):
        run_sql(shop, "INSERT INTO archive SELECT * FROM archive")
    before = dump(shop)
    monkeypatch.setattr(sql_dry_run, "DRY_RUN_SECONDS", 0.0)
    # When it is previewed
    info = request_of(session, ask(lambda: execute_sql(url(shop), "DELETE FROM archive")))
    # Then the preview says the dry run was stopped and binds the statement only
    assert "Dry run (rolled back): STOPPED" in info.preview
    assert "binds the statement and its parameters only" in info.preview
    assert dump(shop) == before


def offline_engine(url: str) -> Any:
    """An engine of another dialect whose driver is a stand-in: never connected to."""
    import types

    import sqlalchemy as sa

    driver = types.ModuleType("stand_in_driver")
    driver.paramstyle = "format"  # type: ignore[attr-defined]
    driver.__version__ = "1.31.2"  # type: ignore[attr-defined]
    return sa.create_engine(url, module=driver)


def test_a_statement_hidden_behind_an_e_string_is_refused_on_postgresql(
    session: KernelSession,
) -> None:
    # Given a PostgreSQL database and a SELECT whose E'…' string hides a DROP TABLE
    engine = offline_engine("postgresql+pg8000://user:pw@host/db")
    statement = "SELECT E'\\'' ; DROP TABLE t; -- '"
    # When it is called
    with pytest.raises(errors.ApprovalInvalidArgument) as invalid:
        execute_sql(engine, statement)
    # Then it is refused before anything is asked, telling how to pass values instead
    assert invalid.value.details["argument"] == "statement"
    assert "named parameters" in invalid.value.message
    assert session.store.pending() == []


def test_a_data_changing_with_is_not_called_a_read(session: KernelSession) -> None:
    # Given a PostgreSQL WITH whose CTE deletes rows and whose main statement is a SELECT
    engine = offline_engine("postgresql+pg8000://user:pw@host/db")
    statement = "WITH g AS (DELETE FROM t RETURNING *) SELECT * FROM g"
    # When it is asked for
    info = request_of(session, ask(lambda: execute_sql(engine, statement)))
    # Then the card calls it a DELETE, and nothing says it only reads
    assert info.summary == "Run SQL DELETE on postgresql+pg8000://user:***@host/db"
    assert "no dry run on postgresql" in info.preview
    assert "read" not in info.preview.split("Statement")[0]


def test_a_long_statement_is_wrapped_so_nothing_of_it_is_hidden(
    session: KernelSession, shop: Path
) -> None:
    # Given a statement whose end comes after 420 spaces (past one preview line)
    statement = "UPDATE orders SET status = 'closed'" + " " * 420 + "WHERE id = 1 -- the end"
    # When it is asked for
    info = request_of(session, ask(lambda: execute_sql(url(shop), statement)))
    # Then its end is visible, and the wrapped lines put together give the statement back
    lines = info.preview.split("\n")
    first = next(i for i, line in enumerate(lines) if line.startswith("Statement ("))
    body = [lines[first + 1][2:]]
    body += [line[4:] for line in lines[first + 2 :] if line.startswith("  ↪ ")]
    assert "".join(body) == statement
    assert "WHERE id = 1 -- the end" in info.preview
    assert "more characters" not in info.preview


def test_a_change_between_claim_and_write_rolls_back_and_refuses(
    session: KernelSession, shop: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given an approved DELETE of the cancelled orders
    call = lambda: execute_sql(url(shop), DELETE, {"status": "cancelled"})  # noqa: E731
    approve(session, call)
    # And another writer that adds a cancelled order after the claim's dry run, just
    # before the run opens its transaction
    body = execute_sql.fn

    def late_writer(*args: Any, **kwargs: Any) -> Any:
        run_sql(shop, "INSERT INTO orders (status, amount) VALUES ('cancelled', 1)")
        return body(*args, **kwargs)

    monkeypatch.setattr(execute_sql, "fn", late_writer)
    # When the approved call runs
    with pytest.raises(errors.ApprovalFingerprintMismatch) as mismatch:
        call()
    # Then it is refused and nothing was deleted (the late order is there too)
    assert "nothing changed" in mismatch.value.message
    assert [row[1] for row in dump(shop)["orders"]].count("cancelled") == 5


def test_a_ddl_change_between_claim_and_write_refuses(
    session: KernelSession, shop: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given an approved DROP TABLE, and a row added after the claim, before the write
    call = lambda: execute_sql(url(shop), "DROP TABLE orders")  # noqa: E731
    approve(session, call)
    body = execute_sql.fn

    def late_writer(*args: Any, **kwargs: Any) -> Any:
        run_sql(shop, "INSERT INTO orders (status, amount) VALUES ('open', 5)")
        return body(*args, **kwargs)

    monkeypatch.setattr(execute_sql, "fn", late_writer)
    # When the approved call runs, Then it is refused and the table is still there
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        call()
    assert len(dump(shop)["orders"]) == 11


def test_no_other_writer_can_commit_while_the_run_checks(
    session: KernelSession, shop: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given an approved DELETE, and another writer that tries to write while the run checks

    call = lambda: execute_sql(url(shop), DELETE, {"status": "cancelled"})  # noqa: E731
    approve(session, call)
    refused = second_writer_during_check(
        monkeypatch, shop, "INSERT INTO orders (status, amount) VALUES ('cancelled', 1)"
    )
    # When the approved call runs
    # Then the other writer was locked out and the approved 4 rows were deleted
    assert call() == 4
    assert refused == ["database is locked"]
    assert "cancelled" not in [row[1] for row in dump(shop)["orders"]]
