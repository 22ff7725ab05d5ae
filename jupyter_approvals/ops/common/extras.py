"""Optional dependencies of the ready operations: imported when used, named when missing.

The core installs without pandas, pyarrow or SQLAlchemy. An operation that needs one calls
:func:`require` first; a missing package fails with APPROVAL_MISSING_DEPENDENCY naming the
extra to install, before any request is shown and before anything runs.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from ...core.errors import ApprovalMissingDependency

#: Which extra of jupyter-approvals brings each optional module.
EXTRA_OF_MODULE: dict[str, str] = {
    "pandas": "tables",
    "pyarrow": "tables",
    "sqlalchemy": "sql",
}


def require(module: str, purpose: str, extra: str | None = None) -> ModuleType:
    """Import ``module`` or fail with APPROVAL_MISSING_DEPENDENCY saying how to install it.

    ``purpose`` completes the sentence "… is needed to …" (for example "write Parquet files").
    ``extra`` names the extra to install when the operation needs another one than the
    module's own (``to_sql`` needs pandas, and ``sql`` brings it with SQLAlchemy).
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".")[0]
        extra = extra or EXTRA_OF_MODULE.get(top, "ops")
        raise ApprovalMissingDependency(
            f"The package {top!r} is needed to {purpose} but is not installed in this kernel's "
            f"environment. Nothing ran. Install it with: pip install '{top}', or from your "
            f"clone of jupyter-approvals: pip install '/path/to/your/clone[{extra}]'",
            package=top,
            extra=extra,
            reason=str(exc),
        ) from None
