"""Copied by ``run_upstream.py`` into an upstream suite as ``tests/test_zz_approvals_probe.py``.

It checks, from inside the upstream suite and with its own fixtures, that the server of a test
loads ``jupyter_approvals`` exactly when the run is the one with the extension
(``APPROVALS_EXPECT_EXTENSION=1``), whichever way the test builds its server: the default
``jp_server_config``, a test's own ``jp_server_config`` naming other extensions, or a ``Config``
passed straight to ``jp_configurable_serverapp``. Each test prints the extensions it saw loaded.
(Not collected by this repository's own test run: the file name has no ``test_`` prefix.)
"""

from __future__ import annotations

import os

import pytest
from traitlets.config import Config

EXTENSION = "jupyter_approvals"
EXPECTED = os.environ.get("APPROVALS_EXPECT_EXTENSION") == "1"


def loaded_extensions(serverapp) -> list[str]:
    """The extensions whose ExtensionApp, or load function, ran in ``serverapp``."""
    manager = serverapp.extension_manager
    settings = serverapp.web_app.settings
    names = []
    for name, package in manager.extensions.items():
        apps = [point.app for point in package.extension_points.values() if point.app]
        if (apps and all(settings.get(app.name) is app for app in apps)) or (
            not apps and manager.linked_extensions.get(name)
        ):
            names.append(name)
    return sorted(names)


def check(serverapp) -> None:
    names = loaded_extensions(serverapp)
    print(f"loaded extensions: {names}")
    assert (EXTENSION in names) is EXPECTED, names
    assert (EXTENSION in serverapp.jpserver_extensions) is EXPECTED


def test_default_server_config(jp_serverapp):
    check(jp_serverapp)


class TestOwnServerConfig:
    @pytest.fixture
    def jp_server_config(self):
        return Config({"ServerApp": {"jpserver_extensions": {"jupyter_server_terminals": False}}})

    def test_own_server_config(self, jp_serverapp):
        check(jp_serverapp)
        assert jp_serverapp.jpserver_extensions.get("jupyter_server_terminals") is False


def test_config_passed_to_factory(jp_configurable_serverapp):
    config = Config({"ServerApp": {"jpserver_extensions": {}}, "ContentsManager": {}})
    check(jp_configurable_serverapp(config=config))


async def test_extension_answers(jp_serverapp, jp_fetch):
    """The server answers a plain API request (and, with the extension, the extension's)."""
    response = await jp_fetch("api", "status")
    assert response.code == 200
    if EXPECTED:
        response = await jp_fetch("jupyter-approvals", "api", "pending")
        assert response.code == 200
