"""Shared fixtures: a project directory, a state dir outside it, and a real kernel."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jupyter_approvals.testing import KernelFrontend

pytest_plugins = ["jupyter_approvals.pytest_plugin"]


@pytest.fixture
def project(jpa_project: Path) -> Path:
    """A project directory that is a git top-level (a ``.git`` directory marks it)."""
    return jpa_project


@pytest.fixture
def state_dir(jpa_state_dir: Path) -> Path:
    """The journal's state root, outside the project."""
    return jpa_state_dir


@pytest.fixture
def kernel_env(jpa_kernel_env: dict[str, str]) -> dict[str, str]:
    """Environment for a test kernel: its own state dir and IPython dir."""
    return jpa_kernel_env


@pytest.fixture
def frontend(jpa_frontend: KernelFrontend) -> KernelFrontend:
    """A real ipykernel in the project, driven from outside like a browser."""
    return jpa_frontend


#: Fixtures that start a real kernel process: tests using them are marked ``kernel``.
_KERNEL_FIXTURES = frozenset({"frontend", "jpa_frontend", "kernels", "sandboxed_kernels"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that starts a real kernel, so ``-m "not kernel and not e2e"`` is the
    fast part (seconds)."""
    for item in items:
        if _KERNEL_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.kernel)


def journal_lines(state_dir: Path) -> list[dict]:
    """Every line of every journal under ``state_dir``, parsed."""
    lines = []
    for path in sorted((state_dir / "decisions").glob("*.jsonl")):
        lines.extend(json.loads(line) for line in path.read_text().splitlines())
    return lines
