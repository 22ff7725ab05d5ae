"""Ready protected operations for data work, each with a preview built for its kind of change.

Every operation is a protected function (see :func:`jupyter_approvals.protected`): the first
call shows an approval card and raises ``ApprovalPending``; after a person approved exactly
that call, calling again with the same arguments runs it once. The fingerprint covers the
arguments and the current state of the target, so a target changed after the preview refuses
with APPROVAL_FINGERPRINT_MISMATCH.

Areas (imported when first used, so optional packages stay optional):

- files: ``write_file`` (file.write), ``delete_path`` (file.delete), ``move_path`` (file.move)
- tables: ``write_table`` (table.write; CSV and Parquet) — extra ``tables``
- SQL: ``execute_sql`` (sql.execute), ``to_sql`` (table.to_sql) — extra ``sql``
- shell: ``run_command`` (shell.run)
- HTTP: ``http_request`` (http.request)
- git: ``git_commit`` (git.commit), ``git_push`` (git.push)
"""

from __future__ import annotations

import importlib
from typing import Any

#: Public name -> the area module defining it.
_AREA_OF: dict[str, str] = {
    "write_file": "files",
    "delete_path": "files",
    "move_path": "files",
    "write_table": "tables",
    "execute_sql": "sql",
    "to_sql": "sql",
    "run_command": "shell",
    "http_request": "http",
    "git_commit": "git",
    "git_push": "git",
}


def __getattr__(name: str) -> Any:
    module = _AREA_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_AREA_OF])
