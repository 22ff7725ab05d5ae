"""The doctor's check of the kernels' journals, made inside the running server
(``GET doctor``): whether every kernel writes its journal where this server reads it."""

from __future__ import annotations

from typing import Any

from ...doctor.report import Check


def kernel_journals_check(problems: list[dict[str, Any]]) -> Check:
    """``kernel_journals`` from the ``journal_errors`` of the server's listing: fails for a
    kernel whose journal is elsewhere (the History tab would not show it) or failing."""
    elsewhere = [e for e in problems if e.get("elsewhere")]
    fixes = []
    if elsewhere:
        fixes.append(
            "Do not set JUPYTER_APPROVALS_STATE_DIR in a notebook; set it for the server "
            "and its kernels alike, then restart those kernels."
        )
    if len(elsewhere) < len(problems):
        fixes.append(
            "Free space on the state directory's disk (or lift the file size limit) so "
            "the failing journal can be written again; decisions are not changed by it."
        )
    return Check(
        "kernel_journals",
        not problems,
        "; ".join(f"kernel {e['kernel_id'][:8]}: {e['error']}" for e in problems)
        if problems
        else "every kernel known to the server writes its journal where this server reads it",
        fix=" ".join(fixes) or None,
        info={
            "elsewhere": [e["elsewhere"] for e in elsewhere],
            "failing": [e["kernel_id"] for e in problems if not e.get("elsewhere")],
        },
    )
