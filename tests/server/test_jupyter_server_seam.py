"""Every upstream name the agent gate relies on still exists in the installed versions.

An upstream rename raises nowhere: a handler the gate no longer recognises drops off the agents'
list (every agent locked out) or out of a path check. These tests read each name of
:mod:`jupyter_approvals.server.gate.jupyter_server_seam` in every virtualenv the suite has:
the main one (newest jupyter_server and JupyterLab), the agent one (jupyter-collaboration) and
the oldest supported versions.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from jupyter_approvals.server.gate import jupyter_server_seam as seam
from jupyter_approvals.server.gate.routes import AGENT_HANDLERS
from tests.e2e.lab import venv_python

REPORT = (
    "import json; from jupyter_approvals.server.gate import jupyter_server_seam as s; "
    "print(json.dumps({'missing': list(s.missing()), "
    "'unchecked': [n for n in s.HANDLERS if s._class(n) is None]}))"
)


def seam_report(python: str) -> dict[str, list[str]]:
    """What the seam reports in the virtualenv of ``python``."""
    done = subprocess.run(
        [python, "-c", REPORT], capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_every_name_exists_in_the_newest_jupyter_server_and_jupyterlab():
    # Given this virtualenv (the newest jupyter_server and JupyterLab)
    # When the seam's names are looked up
    missing = seam.missing()
    # Then every one exists
    assert missing == ()


@pytest.mark.venvs
@pytest.mark.parametrize(
    ("variable", "why", "needs"),
    [
        ("AGENT_PYTHON", "the room handlers' names", "jupyter-collaboration"),
        ("OLDEST_PYTHON", "the oldest supported versions' names", "jupyter_server"),
    ],
)
def test_every_name_exists_in_the_other_virtualenvs(variable, why, needs):
    # Given another virtualenv of the suite
    python = venv_python(variable, why, needs)
    # When the seam's names are looked up there
    report = seam_report(python)
    # Then every one exists
    assert report["missing"] == []
    if variable == "AGENT_PYTHON":
        # and the collaboration rooms' handlers were really looked up, not skipped
        assert report["unchecked"] == []


def test_a_renamed_handler_is_reported(monkeypatch):
    # Given a handler name upstream does not have (as after a rename)
    renamed = "jupyter_server.services.contents.handlers.ContentsHandlerV2"
    monkeypatch.setattr(seam, "HANDLERS", (*seam.HANDLERS, renamed))
    seam.missing.cache_clear()
    # When the seam is checked
    found = seam.missing()
    seam.missing.cache_clear()
    # Then that name is reported
    assert found == (renamed,)


def test_a_renamed_attribute_is_reported(monkeypatch):
    # Given an attribute the class does not have, and a class its module does not have
    gone = ("jupyter_server.serverapp.ServerApp", "kernel_websocket_connection_klass")
    no_class = ("jupyter_server.serverapp.ServerApplication", "authorizer")
    monkeypatch.setattr(seam, "ATTRIBUTES", (*seam.ATTRIBUTES, gone, no_class))
    seam.missing.cache_clear()
    # When the seam is checked
    found = seam.missing()
    seam.missing.cache_clear()
    # Then both are reported
    assert found == (
        "jupyter_server.serverapp.ServerApp.kernel_websocket_connection_klass",
        "jupyter_server.serverapp.ServerApplication",
    )


def test_the_agents_routes_name_only_seam_handlers():
    # Given the routes agents may reach
    # Then each is a handler of the seam, so each is checked above
    assert set(AGENT_HANDLERS) <= set(seam.HANDLERS)
