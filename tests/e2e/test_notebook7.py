"""The approval card and the Approvals sidebar in Jupyter Notebook 7, not only in JupyterLab.

The ``notebook`` package's server extension serves the Notebook 7 pages (``/tree``,
``/notebooks/<path>``) from the same Jupyter server as JupyterLab, and Notebook 7 loads the same
prebuilt labextensions. This test opens a fresh copy of notebooks/quickstart.ipynb at
``/notebooks/<path>`` in headless Chromium, runs it up to its first protected call, approves in
the sidebar (View > Left Sidebar > Show Approval Requests: Notebook 7 has no sidebar tabs), runs
the call again, and checks the file written and the journal.
"""

from __future__ import annotations

import importlib.util
import json
import re
import time
from pathlib import Path

import pytest
from playwright.sync_api import Error, Page, expect

from tests.e2e.lab import (
    EXPECTED_CSV,
    TARGET,
    LabServer,
    NotebookPage,
    QuickstartCells,
    Sidebar,
    pause_like_a_person,
    request_id_shown,
    save_screenshot,
)

pytestmark = pytest.mark.e2e

# Kernel round trips and widget rendering take a moment on a loaded CI machine.
expect.set_options(timeout=15_000)

#: JupyterLab's (and Notebook 7's) notification toasts.
TOAST = ".Toastify__toast"

#: Notebook 7.6.5 itself throws this once per page load, from its keyboard-shortcuts plugin
#: (``notebook_core.<hash>.js``: ``t.plugins[i].schema`` in a ``pluginChanged`` handler, after
#: its opener loads ``@jupyterlab/notebook-extension:panel`` settings). It happens with every
#: third-party labextension disabled, jupyter-approvals included, so it is not ours; any other
#: page error, or this one thrown from elsewhere, still fails the test.
NOTEBOOK7_OWN_ERROR = "Cannot read properties of undefined (reading 'schema')"


def is_notebook7_own_error(error: Error) -> bool:
    stack = (error.stack or "").splitlines()
    return (
        error.message == NOTEBOOK7_OWN_ERROR
        and len(stack) > 1
        and "/static/notebook/notebook_core." in stack[1]
    )


@pytest.fixture(scope="module", autouse=True)
def notebook7_installed() -> None:
    if importlib.util.find_spec("notebook") is None:
        pytest.fail(
            "the Notebook 7 test needs the notebook package (pip install -e '.[dev]')",
            pytrace=False,
        )


def open_in_notebook7(page: Page, server: LabServer, notebook: Path) -> NotebookPage:
    """Open ``notebook`` in the Notebook 7 UI (``/notebooks/<path>``) and wait for its kernel."""
    opened = NotebookPage(page)
    page.on("console", lambda msg: opened.console.append(f"{msg.type}: {msg.text}"))
    page.on(
        "pageerror",
        lambda exc: None if is_notebook7_own_error(exc) else opened.errors.append(str(exc)),
    )
    relative = notebook.relative_to(server.root).as_posix()
    page.goto(server.url(f"notebooks/{relative}"))
    expect(opened.cells.first).to_be_visible(timeout=60_000)
    # The page is Notebook 7's notebook page, not JupyterLab's.
    config = json.loads(page.locator("#jupyter-config-data").text_content() or "{}")
    assert (config.get("appName"), config.get("notebookPage")) == ("Jupyter Notebook", "notebooks")
    expect(page.locator("#jp-NotebookLogo")).to_be_visible()
    # Notebook 7 has no status bar: the toolbar names the kernel once the session has one
    # ("No Kernel" before), and its execution indicator then goes from connecting to idle.
    toolbar = page.locator(".jp-NotebookPanel-toolbar")
    expect(toolbar.locator(".jp-KernelName")).to_have_text(
        re.compile(r"^(?!No Kernel).+"), timeout=60_000
    )
    expect(toolbar.locator(".jp-Notebook-ExecutionIndicator")).to_have_attribute(
        "data-status", "idle", timeout=60_000
    )
    return opened


def show_approvals_from_the_view_menu(page: Page) -> None:
    """View > Left Sidebar > Show Approval Requests: Notebook 7 lists every left panel there,
    as "Show <its caption>", and opens the left area on it."""
    page.get_by_role("menubar").get_by_role("menuitem", name="View", exact=True).click()
    page.locator(".lm-Menu-item", has_text=re.compile(r"^Left Sidebar$")).click()
    page.get_by_role("menuitem", name="Show Approval Requests", exact=True).click()


