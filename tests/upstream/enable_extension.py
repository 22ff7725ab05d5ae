"""Pytest plugin: every Jupyter server a test suite starts loads ``jupyter_approvals``.

Loaded with ``-p enable_extension`` (this folder on ``PYTHONPATH``) into another project's test
suite, jupyter_server's or jupyter_server_ydoc's, by ``run_upstream.py``.

How it reaches every server: a real install enables the extension with a
``jupyter_server_config.d`` file, which ``ServerApp.find_server_extensions`` merges into
``ServerApp.jpserver_extensions``. pytest-jupyter's ``jp_environ`` points the config paths at
empty temporary folders, and a test may build its server from its own ``Config`` (passed to
``jp_configurable_serverapp(config=...)``, or to ``ServerApp`` directly), so overriding the
``jp_server_config`` fixture would miss some servers. Instead ``ServerApp.init_server_extensions``
(the step right after the config files are merged, before any extension is linked) is wrapped to
add ``{"jupyter_approvals": True}`` to what the test configured. A test that names
``jupyter_approvals`` itself keeps its own value.

The extension's state (journals, agent registry) goes to a temporary folder for the session,
``JUPYTER_APPROVALS_STATE_DIR``, removed at the end.
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
from collections.abc import Callable
from typing import Any

import pytest

EXTENSION = "jupyter_approvals"
STATE_DIR_ENV = "JUPYTER_APPROVALS_STATE_DIR"

_state: dict[str, Any] = {}


def _with_extension(original: Callable[[Any], None]) -> Callable[[Any], None]:
    @functools.wraps(original)
    def init_server_extensions(self: Any) -> None:
        if EXTENSION not in self.jpserver_extensions:
            # As find_server_extensions does with an extension enabled by a config file: in
            # the config too, or the next update_config (an extension's link) drops it again.
            self.config.ServerApp.jpserver_extensions.update({EXTENSION: True})
            self.jpserver_extensions.update({EXTENSION: True})
        original(self)

    init_server_extensions.__approvals_wrapped__ = True  # type: ignore[attr-defined]
    return init_server_extensions


def pytest_configure(config: pytest.Config) -> None:
    from jupyter_server.serverapp import ServerApp

    original = ServerApp.init_server_extensions
    if getattr(original, "__approvals_wrapped__", False):
        return
    _state["original"] = original
    ServerApp.init_server_extensions = _with_extension(original)  # type: ignore[method-assign, assignment]
    if not os.environ.get(STATE_DIR_ENV):
        state_dir = tempfile.mkdtemp(prefix="approvals-upstream-state-")
        os.environ[STATE_DIR_ENV] = state_dir
        _state["state_dir"] = state_dir


def pytest_unconfigure(config: pytest.Config) -> None:
    from jupyter_server.serverapp import ServerApp

    if "original" in _state:
        ServerApp.init_server_extensions = _state.pop("original")  # type: ignore[method-assign]
    state_dir = _state.pop("state_dir", None)
    if state_dir is not None:
        os.environ.pop(STATE_DIR_ENV, None)
        shutil.rmtree(state_dir, ignore_errors=True)


def pytest_report_header(config: pytest.Config) -> str:
    return (
        f"jupyter-approvals: every ServerApp loads {EXTENSION} "
        f"(state in {os.environ.get(STATE_DIR_ENV)})"
    )
