"""Protected SQL: ``execute_sql`` (action ``sql.execute``) and ``to_sql`` (``table.to_sql``).

``execute_sql(database, statement, parameters=None)`` runs one statement in one transaction
after a person approved it. ``database`` is a URL string or a SQLAlchemy Engine; it is shown,
journaled and fingerprinted only as its URL with the password hidden. On SQLite the preview
comes from a dry run inside a savepoint that is rolled back: "would delete 1,204 rows", the
first of those rows, the tables a DDL statement would drop or change. The fingerprint binds
the dry run's result (row count and a digest of the affected rows), so if the data changes
between the preview and the run, the run is refused with APPROVAL_FINGERPRINT_MISMATCH.
The run checks this once more inside its own transaction, under SQLite's write lock: it
repeats the dry run there and executes the statement only if the result is the approved one
(else it rolls back and refuses), so no other writer can slip in between check and write.

It returns the rows (a list of tuples) for a statement that returns rows (SELECT, or DML
with RETURNING), else the number of rows the statement changed as the driver reports it
(-1 where the driver reports none, as for DDL). Parameters are named (``:name``, as in
``sqlalchemy.text``; write ``\\:`` for a literal colon before a word outside quotes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...core.lease import require_lease
from ...kernel.gate import protected
from ...previews.render_text import preview_of
from ...previews.structured import Preview, StructuredPreview
from ...previews.text import LINE_BUDGET, plural
from ..common.extras import require
from ..common.refusal import invalid_argument
from .database import Database, Rows, database_of, run_transaction
from .dry_run import DryRun, check_unchanged, dry_run
from .statement import parse_statement

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

__all__ = ["execute_sql"]

#: Characters of the statement, and of the parameters, a preview shows.
STATEMENT_CHARS = 6_000
PARAMETER_CHARS = 3_000

_VERBS = {
    "DELETE": "delete",
    "UPDATE": "update",
    "INSERT": "insert",
    "REPLACE": "insert",
    "UPSERT": "insert",
    "MERGE": "change",
}
#: How a structured preview colours the rows a statement would change.
_TONES = {"delete": "removed", "insert": "added", "update": "changed", "change": "changed"}
_ROW_CHANGES = {"delete": "removed", "insert": "added", "update": "changed", "change": "changed"}


def _prepare(database: Any, statement: Any, parameters: Any) -> dict[str, Any]:
    sa = require("sqlalchemy", "run SQL")
    target = database_of(database)
    parse_statement(statement, target.dialect)
    return {
        "database": target,
        "statement": statement,
        "parameters": _checked_parameters(sa, statement, parameters),
    }


def _checked_parameters(sa: Any, statement: str, parameters: Any) -> dict[str, Any] | None:
    if parameters is not None and not isinstance(parameters, dict):
        raise _invalid(
            f"parameters must be a dict of named parameters or None, not "
            f"{type(parameters).__name__} (one statement runs once; no executemany)",
            argument="parameters",
        )
    given = dict(parameters or {})
    if any(not isinstance(key, str) for key in given):
        raise _invalid("parameter names must be str", argument="parameters")
    wanted = set(sa.text(statement).compile().params)
    missing, extra = sorted(wanted - set(given)), sorted(set(given) - wanted)
    if missing or extra:
        raise _invalid(
            f"parameters do not match the statement's named parameters (:name): missing "
            f"{missing or 'none'}, unused {extra or 'none'}",
            argument="parameters",
            missing=missing,
            unused=extra,
        )
    # A copy: changing the caller's dict later cannot change what was approved.
    return given if parameters is not None else None


_invalid = invalid_argument


def _summary(database: Database, statement: str, parameters: dict[str, Any] | None) -> str:
    parsed = parse_statement(statement, database.dialect)
    return f"Run SQL {parsed.main} on {database.url}"


def _subject(database: Database, statement: str, parameters: dict[str, Any] | None) -> Any:
    return dry_run(database, parse_statement(statement, database.dialect), parameters).state()


def _preview(database: Database, statement: str, parameters: dict[str, Any] | None) -> Preview:
    parsed = parse_statement(statement, database.dialect)
    found = dry_run(database, parsed, parameters)
    verdict = _verdict(parsed.main, parsed.kind, found)
    built = _structured(database, parsed.main, statement, parameters, found, verdict)
    built.note(_binding(found))
    return preview_of(built)


def _structured(
    database: Database,
    main: str,
    statement: str,
    parameters: dict[str, Any] | None,
    found: DryRun,
    verdict: str,
) -> StructuredPreview:
    """The dry run's counts first, the statement, its parameters and database, the rows."""
    shown = StructuredPreview()
    verb = _VERBS.get(main, "change")
    if found.status == "done" and found.rowcount is not None:
        shown.count(f"rows it would {verb}", found.rowcount, _TONES[verb])
    if found.status == "done" and found.rowcount is None:
        dropped = {
            change.removeprefix("drop table ")
            for change in found.schema_changes
            if change.startswith("drop table ")
        }
        if dropped:
            shown.count("tables to drop", len(dropped), "removed")
        others = len(found.schema_changes) - len(dropped)
        if others or not dropped:
            shown.count("schema changes", others, "changed")
        for name, rows in found.tables:
            tone = "removed" if name in dropped else "changed"
            shown.count(f"rows in table {name}", rows.count, tone)
    kept = statement[:STATEMENT_CHARS]
    shown.code(kept, "sql", title=f"Statement ({plural(len(statement), 'character')})")
    shown.left_out(len(statement) - len(kept), "characters of the statement")
    if any(len(line) > LINE_BUDGET for line in kept.split("\n")):
        shown.note(
            f"Lines of the statement longer than {LINE_BUDGET} characters are cut here; the "
            "text preview shows them in full, wrapped."
        )
    if parameters:
        items, used = [], 0
        for name, value in parameters.items():
            if used >= PARAMETER_CHARS:
                break
            items.append((f":{name}", repr(value)))
            used += len(name) + len(items[-1][1])
        shown.facts(items, title="Parameters")
        shown.left_out(len(parameters) - len(items), "parameters")
    shown.facts(
        [
            ("database", database.url),
            ("dialect", database.dialect),
            ("statement", main),
            ("dry run", verdict),
        ],
        title="Database",
    )
    if found.affected is not None and found.affected.count:
        rows = found.affected
        title = f"Rows it would {verb} (first {len(rows.first)} of {rows.count:,})"
        _rows_table(shown, rows, title, _ROW_CHANGES[verb], f"rows it would {verb}")
    for name, rows in found.tables:
        title = f"Table {name} now: {plural(rows.count, 'row')}" + (
            f"; first {len(rows.first)}" if rows.first else ""
        )
        _rows_table(shown, rows, title, "same", f"rows of table {name}")
    if found.note and found.status == "done":
        shown.note(f"Note: {found.note}.")
    elif found.status != "done":
        shown.note(verdict)
    return shown


