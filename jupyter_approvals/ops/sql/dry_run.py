"""Dry runs of one SQL statement on SQLite: run it inside a savepoint, look, roll it all back.

A DML statement runs with ``RETURNING *`` added (unless it has its own RETURNING clause), so
the dry run yields the rows it would insert, update or delete: their count is what the
preview says ("would delete 1,204 rows") and their digest is part of the fingerprint. When
RETURNING is not possible the driver's row count is used alone. A DDL statement runs between
two readings of ``sqlite_master``; the tables it would drop or change are then read (after
the rollback) for the preview and the fingerprint.

Only SQLite gets dry runs: there a savepoint makes every change, DDL included, undoable.
Elsewhere a rolled-back transaction does not reliably change nothing (autocommit
connections, MySQL's non-transactional tables and implicit commits on DDL, sequences that
advance anyway), so no dry run is made and the preview says so.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...core.errors import ApprovalFingerprintMismatch
from ...core.fingerprint import fingerprint
from ...previews.text import PREVIEW_SECONDS, Deadline
from ..common.extras import require
from .database import (
    Database,
    Rows,
    driver_in_transaction,
    error_text,
    quoted_table,
    read_rows,
    sqlite_schema,
    table_rows,
)
from .statement import Statement

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection

#: Seconds a dry run may take (the statement, then reading what it touched).
DRY_RUN_SECONDS = PREVIEW_SECONDS


#: VM instructions between two checks of the dry run's time budget (SQLite progress handler).
_PROGRESS_STEPS = 100

#: The savepoint a dry run works in.
_DRY_RUN = "jpa_dry_run"


class DryRunStopped(Exception):
    """The dry run's time budget was spent."""


@contextlib.contextmanager
def sqlite_rolled_back(database: Database, seconds: float) -> Iterator[DryRunScope]:
    """A SQLite connection inside a savepoint that is always rolled back; time-bounded.

    SQLite itself is interrupted once ``seconds`` are spent (a progress handler), and the
    scope's ``check()`` raises :class:`DryRunStopped` for Python-side loops.
    """
    deadline = Deadline(seconds)
    with database.engine.connect() as connection:
        connection.begin()  # the engine's own begin hooks first (see run_transaction)
        had_one = driver_in_transaction(connection)
        raw = connection.connection.dbapi_connection
        set_handler: Callable[..., None] | None = getattr(raw, "set_progress_handler", None)
        if set_handler is not None:
            set_handler(lambda: 1 if deadline.passed() else 0, _PROGRESS_STEPS)
        try:
            connection.exec_driver_sql(f"SAVEPOINT {_DRY_RUN}")
            yield DryRunScope(connection, deadline)
        finally:
            if set_handler is not None:
                set_handler(None, 0)
            _roll_back(connection, had_one)


@contextlib.contextmanager
def rolled_back_within(connection: Connection) -> Iterator[DryRunScope]:
    """A savepoint inside the run's own transaction, rolled back and released at the end.

    The run repeats its dry run here, under its write lock, before it really executes;
    there is no time budget (the run itself has none either).
    """
    connection.exec_driver_sql(f"SAVEPOINT {_DRY_RUN}")
    try:
        yield DryRunScope(connection, Deadline(math.inf))
    finally:
        # Fails only if SQLite rolled the whole transaction back: then the run fails too.
        connection.exec_driver_sql(f"ROLLBACK TO SAVEPOINT {_DRY_RUN}")
        connection.exec_driver_sql(f"RELEASE SAVEPOINT {_DRY_RUN}")


