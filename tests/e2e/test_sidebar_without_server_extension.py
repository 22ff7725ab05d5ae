"""The Approvals sidebar on a Jupyter server that does not run the server extension.

The labextension is installed (it is a frontend file), but the server extension is disabled on
this server's command line: the sidebar cannot list or decide anything, and says how to fix it.
A module of its own, because it needs a server of its own.
"""

from __future__ import annotations

import importlib.util
import urllib.error
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.lab import LabServer, Sidebar, save_screenshot

pytestmark = pytest.mark.e2e

expect.set_options(timeout=15_000)

#: Enabled in the venv's etc/jupyter; the command line wins over that.
WITHOUT_EXTENSION = "--ServerApp.jpserver_extensions={'jupyter_approvals': False}"


@pytest.fixture(scope="module")
def lab_without_extension(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """A real ``jupyter lab`` like the other tests', with the server extension disabled."""
    if importlib.util.find_spec("jupyterlab") is None:
        pytest.fail("the browser tests need jupyterlab (run `make test`)", pytrace=False)
    server = LabServer.start(
        tmp_path_factory.mktemp("e2e-lab-without-extension"),
        extra_args=[WITHOUT_EXTENSION],
        log_name="jupyter-lab-without-extension",
    )
    try:
        yield server
    finally:
        server.stop()


def test_without_the_server_extension_the_panel_says_how_to_install_it(
    lab_without_extension: LabServer, page: Page
):
    # Given a server on which the extension's REST API does not exist
    with pytest.raises(urllib.error.HTTPError) as missing:
        lab_without_extension.api("/jupyter-approvals/api/pending")
    assert missing.value.code == 404

    # When a person opens JupyterLab
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(lab_without_extension.url("lab"))
    sidebar = Sidebar(page)

    # Then the shield's badge flags a problem, with nothing counted
    expect(sidebar.badge).to_have_text("!")
    expect(sidebar.badge).to_be_visible()
    expect(sidebar.badge).to_have_attribute("data-count", "0")

    # When the person opens the sidebar
    panel = sidebar.open()

    # Then it says the server extension is not running, and gives the commands that fix it
    missing_box = panel.get_by_test_id("jpa-sidebar-extension-missing")
    expect(missing_box).to_be_visible()
    expect(missing_box).to_contain_text("server extension is not running")
    expect(missing_box).to_contain_text("pip install /path/to/your/clone/of/jupyter-approvals")
    expect(missing_box).not_to_contain_text("pip install jupyter-approvals")
    expect(missing_box).to_contain_text("jupyter server extension enable jupyter_approvals")
    expect(missing_box).to_contain_text("restart Jupyter")
    expect(missing_box).to_contain_text("/jupyter-approvals/api/pending answered 404")
    expect(panel).to_have_attribute("data-connection", "missing")
    expect(sidebar.items).to_have_count(0)
    save_screenshot(sidebar.panel, "sidebar-extension-missing")
    assert errors == []
