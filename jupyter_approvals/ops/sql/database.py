"""The database the SQL operations work on: engines, redacted URLs, transactions, row digests.

:class:`Database` is what the operations' ``prepare`` turns the caller's URL or Engine into.
It is always rebuilt from the engine, and the fingerprint sees it only as its URL with the
password (and secret-looking query values) hidden: credentials never enter a fingerprint, a
preview or the journal. Engines made from URL strings are made once per URL and kept, so an
in-memory SQLite database keeps its content between calls; :func:`dispose_engines` (also run
at exit) closes them. Engines passed in by the caller stay the caller's.

SQLite transactions are opened by SQL rather than left to the driver: Python's sqlite3
module starts a transaction only before INSERT/UPDATE/DELETE, so DDL would otherwise commit at
once. Dry runs use a ``SAVEPOINT`` (DDL is transactional inside it too; see :mod:`.dry_run`);
real runs use ``BEGIN IMMEDIATE``, which takes the write lock at once, so the state checked at
the start of the run is the state the statement changes: no other writer can commit in
between. Engines
that open a transaction themselves on SQLAlchemy's begin (a ``"begin"`` event emitting
``BEGIN``, as SQLAlchemy's sqlite docs recommend, or Python 3.12's ``autocommit=False``) get
that empty transaction set aside for the run and given back afterwards.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...core.errors import ApprovalInvalidArgument, ApprovalMissingDependency
from ...core.fingerprint import register
from ...previews.redact import is_secret_query_key
from ..common.extras import require

if TYPE_CHECKING:
    from sqlalchemy.engine import URL, Connection, CursorResult, Engine


#: Rows a preview shows of a table or of the rows a statement affects.
FIRST_ROWS = 5

_engines: dict[str, Engine] = {}
_engines_lock = threading.Lock()


class Database:
    """The engine an operation uses and its URL with credentials hidden (what is fingerprinted)."""

    __slots__ = ("_memo", "dialect", "engine", "url")

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        #: The URL as shown and fingerprinted: password and secret-looking query values hidden.
        self.url = redacted_url(engine.url)
        #: The SQLAlchemy dialect name ("sqlite", "postgresql", …).
        self.dialect: str = engine.dialect.name
        # Results of dry runs for this one call, shared by its subject and preview.
        self._memo: dict[Any, Any] = {}

    def __repr__(self) -> str:
        return f"Database({self.url!r})"

    @property
    def is_sqlite(self) -> bool:
        """True for SQLite, where dry runs are made."""
        return self.dialect == "sqlite"


def _as_data(value: Database) -> dict[str, str]:
    # A database is fingerprinted as its redacted URL: never the engine, never a password.
    return {"database": value.url}


register(Database, _as_data)


def redacted_url(url: URL) -> str:
    """``url`` as text with the password and secret-looking query values replaced by ``***``."""
    query = {
        key: ("***" if is_secret_query_key(key) else value) for key, value in url.query.items()
    }
    text = str(url.set(query=query).render_as_string(hide_password=True))
    # The URL renderer percent-encodes query values; show the mask as the password's "***".
    return text.replace("=%2A%2A%2A", "=***")


def database_of(value: object, argument: str = "database") -> Database:
    """The :class:`Database` for a URL string, a SQLAlchemy URL, an Engine or a Database."""
    sa = require("sqlalchemy", "run SQL")
    if isinstance(value, Database):
        value = value.engine  # rebuilt: a caller-made Database is not trusted
    if isinstance(value, sa.engine.Engine):
        return Database(value)
    if isinstance(value, str | sa.engine.URL):
        return Database(engine_for(value, argument))
    raise ApprovalInvalidArgument(
        f"{argument} must be a database URL (str) or a SQLAlchemy Engine, not "
        f"{type(value).__name__}. Nothing was asked or run.",
        argument=argument,
    )


def engine_for(url: str | URL, argument: str = "database") -> Engine:
    """The engine for ``url``, made once per URL and kept until :func:`dispose_engines`."""
    sa = require("sqlalchemy", "run SQL")
    try:
        parsed = sa.engine.make_url(url)
    except sa.exc.ArgumentError:
        raise ApprovalInvalidArgument(
            f"{argument} is not a valid database URL (not shown, it may hold a password); "
            "expected for example 'sqlite:///path/to/file.db'. Nothing was asked or run.",
            argument=argument,
        ) from None
    key = parsed.render_as_string(hide_password=False)
    with _engines_lock:
        engine = _engines.get(key)
        if engine is None:
            engine = _create(sa, parsed, argument)
            _engines[key] = engine
    return engine


def _create(sa: Any, url: URL, argument: str) -> Engine:
    shown = redacted_url(url)
    try:
        return sa.create_engine(url)  # type: ignore[no-any-return]
    except ImportError as exc:
        raise ApprovalMissingDependency(
            f"The database driver for {shown} is not installed ({exc}). Nothing was asked or "
            "run. Install the driver package for this database in the kernel's environment.",
            package=getattr(exc, "name", None),
            extra=None,
            reason=str(exc),
        ) from None
    except sa.exc.SQLAlchemyError as exc:
        raise ApprovalInvalidArgument(
            f"{argument} {shown} cannot be used: {type(exc).__name__}. Nothing was asked or run.",
            argument=argument,
        ) from None


def dispose_engines() -> None:
    """Close the engines made from URL strings (their pooled connections); run at exit too."""
    with _engines_lock:
        engines = list(_engines.values())
        _engines.clear()
    for engine in engines:
        engine.dispose()


atexit.register(dispose_engines)


@contextlib.contextmanager
def run_transaction(database: Database, atomic: bool = True) -> Iterator[Connection]:
    """A connection in one transaction: committed on a clean exit, rolled back on an error.

    On SQLite, ``atomic`` opens it with ``BEGIN IMMEDIATE``: DDL is inside the transaction
    too, and the write lock is held from the start, so what the run checks first cannot
    change before it writes (statements such as VACUUM that cannot run in a transaction
    pass ``atomic=False``).
    """
    if not database.is_sqlite:
        with database.engine.begin() as connection:
            yield connection
        return
    sa = require("sqlalchemy", "run SQL")
    with database.engine.connect() as connection:
        # SQLAlchemy's begin first, so the engine's own "begin" hooks run as they always do.
        connection.begin()
        with _driver_transaction_set_aside(connection):
            if not atomic:
                yield connection
            else:
                connection.exec_driver_sql("BEGIN IMMEDIATE")
                try:
                    yield connection
                except BaseException:
                    with contextlib.suppress(sa.exc.SQLAlchemyError):
                        # Fails only if SQLite already rolled the transaction back.
                        connection.exec_driver_sql("ROLLBACK")
                    raise
                connection.exec_driver_sql("COMMIT")
        # Ends SQLAlchemy's own transaction and the driver's empty one, if it had one.
        connection.commit()


@contextlib.contextmanager
def _driver_transaction_set_aside(connection: Connection) -> Iterator[None]:
    """Run the body outside the (empty) transaction the engine may have opened at begin.

    Some engines open one on SQLAlchemy's begin: a "begin" event emitting BEGIN, as
    SQLAlchemy's sqlite docs recommend, or Python 3.12's ``autocommit=False``, which keeps
    one open at all times. Nothing has run in it yet: it is ended, so the run's own
    transaction can take the write lock from the start (and VACUUM can run outside one).
    Afterwards an empty one is opened again, because the driver's ``commit()`` and
    ``rollback()`` under ``autocommit=False`` fail when there is none to end.
    """
    had_one = driver_in_transaction(connection)
    if had_one:
        connection.exec_driver_sql("ROLLBACK")
    try:
        yield
    finally:
        if had_one and not driver_in_transaction(connection):
            connection.exec_driver_sql("BEGIN")


def driver_in_transaction(connection: Connection) -> bool:
    """True if the DBAPI connection under ``connection`` has a transaction open."""
    return bool(getattr(connection.connection.dbapi_connection, "in_transaction", False))


@dataclass(frozen=True)
class Rows:
    """Rows read in order: count, digest, column names and the first few rows."""

    count: int
    digest: str
    columns: tuple[str, ...]
    first: tuple[tuple[Any, ...], ...]

    def state(self) -> dict[str, Any]:
        """What a fingerprint binds: the count and the digest."""
        return {"rows": self.count, "digest": self.digest}


def read_rows(result: CursorResult[Any], check: Callable[[], None] | None = None) -> Rows:
    """Consume ``result``: sha256 over the ``repr`` of each row in order, and the first rows.

    ``repr`` of the values a driver returns (int, float, str, bytes, None, Decimal, dates)
    is exact and stable; a value without a stable repr only makes fingerprints differ (the
    run is refused), never match wrongly.
    """
    hasher = hashlib.sha256()
    first: list[tuple[Any, ...]] = []
    count = 0
    for row in result:
        values = tuple(row)
        hasher.update(repr(values).encode("utf-8", "backslashreplace") + b"\n")
        if count < FIRST_ROWS:
            first.append(values)
        count += 1
        if check is not None and count % 1000 == 0:
            check()
    columns = tuple(map(str, result.keys()))
    return Rows(count, f"sha256:{hasher.hexdigest()}", columns, tuple(first))


def table_rows(
    connection: Connection, table_sql: str, check: Callable[[], None] | None = None
) -> Rows:
    """All rows of a table named by SQL text (already quoted as needed)."""
    sa = require("sqlalchemy", "run SQL")
    return read_rows(connection.execute(sa.text(f"SELECT * FROM {table_sql}")), check)


def quoted_table(connection: Connection, name: str) -> str:
    """``name`` quoted as an identifier for this connection's dialect."""
    return str(connection.dialect.identifier_preparer.quote_identifier(name))


def sqlite_schema(connection: Connection) -> dict[tuple[str, str], str]:
    """SQLite's schema: (type, name) -> the SQL that created it."""
    result = connection.exec_driver_sql(
        "SELECT type, name, coalesce(sql, '') FROM sqlite_master ORDER BY type, name"
    )
    return {(str(kind), str(name)): str(sql) for kind, name, sql in result}


def error_text(exc: BaseException) -> str:
    """The database's own message for a failed statement (deterministic, no SQL echo)."""
    original = getattr(exc, "orig", None)
    return f"{type(original or exc).__name__}: {original or exc}"
