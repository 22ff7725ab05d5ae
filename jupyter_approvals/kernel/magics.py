"""``%load_ext jupyter_approvals`` and the ``%approvals`` line magic."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..core.model import iso_utc
from .session import KernelSession


def home_relative(path: Path) -> str:
    """``path`` with the home directory written ``~``: what a person reads, and what a saved
    notebook keeps without naming this machine's user."""
    try:
        home = Path.home()
    except (RuntimeError, KeyError):
        return str(path)
    if home != Path(home.anchor) and path.is_relative_to(home):
        return str(Path("~") / path.relative_to(home))
    return str(path)


def approvals_report(session: KernelSession, recent: int = 10) -> str:
    """What ``%approvals`` prints: pending, recent outcomes, the journal and the limits."""
    lines = []
    pending = session.store.pending()
    lines.append(f"Pending approvals in this kernel: {len(pending)}")
    for info in pending:
        lines.append(
            f"  {info.id}  {info.action}  {info.summary}  (answer by {iso_utc(info.expires_at)})"
        )
    ended = session.store.recent(recent)
    lines.append(f"Recent outcomes (newest first): {len(ended)}")
    for info in ended:
        why = f" - {info.reason}" if info.reason else ""
        lines.append(f"  {info.id}  {info.action}  {info.status.value}{why}")
    journal = session.journal
    lines.append(f"Journal: {home_relative(journal.path)}")
    if journal.last_append_ok is False:
        lines.append(f"  NOT WRITABLE: {journal.last_error} ({journal.failures} failed appends)")
    limits = session.limits
    lines.append(
        "Limits: requests time out after "
        f"{limits.request_timeout_s:g} s, approvals expire {limits.approval_ttl_s:g} s after "
        f"the decision, answers faster than {limits.min_answer_s:g} s do not count, at most "
        f"{limits.max_pending} pending."
    )
    for ignored in session.ignored_settings:
        lines.append(
            f"  ignored setting {ignored.name}={ignored.requested:g}: {ignored.why} "
            f"(in force: {ignored.applied:g})"
        )
    return "\n".join(lines)


def load_ipython_extension(shell: Any) -> None:
    """Start serving approvals in this kernel and register ``%approvals``."""
    KernelSession.current()

    def approvals(line: str = "") -> None:
        """Show pending approvals, recent outcomes, where the journal is, and the limits."""
        print(approvals_report(KernelSession.current()))

    shell.register_magic_function(approvals, magic_kind="line", magic_name="approvals")


def unload_ipython_extension(shell: Any) -> None:
    """Nothing to undo: pending requests stay until they end (unloading approves nothing)."""