def _rows_table(shown: StructuredPreview, rows: Rows, title: str, change: str, kind: str) -> None:
    """The first rows a dry run read, each value as its ``repr`` (text quoted)."""
    table = shown.table([(column, None, False) for column in rows.columns], title=title)
    for at, row in enumerate(rows.first):
        if table is None or shown.full:
            shown.left_out(len(rows.first) - at, kind)
            return
        table.row(change, [repr(value) for value in row], kind)
    shown.left_out(rows.count - len(rows.first), kind)


def _verdict(main: str, kind: str, found: DryRun) -> str:
    if found.status == "skipped":
        return f"Dry run: none ({found.note})."
    if found.status == "stopped":
        return f"Dry run (rolled back): STOPPED ({found.note})."
    if found.status == "failed":
        return f"Dry run (rolled back): the statement FAILED: {found.note}"
    if kind == "dml":
        verb = _VERBS.get(main, "change")
        return f"Dry run (rolled back): would {verb} {plural(found.rowcount or 0, 'row')}."
    if not found.schema_changes:
        return "Dry run (rolled back): succeeded; the schema would not change."
    return "Dry run (rolled back): would " + "; ".join(found.schema_changes) + "."


def _binding(found: DryRun) -> str:
    if found.status == "done" and found.affected is not None:
        return (
            "The approval binds the statement, its parameters, and the dry run's result "
            "(row count and a digest of the affected rows): a change before the run refuses it."
        )
    if found.status == "done" and found.tables:
        return (
            "The approval binds the statement, the schema and the content of the tables it "
            "drops or changes: a change before the run refuses it."
        )
    if found.status in ("done", "failed"):
        return "The approval binds the statement, its parameters and the dry run's result."
    return "The approval binds the statement and its parameters only, not the data it touches."


@protected(
    "sql.execute",
    summary=_summary,
    preview=_preview,
    subject=_subject,
    target="database",
    prepare=_prepare,
)
def execute_sql(
    database: str | Engine | Database,
    statement: str,
    parameters: dict[str, Any] | None = None,
) -> int | list[tuple[Any, ...]]:
    """Run one SQL statement in one transaction, after a person approved it.

    Returns the rows (list of tuples) if the statement returns rows, else the row count
    the driver reports (-1 when it reports none).
    """
    require_lease("sql.execute")
    sa = require("sqlalchemy", "run SQL")
    target = database if isinstance(database, Database) else database_of(database)
    parsed = parse_statement(statement, target.dialect)
    # VACUUM, ATTACH and the like cannot run inside a transaction.
    atomic = parsed.kind in ("dml", "ddl")
    with run_transaction(target, atomic=atomic) as connection:
        if atomic and target.is_sqlite:
            # Under the write lock: the data is still what the approved dry run found.
            check_unchanged(connection, target, parsed, parameters)
        result = connection.execute(sa.text(statement), parameters or {})
        if result.returns_rows:
            return [tuple(row) for row in result]
        count = int(result.rowcount)
        if count < 0 and parsed.kind == "dml" and target.is_sqlite:
            # Python's sqlite3 counts only statements that start with INSERT/UPDATE/DELETE/
            # REPLACE; "WITH … DELETE" is asked of SQLite itself.
            count = int(connection.exec_driver_sql("SELECT changes()").scalar_one())
        return count
