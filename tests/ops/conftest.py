"""In-process approvals for the ready operations: a real store, journal and files, no kernel.

The operations' own behaviour (previews, fingerprints of targets, atomic writes, dry runs) is
tested here quickly; the card and the decision path through a real kernel are covered by
tests/kernel and by the example notebooks, which run in a real kernel under nbval.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import jupyter_approvals as ja
from jupyter_approvals.core.model import RequestInfo
from jupyter_approvals.kernel.session import KernelSession


@pytest.fixture
def jpa_project(tmp_path: Path) -> Path:
    """The operations' tests work in ``tmp_path / "work"`` (no git top level above it)."""
    work = tmp_path / "work"
    work.mkdir()
    return work


@pytest.fixture
def session(jpa_session: KernelSession) -> KernelSession:
    """A kernel session in this process whose decisions the test makes directly."""
    # The operations' tests read the clock as session.clock.
    jpa_session.clock = jpa_session.store.clock  # type: ignore[attr-defined]
    return jpa_session


@pytest.fixture
def sql_engines_closed() -> Iterator[None]:
    """Close the engines the SQL operations cached for URL strings during a test."""
    yield
    from jupyter_approvals.ops.sql.database import dispose_engines

    dispose_engines()


def ask(call: Callable[[], Any]) -> ja.ApprovalPending:
    """Make a call that must end pending; return its error (request id, fingerprint)."""
    with pytest.raises(ja.ApprovalPending) as pending:
        call()
    return pending.value


def request_of(session: KernelSession, pending: ja.ApprovalPending) -> RequestInfo:
    """The pending request behind an ApprovalPending, with its summary and preview."""
    [info] = [r for r in session.store.pending() if r.id == pending.details["request_id"]]
    return info


def decide(
    session: KernelSession, pending: ja.ApprovalPending, decision: str = "approve", reason: str = ""
) -> None:
    """A person's answer after reading the card for two seconds."""
    session.clock.advance(2)
    details = pending.details
    session.store.decide(details["request_id"], decision, details["fingerprint"], reason=reason)


def approve(session: KernelSession, call: Callable[[], Any]) -> RequestInfo:
    """Ask, read the card, approve; returns the request that was approved (not yet run)."""
    pending = ask(call)
    info = request_of(session, pending)
    decide(session, pending)
    return info


def change_after_fingerprint(session, monkeypatch, change) -> None:
    """Run ``change`` once, after the next call's fingerprint and before its card is made."""
    real_claim = session.store.claim
    done = []

    def claim_after_change(*args, **kwargs):
        if not done:
            done.append(True)
            change()
        return real_claim(*args, **kwargs)

    monkeypatch.setattr(session.store, "claim", claim_after_change)


def second_writer_during_check(
    monkeypatch: pytest.MonkeyPatch, database: Path, insert: str
) -> list[str]:
    """Make another SQLite connection try ``insert`` while an approved run rechecks its state.

    Returns the list its refusals are collected in: ``["database is locked"]`` proves the run
    held the write lock while it checked.
    """
    import sqlite3

    from jupyter_approvals.ops.sql import execute as sql

    check = sql.check_unchanged
    refused: list[str] = []

    def writer_during_check(*args: Any, **kwargs: Any) -> Any:
        other = sqlite3.connect(database, timeout=0)
        try:
            with other:
                other.execute(insert)
        except sqlite3.OperationalError as exc:
            refused.append(str(exc))
        finally:
            other.close()
        return check(*args, **kwargs)

    monkeypatch.setattr(sql, "check_unchanged", writer_during_check)
    return refused
