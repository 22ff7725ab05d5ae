"""The card and the sidebar through a real JupyterHub's proxy: alice logs in at the hub, opens
her notebook in JupyterLab on her server, and decides in the page as she would anywhere."""

from __future__ import annotations

import time

import nbformat
import pytest
from playwright.sync_api import Page, expect

from tests.e2e.lab import CARD, NotebookPage, Sidebar, pause_like_a_person
from tests.hub.conftest import Hub, hub  # noqa: F401 - the hub fixture, for this module
from tests.kernel.helpers import SETUP

pytestmark = [pytest.mark.e2e, pytest.mark.hub, pytest.mark.timeout(300)]

expect.set_options(timeout=30_000)

OWNER = "alice"
CALL = "save('through the hub', 'hub-browser.txt')"


def write_notebook(running: Hub) -> str:
    """alice's notebook: the protected writer, then a call of it."""
    running.start_server(OWNER)
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(SETUP), nbformat.v4.new_code_cell(CALL)],
        metadata={
            "kernelspec": {
                "name": "python3",
                "display_name": "Python 3 (ipykernel)",
                "language": "python",
            }
        },
    )
    nbformat.write(notebook, running.home(OWNER) / "through-the-hub.ipynb")
    return "through-the-hub.ipynb"


def log_in(page: Page, running: Hub, user: str) -> None:
    page.goto(f"{running.url}/hub/login")
    page.fill("#username_input", user)
    page.fill("#password_input", "any")
    page.click("#login_submit")
    page.wait_for_url(f"{running.url}/**")


def test_a_person_decides_through_the_hubs_proxy_in_card_and_sidebar(
    hub: Hub,  # noqa: F811 - the imported fixture
    page: Page,
):
    # Given alice logged in at the hub, her notebook open in JupyterLab on her server
    name = write_notebook(hub)
    log_in(page, hub, OWNER)
    page.goto(f"{hub.url}/user/{OWNER}/lab/tree/{name}")
    nb = NotebookPage(page)
    expect(nb.cells.first).to_be_visible(timeout=90_000)
    expect(page.get_by_title(f"Change kernel for {name}")).to_have_text(
        "Python 3 (ipykernel) | Idle", timeout=90_000
    )
    # When she runs the protected call
    nb.run_all([0, 1])
    card = nb.card(1)
    expect(card).to_be_visible()
    shown = time.monotonic()
    # Then the sidebar lists it, through the proxy
    sidebar = Sidebar(page)
    sidebar.open()
    expect(sidebar.items).to_have_count(1)
    # When she approves in the card, after reading it
    pause_like_a_person(shown)
    card.get_by_role("button", name="Approve", exact=True).click()
    # Then the card says approved, the sidebar empties, and the call runs once
    expect(card).to_have_attribute("data-state", "approved")
    expect(sidebar.items).to_have_count(0)
    nb.run(1)
    expect(nb.output(1)).to_contain_text("wrote 15 chars")
    expect(page.locator(CARD)).to_have_count(0)
    assert (hub.home(OWNER) / "hub-browser.txt").read_text() == "through the hub"
