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

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.errors import ApprovalFingerprintMismatch
from ..core.fingerprint import fingerprint
from ._extras import require
from ._preview import PREVIEW_SECONDS
from .sql_database import (
    Database,
    DryRunScope,
    DryRunStopped,
    Rows,
    error_text,
    quoted_table,
    read_rows,
    rolled_back_within,
    sqlite_rolled_back,
    sqlite_schema,
    table_rows,
)
from .sql_statement import Statement

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection

#: Seconds a dry run may take (the statement, then reading what it touched).
DRY_RUN_SECONDS = PREVIEW_SECONDS


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
    digest = hashlib.sha256(repr(sorted(before.items())).encode("utf-8", "backslashreplace"))
    return DryRun(
        "done",
        schema_digest=f"sha256:{digest.hexdigest()}",
        schema_changes=tuple(changes),
        tables=tables,
    )