def _roll_back(connection: Connection, had_one: bool) -> None:
    """Undo the dry run and end its transaction; the connection goes back to the pool.

    ``had_one``: the driver had a transaction open before the dry run's savepoint. Whether
    one is open afterwards says nothing about the dry run (Python 3.12's autocommit=False
    opens the next right after every rollback). What matters is whether the dry run's
    changes are gone: the connection is thrown away only if that is unsure (for an
    in-memory database with one kept connection, that would lose its content).
    """
    sa = require("sqlalchemy", "run SQL")
    try:
        connection.exec_driver_sql(f"ROLLBACK TO SAVEPOINT {_DRY_RUN}")
        # Ends the transaction if the savepoint opened it (a driver in autocommit mode
        # would not end it on rollback()); inside an outer one it only drops the savepoint.
        connection.exec_driver_sql(f"RELEASE SAVEPOINT {_DRY_RUN}")
        undone = True
    except sa.exc.SQLAlchemyError:
        # No savepoint any more: SQLite rolled the whole transaction back (e.g. the dry
        # run was interrupted). Roll back whatever may still be open, in SQL, since a
        # driver in autocommit mode ignores rollback(); it fails if nothing is open.
        with contextlib.suppress(sa.exc.SQLAlchemyError):
            connection.exec_driver_sql("ROLLBACK")
        undone = not driver_in_transaction(connection)
        if undone and had_one:
            # autocommit=False's rollback() fails if there is no transaction to end.
            connection.exec_driver_sql("BEGIN")
    try:
        connection.rollback()  # SQLAlchemy's and the driver's own
    except sa.exc.SQLAlchemyError:
        undone = False
    if not undone:
        # The dry run's changes may still be there: never hand this connection back.
        connection.invalidate()


class DryRunScope:
    """The connection of a dry run and its time budget."""

    def __init__(self, connection: Connection, deadline: Deadline) -> None:
        self.connection = connection
        self.deadline = deadline

    def check(self) -> None:
        """Raise DryRunStopped once the time budget is spent."""
        if self.deadline.passed():
            raise DryRunStopped

    def undo(self) -> None:
        """Undo what the dry run changed so far, staying inside the savepoint."""
        self.connection.exec_driver_sql(f"ROLLBACK TO SAVEPOINT {_DRY_RUN}")


@dataclass(frozen=True)
class DryRun:
    """What a dry run found. ``status`` is done, failed, stopped (time budget) or skipped."""

    status: str
    note: str = ""
    rowcount: int | None = None
    #: The rows a DML statement would insert/update/delete (as RETURNING gives them).
    affected: Rows | None = None
    #: For DDL: a digest of the schema before, what it would change, and the tables it would
    #: drop or change, as they are now.
    schema_digest: str | None = None
    schema_changes: tuple[str, ...] = ()
    tables: tuple[tuple[str, Rows], ...] = field(default=())

    def state(self) -> dict[str, Any]:
        """The part of the fingerprint that binds the target's state."""
        return {
            "status": self.status,
            "note": self.note,
            "rowcount": self.rowcount,
            "affected": self.affected.state() if self.affected else None,
            "schema": self.schema_digest,
            "changes": list(self.schema_changes),
            "tables": {name: rows.state() for name, rows in self.tables},
        }


def dry_run(database: Database, statement: Statement, parameters: dict[str, Any] | None) -> DryRun:
    """The dry run of ``statement`` (made once per call: the subject and preview share it)."""
    key = _key(statement, parameters)
    found = database._memo.get(key)
    if found is None:
        found = database._memo[key] = _dry_run(database, statement, parameters or {})
    return found


def _dry_run(database: Database, statement: Statement, parameters: dict[str, Any]) -> DryRun:
    if statement.kind == "read":
        return DryRun(
            "skipped",
            f"{statement.main} is classified by its keywords (not checked) as a read, so no "
            "dry run is made; a function it calls could still change data",
        )
    if statement.kind == "other":
        return DryRun(
            "skipped",
            f"no dry run for {statement.main} statements; by their keywords (not checked) "
            "they are not classified as reads, row changes or schema changes",
        )
    if not database.is_sqlite:
        return DryRun(
            "skipped",
            f"no dry run on {database.dialect}: dry runs are made only on SQLite, where a "
            "savepoint undoes every change (elsewhere autocommit connections, "
            "non-transactional tables and sequences can keep changes of a rolled-back run)",
        )
    with sqlite_rolled_back(database, DRY_RUN_SECONDS) as scope:
        return _in_scope(scope, statement, parameters)


