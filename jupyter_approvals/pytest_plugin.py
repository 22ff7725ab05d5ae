"""pytest fixtures for testing protected functions, in this project and in yours.

Load it explicitly, in a ``conftest.py``::

    pytest_plugins = ["jupyter_approvals.pytest_plugin"]

Fixtures (all prefixed ``jpa_``):

- ``jpa_project``: a project directory (a git top level, as jupyter-approvals finds projects);
- ``jpa_state_dir``: a state directory for the decision journal, outside the project;
- ``jpa_session``: an approvals session in the test's own process, working in the project,
  with a manual clock; nothing displays cards there, so the test decides requests itself with
  ``jpa_approve`` / ``jpa_reject`` (no frontend check: this is for testing your functions, not
  the boundary);
- ``jpa_approve`` / ``jpa_reject``: make a call that must ask, let a person's reading time
  pass on the session's clock, and decide it; returns the request;
- ``jpa_kernel_env`` and ``jpa_frontend``: a real ipykernel in the project, driven from
  outside through :class:`jupyter_approvals.testing.KernelFrontend`, as a browser would (the
  frontend check applies there).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from .core.errors import ApprovalPending
from .core.model import RequestInfo
from .core.policy import ManualClock
from .core.project import STATE_DIR_ENV, make_git_top_level
from .kernel.session import KernelSession
from .testing import KernelFrontend

#: Seconds a decision made by ``jpa_approve`` / ``jpa_reject`` comes after the request: past
#: the one-second reading floor.
READING_TIME_S = 2.0

Decide = Callable[[Callable[[], Any]], RequestInfo]


@pytest.fixture
def jpa_project(tmp_path: Path) -> Path:
    """A project directory that is a git top level (a ``.git`` directory marks it)."""
    root = tmp_path / "project"
    make_git_top_level(root)
    return root


@pytest.fixture
def jpa_state_dir(tmp_path: Path) -> Path:
    """The journal's state directory, outside the project."""
    return tmp_path / "state"


@pytest.fixture
def jpa_session(
    jpa_project: Path, jpa_state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[KernelSession]:
    """This process's approvals session, in ``jpa_project``, with a manual clock
    (``jpa_session.store.clock.advance(seconds)``); decided by the test, never by a frontend."""
    monkeypatch.setenv(STATE_DIR_ENV, str(jpa_state_dir))
    monkeypatch.chdir(jpa_project)
    session = KernelSession.install(KernelSession(None, clock=ManualClock(), cwd=jpa_project))
    # No frontend exists in this process: the test's decisions are applied directly.
    session.store.decision_guard = None
    yield session
    session.close()


def _decide(session: KernelSession, decision: str, reason: str = "") -> Decide:
    def decide(call: Callable[[], Any]) -> RequestInfo:
        with pytest.raises(ApprovalPending) as pending:
            call()
        details = pending.value.details
        info = session.store.get(details["request_id"])
        assert info is not None, "the pending request is not in this session's store"
        clock = session.store.clock
        assert isinstance(clock, ManualClock), "jpa_approve needs the jpa_session's clock"
        clock.advance(READING_TIME_S)
        session.store.decide(info.id, decision, details["fingerprint"], reason=reason)
        return info

    return decide


@pytest.fixture
def jpa_approve(jpa_session: KernelSession) -> Decide:
    """``jpa_approve(lambda: fn(...))``: the call asks, a person approves; returns the request.

    Call ``fn(...)`` again with the same arguments to run it once.
    """
    return _decide(jpa_session, "approve")


@pytest.fixture
def jpa_reject(jpa_session: KernelSession) -> Decide:
    """``jpa_reject(lambda: fn(...))``: the call asks, a person rejects; returns the request."""
    return _decide(jpa_session, "reject", reason="rejected by the test")


@pytest.fixture
def jpa_kernel_env(jpa_state_dir: Path, tmp_path: Path) -> dict[str, str]:
    """Environment of a test kernel: its own state directory and IPython directory."""
    ipython_dir = tmp_path / "ipython"
    ipython_dir.mkdir()
    return {STATE_DIR_ENV: str(jpa_state_dir), "IPYTHONDIR": str(ipython_dir)}


@pytest.fixture
def jpa_frontend(jpa_project: Path, jpa_kernel_env: dict[str, str]) -> Iterator[KernelFrontend]:
    """A real ipykernel in the project, driven from outside like a browser."""
    with KernelFrontend.start(cwd=jpa_project, env=jpa_kernel_env) as frontend:
        yield frontend
