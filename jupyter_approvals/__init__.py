"""jupyter-approvals: protected operations run only after a person approved exactly them.

>>> import jupyter_approvals as ja
>>> @ja.protected("table.write", summary="Overwrite {path}")
... def save_table(df, path): ...
"""

from __future__ import annotations

from typing import Any

from ._version import __version__
from .core.errors import (
    ERROR_CODES,
    ApprovalAutoAnswered,
    ApprovalDismissed,
    ApprovalError,
    ApprovalExpired,
    ApprovalFingerprintMismatch,
    ApprovalInvalidArgument,
    ApprovalMissingDependency,
    ApprovalPending,
    ApprovalRedirected,
    ApprovalRejected,
    ApprovalRequired,
    ApprovalScopeMismatch,
    ApprovalTimedOut,
    ApprovalWithdrawn,
)
from .core.fingerprint import FileContent, fingerprint
from .core.lease import current_lease, require_lease
from .core.model import RequestInfo, Status
from .kernel.gate import ProtectedFunction, pending, protected

__all__ = [
    "ERROR_CODES",
    "ApprovalAutoAnswered",
    "ApprovalDismissed",
    "ApprovalError",
    "ApprovalExpired",
    "ApprovalFingerprintMismatch",
    "ApprovalInvalidArgument",
    "ApprovalMissingDependency",
    "ApprovalPending",
    "ApprovalRedirected",
    "ApprovalRejected",
    "ApprovalRequired",
    "ApprovalScopeMismatch",
    "ApprovalTimedOut",
    "ApprovalWithdrawn",
    "FileContent",
    "ProtectedFunction",
    "RequestInfo",
    "Status",
    "__version__",
    "current_lease",
    "fingerprint",
    "pending",
    "protected",
    "require_lease",
]


def load_ipython_extension(shell: Any) -> None:
    """``%load_ext jupyter_approvals``: serve approvals in this kernel, add ``%approvals``."""
    from .kernel.magics import load_ipython_extension as load

    load(shell)


def unload_ipython_extension(shell: Any) -> None:
    """``%unload_ext jupyter_approvals``: approvals stay in force."""


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    """Where jupyter_server finds the server extension (enabled by jupyter-config/)."""
    from .server.app import ApprovalsServer

    return [{"module": "jupyter_approvals.server.app", "app": ApprovalsServer}]


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """Where JupyterLab finds the prebuilt sidebar (``jupyter labextension develop``)."""
    return [{"src": "labextension", "dest": "jupyter-approvals"}]