def check_unchanged(
    connection: Connection,
    database: Database,
    statement: Statement,
    parameters: dict[str, Any] | None,
) -> None:
    """Inside the run's transaction, before it executes: the dry run again, as approved?

    The run holds SQLite's write lock, so what this finds is what the statement will
    change. A dry run that was skipped or stopped bound nothing of the data: nothing to
    compare. Raises ApprovalFingerprintMismatch (the run then rolls back: nothing changed).
    """
    approved: DryRun | None = database._memo.get(_key(statement, parameters))
    if approved is not None and approved.status not in ("done", "failed"):
        return
    again: DryRun | None = None
    if approved is not None:
        with rolled_back_within(connection) as scope:
            again = _in_scope(scope, statement, parameters or {})
    if again is None or approved is None or again.state() != approved.state():
        raise ApprovalFingerprintMismatch(
            "The data this statement changes is no longer what the approved dry run found "
            "(another writer changed it between the approval and the run). The run was "
            "rolled back: nothing changed. Call again to see a new preview and ask again.",
            action="sql.execute",
            approved=approved.state() if approved is not None else None,
            found=again.state() if again is not None else None,
        )


def _key(statement: Statement, parameters: dict[str, Any] | None) -> tuple[Any, ...]:
    return ("dry_run", statement.text, fingerprint(parameters))


def _in_scope(scope: DryRunScope, statement: Statement, parameters: dict[str, Any]) -> DryRun:
    sa = require("sqlalchemy", "run SQL")
    try:
        if statement.kind == "dml":
            return _dml(sa, scope, statement, parameters)
        return _ddl(sa, scope, statement, parameters)
    except DryRunStopped:
        return _stopped()
    except sa.exc.SQLAlchemyError as exc:
        if scope.deadline.passed():
            return _stopped()
        return DryRun("failed", error_text(exc))


def _stopped() -> DryRun:
    return DryRun(
        "stopped",
        f"the dry run was stopped after its time budget of {DRY_RUN_SECONDS:g} s; what the "
        "statement would change is not known",
    )


def _dml(sa: Any, scope: DryRunScope, statement: Statement, parameters: dict[str, Any]) -> DryRun:
    connection = scope.connection
    if statement.has_returning:
        rows = read_rows(connection.execute(sa.text(statement.text), parameters), scope.check)
        return DryRun("done", rowcount=rows.count, affected=rows)
    if statement.main_at_top:
        returning = f"{statement.text[: statement.body_end]} RETURNING *"
        try:
            result = connection.execute(sa.text(returning), parameters)
        except sa.exc.SQLAlchemyError:
            if scope.deadline.passed():
                raise
            # RETURNING is not possible for this statement (a view, an old SQLite).
            scope.undo()
        else:
            rows = read_rows(result, scope.check)
            return DryRun("done", rowcount=rows.count, affected=rows)
    # The change sits inside a WITH, or RETURNING failed: count only.
    result = connection.execute(sa.text(statement.text), parameters)
    if result.returns_rows:
        read_rows(result, scope.check)
    count = result.rowcount
    if count < 0:  # sqlite3 counts only statements starting with a DML keyword
        count = connection.exec_driver_sql("SELECT changes()").scalar_one()
    return DryRun(
        "done",
        "the affected rows could not be read (RETURNING not possible); only their count is bound",
        rowcount=int(count),
    )


def _ddl(sa: Any, scope: DryRunScope, statement: Statement, parameters: dict[str, Any]) -> DryRun:
    connection = scope.connection
    before = sqlite_schema(connection)
    connection.execute(sa.text(statement.text), parameters)
    after = sqlite_schema(connection)
    scope.undo()  # the tables are read as they are now, not as the statement left them
    changes: list[str] = []
    touched: list[str] = []
    for kind, name in sorted(before.keys() | after.keys()):
        old, new = before.get((kind, name)), after.get((kind, name))
        if old == new:
            continue
        verb = "create" if old is None else "drop" if new is None else "change"
        changes.append(f"{verb} {kind} {name}")
        if kind == "table" and old is not None:
            touched.append(name)
    tables = tuple(
        (name, table_rows(connection, quoted_table(connection, name), scope.check))
        for name in touched
    )
    return DryRun(
        "done",
        schema_digest=fingerprint(sorted(before.items())),
        schema_changes=tuple(changes),
        tables=tables,
    )
