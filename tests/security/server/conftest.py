"""A real jupyter_server with the extension, for attacks over REST and kernel websockets.

The fixtures are the server tests' own (tests/server/conftest.py): pytest-jupyter's server,
kernels started through the session manager, and the server's state directory.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

# pytest-jupyter's fixtures and hooks, for this directory only (as in tests/server).
from pytest_jupyter.jupyter_core import *  # noqa: F403
from pytest_jupyter.jupyter_server import *  # noqa: F403

from jupyter_approvals.core.journal.reader import read_entries
from jupyter_approvals.core.project import journal_path
from tests.server.agent_client import add_agent
from tests.server.conftest import (  # noqa: F401
    _state_dir,
    jp_server_config,
    kernels,
    sandboxed_kernels,
    sandboxed_kernelspec,
    state_dir,
)

API = "jupyter-approvals/api"


@pytest.fixture
def agent_token(state_dir: Path) -> str:  # noqa: F811 - the imported fixture, used here
    """The token of an agent registered as ``bot``."""
    return add_agent(state_dir, "bot")


def journal_of(root: str | Path, state: Path) -> list[dict[str, Any]]:
    """Every line of the server root's project journal, oldest first."""
    path = journal_path(Path(root).resolve(), state)
    return list(reversed(read_entries(path, limit=200).entries))


def decision_body(fingerprint: str, decision: str = "approve", **extra: Any) -> str:
    return json.dumps({"decision": decision, "fingerprint": fingerprint, **extra})
