"""SQL: ``execute_sql`` (sql.execute) and ``to_sql`` (table.to_sql); extra ``sql``.

:mod:`.execute` and :mod:`.frame` are the operations, :mod:`.statement` reads what a statement
does, :mod:`.dry_run` runs it in a rolled-back savepoint for the preview, and
:mod:`.database` holds the engines and transactions; this package is their public home.
"""

from __future__ import annotations

from .database import Database, dispose_engines
from .execute import execute_sql
from .frame import to_sql

__all__ = ["Database", "dispose_engines", "execute_sql", "to_sql"]