def test_approve_in_the_sidebar_of_notebook_7_and_the_next_call_runs_once(
    lab_server: LabServer, notebook: Path, page: Page
):
    # Given the quickstart open in Notebook 7 (not JupyterLab), with its kernel idle
    cells = QuickstartCells.of(notebook)
    nb = open_in_notebook7(page, lab_server, notebook)
    relative = notebook.relative_to(lab_server.root).as_posix()
    [session] = [s for s in lab_server.sessions() if s["path"] == relative]
    kernel_id = session["kernel"]["id"]
    sidebar = Sidebar(page)
    expect(sidebar.panel).to_be_hidden()  # Notebook 7 starts with the left area collapsed

    # When the person runs it up to and including the first protected call (Shift+Enter)
    nb.run_all([*cells.setup, cells.first_call])

    # Then the approval card shows in the cell's output, with one quiet line and no error
    card = nb.card(cells.first_call)
    expect(card).to_be_visible()
    seen = time.monotonic()
    expect(card).to_have_attribute("data-state", "pending")
    expect(card.locator(".jpa-summary")).to_have_text("Write quickstart-output/sales.csv")
    request_id = request_id_shown(nb, cells.first_call)

    # And, the sidebar being closed, a notification says a request is waiting
    expect(
        page.locator(TOAST).filter(
            has_text="Approval requested: table.write: Write quickstart-output/sales.csv"
        )
    ).to_be_visible()

    # When the person opens the Approvals panel from the View menu
    show_approvals_from_the_view_menu(page)

    # Then the left area shows it with the request of this notebook's kernel; the
    # notification is gone
    expect(sidebar.panel).to_be_visible()
    expect(sidebar.panel).to_have_attribute("data-connection", "ok")
    item = sidebar.item(request_id)
    expect(item).to_be_visible()
    expect(sidebar.items).to_have_count(1)
    expect(item).to_have_attribute("data-kernel-id", kernel_id)
    expect(sidebar.part(item, "action")).to_have_text("table.write")
    expect(sidebar.part(item, "summary")).to_have_text("Write quickstart-output/sales.csv")
    expect(sidebar.part(item, "open-cell")).to_have_text(relative)
    expect(page.locator(TOAST)).to_have_count(0)
    card.scroll_into_view_if_needed()
    save_screenshot(page, "notebook7-1-card-and-sidebar")

    # When the person has read it for more than a second since the card was shown, and
    # presses Approve in the sidebar
    pause_like_a_person(seen)
    sidebar.part(item, "approve").click()

    # Then the card in the notebook says approved, and the item goes from the sidebar
    expect(card).to_have_attribute("data-state", "approved")
    expect(card.locator(".jpa-status")).to_contain_text("Approved.")
    expect(item).to_have_count(0)
    expect(sidebar.panel.get_by_test_id("jpa-sidebar-empty")).to_be_visible()
    assert not (notebook.parent / TARGET).exists()  # approving runs nothing by itself

    # When the "call again" cell runs
    nb.run(cells.call_again)

    # Then the call ran once and wrote the file, and the card says so
    expect(nb.output(cells.call_again)).to_contain_text(
        "'wrote 4 rows to quickstart-output/sales.csv'"
    )
    assert (notebook.parent / TARGET).read_bytes() == EXPECTED_CSV
    expect(card).to_have_attribute("data-state", "executed")
    save_screenshot(page, "notebook7-2-approved-and-executed")

    # And the journal holds the request, the sidebar's approval after more than a second,
    # and the run, all for the same fingerprint
    lines = lab_server.events_of(request_id)
    events = [line["event"] for line in lines]
    assert events.index("requested") < events.index("approved") < events.index("executed")
    by_event = {line["event"]: line for line in lines}
    assert by_event["approved"]["channel"] == "sidebar"
    assert by_event["approved"]["latency_ms"] >= 1000
    assert by_event["approved"]["kernel_id"] == kernel_id
    assert len({by_event[e]["fingerprint"] for e in ("requested", "approved", "executed")}) == 1
    assert nb.errors == []
