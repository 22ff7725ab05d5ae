"""Shared fixtures: a project directory, a state dir outside it, and a real kernel."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jupyter_approvals.testing import KernelFrontend


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project directory that is a git top-level (a ``.git`` directory marks it)."""
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    return root


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    """The journal's state root, outside the project."""
    return tmp_path / "state"


@pytest.fixture
def kernel_env(state_dir: Path, tmp_path: Path) -> dict[str, str]:
    """Environment for a test kernel: its own state dir and IPython dir."""
    ipython_dir = tmp_path / "ipython"
    ipython_dir.mkdir()
    return {"JUPYTER_APPROVALS_STATE_DIR": str(state_dir), "IPYTHONDIR": str(ipython_dir)}


@pytest.fixture
def frontend(project: Path, kernel_env: dict[str, str]):
    """A real ipykernel in the project, driven from outside like a browser."""
    with KernelFrontend.start(cwd=project, env=kernel_env) as fe:
        yield fe


def journal_lines(state_dir: Path) -> list[dict]:
    """Every line of every journal under ``state_dir``, parsed."""
    lines = []
    for path in sorted((state_dir / "decisions").glob("*.jsonl")):
        lines.extend(json.loads(line) for line in path.read_text().splitlines())
    return lines
