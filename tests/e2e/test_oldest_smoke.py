"""A card and the sidebar on the oldest JupyterLab, Notebook 7, Jupyter Server and
jupyter-collaboration supported.

The full browser suite runs on the newest versions (the main virtualenv). This smoke test runs
JupyterLab from a virtualenv with the oldest ones (``OLDEST_PYTHON``, made by ``make test`` from
tests/e2e/oldest-requirements.txt), with jupyter-approvals installed in it and the sidebar as
built with the newest JupyterLab: the prebuilt extension must list as compatible there, show the
card in a notebook (opened in real-time collaboration), list the request in the sidebar and take
the person's approval, in JupyterLab and in Notebook 7.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

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
    venv_python,
)
from tests.e2e.test_notebook7 import show_approvals_from_the_view_menu

pytestmark = pytest.mark.e2e

# Kernel round trips and widget rendering take a moment on a loaded CI machine.
expect.set_options(timeout=15_000)

REQUIREMENTS = Path(__file__).with_name("oldest-requirements.txt")
#: ANSI colour codes in ``jupyter labextension list``'s output.
ANSI = re.compile(r"\x1b\[[0-9;]*m")
#: Where jupyter-approvals' own code is served from: a page error thrown from elsewhere in an
#: old Notebook 7 is that version's own (7.0.0 throws some with no extension installed).
OUR_BUNDLE = "/extensions/jupyter-approvals/"


def oldest_pins() -> dict[str, str]:
    """The ``name==version`` lines of the requirements file, by name."""
    pins = {}
    for line in REQUIREMENTS.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            pins[name.strip()] = version.strip()
    return pins


def oldest_python() -> str:
    return venv_python(
        "OLDEST_PYTHON", "the oldest-versions smoke test", "tests/e2e/oldest-requirements.txt"
    )


def run_in_oldest(*args: str) -> str:
    """Run a command of the oldest virtualenv (its ``bin/``), and return its output."""
    bin_dir = Path(oldest_python()).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("JUPYTER_PATH", None)
    done = subprocess.run(
        [str(bin_dir / args[0]), *args[1:]],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return ANSI.sub("", done.stdout + done.stderr)


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """JupyterLab (with Notebook 7's pages) from the oldest virtualenv; the conftest's
    ``notebook`` and ``page`` fixtures use it."""
    server = LabServer.start(
        tmp_path_factory.mktemp("oldest-lab"), log_name="oldest-lab", python=oldest_python()
    )
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(autouse=True)
def no_other_kernels(lab_server: LabServer) -> Iterator[None]:
    """Only this test's kernel runs: the sidebar lists every running kernel's requests."""
    lab_server.shutdown_kernels()
    yield
    lab_server.shutdown_kernels()


def open_in_oldest_notebook7(page: Page, server: LabServer, notebook: Path) -> NotebookPage:
    """Open ``notebook`` in Notebook 7's page and wait until its kernel is connected and idle.

    The kernel's state is read from the server: Notebook 7.0's toolbar, which names the kernel
    in newer versions, sometimes starts folded into its "More commands" menu.
    """
    opened = NotebookPage(page)
    page.on(
        "pageerror",
        lambda exc: opened.errors.append(str(exc)) if OUR_BUNDLE in (exc.stack or "") else None,
    )
    relative = notebook.relative_to(server.root).as_posix()
    page.goto(server.url(f"notebooks/{relative}"))
    expect(opened.cells.first).to_be_visible(timeout=60_000)
    expect(page.locator("#jp-NotebookLogo")).to_be_visible()

    def idle_and_connected() -> bool:
        kernels = [s["kernel"] for s in server.sessions() if s["path"] == relative]
        return any(k["execution_state"] == "idle" and k["connections"] > 0 for k in kernels)

    deadline = time.monotonic() + 60
    while not idle_and_connected():
        assert time.monotonic() < deadline, f"no idle kernel for {relative}: {server.sessions()}"
        time.sleep(0.2)
    return opened


def test_the_oldest_virtualenv_holds_the_oldest_versions_and_both_extensions_are_ok():
    # Given the oldest virtualenv
    pins = oldest_pins()
    # When its installed versions and its extension lists are read
    script = "import json, importlib.metadata as m, sys; print(json.dumps({n: m.version(n) "
    script += "for n in sys.argv[1:]}))"
    installed = json.loads(run_in_oldest("python", "-c", script, *pins))
    labextensions = run_in_oldest("jupyter", "labextension", "list")
    server_extensions = run_in_oldest("jupyter", "server", "extension", "list")

    # Then it holds exactly the pinned versions
    assert installed == pins
    # And the prebuilt sidebar is enabled and OK there, not "not compatible"
    assert re.search(r"^\s*jupyter-approvals v\S+ enabled OK\b", labextensions, re.M), labextensions
    assert "not compatible" not in labextensions, labextensions
    # And so is the server extension
    assert re.search(r"^\s*jupyter_approvals enabled$", server_extensions, re.M), server_extensions
    assert re.search(r"^\s*jupyter_approvals \S+ OK$", server_extensions, re.M), server_extensions


def test_card_and_sidebar_in_the_oldest_jupyterlab(
    lab_server: LabServer, notebook: Path, page: Page
):
    # Given the quickstart open in the oldest JupyterLab
    nb = NotebookPage.open(page, lab_server, notebook)
    config = json.loads(page.locator("#jupyter-config-data").text_content() or "{}")
    assert config["appVersion"] == oldest_pins()["jupyterlab"]
    # (with real-time collaboration: jupyter-collaboration's panel is in the left sidebar)
    expect(page.locator('.jp-SideBar li[data-id="jp-collaboration-panel"]')).to_have_count(1)
    cells = QuickstartCells.of(notebook)

    # When the person runs it up to and including the first protected call
    nb.run_all([*cells.setup, cells.first_call])

    # Then the card shows in the cell's output, pending, with one quiet line and no error
    card = nb.card(cells.first_call)
    expect(card).to_be_visible()
    seen = time.monotonic()
    expect(card).to_have_attribute("data-state", "pending")
    expect(card.locator(".jpa-summary")).to_have_text("Write quickstart-output/sales.csv")
    request_id = request_id_shown(nb, cells.first_call)

    # When the person opens the Approvals sidebar
    sidebar = Sidebar(page)
    sidebar.open()

    # Then it lists the request, with the badge counting it
    expect(sidebar.panel).to_have_attribute("data-connection", "ok")
    item = sidebar.item(request_id)
    expect(item).to_be_visible()
    expect(sidebar.part(item, "summary")).to_have_text("Write quickstart-output/sales.csv")
    sidebar.expect_badge(1)
    save_screenshot(page, "oldest-1-lab-card-and-sidebar")

    # When the person has read it for more than a second and approves in the sidebar
    pause_like_a_person(seen)
    sidebar.part(item, "approve").click()

    # Then the card says approved and the item goes
    expect(card).to_have_attribute("data-state", "approved")
    expect(item).to_have_count(0)
    sidebar.expect_badge(0)

    # When the call is made again, it runs once and writes the file
    nb.run(cells.call_again)
    expect(nb.output(cells.call_again)).to_contain_text(
        "'wrote 4 rows to quickstart-output/sales.csv'"
    )
    assert (notebook.parent / TARGET).read_bytes() == EXPECTED_CSV
    expect(card).to_have_attribute("data-state", "executed")
    events = [line["event"] for line in lab_server.events_of(request_id)]
    assert events.index("requested") < events.index("approved") < events.index("executed")
    assert nb.errors == []


def test_card_and_sidebar_in_the_oldest_notebook_7(
    lab_server: LabServer, notebook: Path, page: Page
):
    # Given the quickstart open in the oldest Notebook 7
    nb = open_in_oldest_notebook7(page, lab_server, notebook)
    config = json.loads(page.locator("#jupyter-config-data").text_content() or "{}")
    assert config["appVersion"] == oldest_pins()["notebook"]
    cells = QuickstartCells.of(notebook)

    # When the person runs it up to and including the first protected call
    nb.run_all([*cells.setup, cells.first_call])

    # Then the card shows, pending
    card = nb.card(cells.first_call)
    expect(card).to_be_visible()
    seen = time.monotonic()
    expect(card).to_have_attribute("data-state", "pending")
    request_id = request_id_shown(nb, cells.first_call)

    # When the person opens the Approvals panel from the View menu
    show_approvals_from_the_view_menu(page)

    # Then it lists the request
    sidebar = Sidebar(page)
    item = sidebar.item(request_id)
    expect(item).to_be_visible()
    save_screenshot(page, "oldest-2-notebook7-card-and-sidebar")

    # When the person approves in the card after reading it
    pause_like_a_person(seen)
    card.get_by_role("button", name="Approve", exact=True).click()

    # Then the card says approved, and the sidebar's item goes
    expect(card).to_have_attribute("data-state", "approved")
    expect(item).to_have_count(0)
    assert nb.errors == []
