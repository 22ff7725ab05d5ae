"""``jupyter approvals doctor``: is this installation able to keep its promises?

:func:`run_checks` returns a :class:`DoctorReport`; ``report.to_dict()`` is the JSON of
``GET doctor`` (docs/protocol.md 6.4). The checks, each a small function:

- ``server_extension``: :func:`check_server_extension`
- ``labextension``: :func:`check_labextension`
- ``widgets``: :func:`check_widgets`
- ``journal``: :func:`check_journal`
- ``limits``: :func:`check_limits` over :func:`effective_limits`
- ``sandbox``: :func:`check_sandbox`
- ``hub_kernel_token``: :func:`check_hub_kernel_token` (on JupyterHub)

``environ`` governs jupyter-approvals' own variables (``JUPYTER_APPROVALS_*``). Jupyter's and
IPython's search paths (``JUPYTER_CONFIG_PATH``, ``JUPYTER_PATH``, ``IPYTHONDIR``,
``XDG_STATE_HOME`` for the default state dir, ...) come from the process environment, as they
do for Jupyter and IPython themselves.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from .._version import __version__
from ..core.project import project_root_for
from .hub import check_hub_kernel_token
from .install import check_labextension, check_server_extension, check_widgets
from .journal import check_journal
from .limits import EffectiveLimits, check_limits, effective_limits
from .report import Check, DoctorReport, IgnoredConfig
from .sandbox import check_sandbox

__all__ = [
    "NOT_GUARANTEED",
    "Check",
    "DoctorReport",
    "EffectiveLimits",
    "IgnoredConfig",
    "check_hub_kernel_token",
    "check_journal",
    "check_labextension",
    "check_limits",
    "check_server_extension",
    "check_widgets",
    "effective_limits",
    "run_checks",
]

#: What jupyter-approvals does not guarantee, in short (docs/security.md has the full text).
NOT_GUARANTEED: tuple[str, ...] = (
    "It is not a sandbox: code in the kernel can do anything you can; only calls through "
    "protected functions, and writers that call require_lease, are checked.",
    "Anything holding the kernel's connection key can send a decision the kernel takes for a "
    "frontend's.",
    "It is no boundary against programs running as you outside Jupyter: they can edit your "
    "files, the journal and your configuration.",
    "A change to the target after the last fingerprint check, while the function runs, is not "
    "seen; FileContent binds a file's content, not its identity.",
    "The mutation lease is a context variable: deliberate code can set it itself.",
    "The journal is a record, not a proof: anyone running as you can edit it.",
    "The preview is written by the protected function's author; a misleading preview misleads.",
    "The username and session on the card are whatever the client claims.",
    "The card's countdown uses the browser's clock and can be off by the clock skew.",
    "The one-second answer floor stops reflexive and scripted answers; it does not prove a "
    "person read the card.",
)


def _guarded(name: str, check: Callable[[], Check]) -> Check:
    """Run one check; a check that breaks is reported as failed, never raised."""
    try:
        return check()
    except Exception as exc:
        return Check(name, False, f"the check itself failed: {type(exc).__name__}: {exc}")


def run_checks(
    project_dir: Path | None = None, environ: Mapping[str, str] = os.environ
) -> DoctorReport:
    """Run every check for the project of ``project_dir`` (default: the working directory)."""
    directory = Path.cwd() if project_dir is None else Path(project_dir)
    try:
        effective = effective_limits(environ=environ)
    except Exception as exc:
        from ..core import policy

        effective = EffectiveLimits(policy.Limits(), errors=[f"{type(exc).__name__}: {exc}"])
    checks = [
        _guarded("server_extension", check_server_extension),
        _guarded("labextension", check_labextension),
        _guarded("widgets", check_widgets),
        _guarded("journal", lambda: check_journal(directory, environ)),
        _guarded("limits", lambda: check_limits(effective)),
        _guarded("sandbox", check_sandbox),
        _guarded("hub_kernel_token", lambda: check_hub_kernel_token(os.environ)),
    ]
    return DoctorReport(
        checks=checks,
        limits=effective.limits,
        ignored_settings=list(effective.ignored),
        not_guaranteed=list(NOT_GUARANTEED),
        version=__version__,
        project_root=str(project_root_for(directory)),
    )
