"""A sandboxed kernel's change set in the sidebar and in the card under the cell that made it:
a person reads it and applies or discards it in headless Chromium; the files are (or are not)
in the project afterwards."""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
from jupyter_client.session import Session
from playwright.sync_api import Locator, Page, expect
from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect

from tests.e2e.lab import LabServer, NotebookPage, Sidebar

pytestmark = [pytest.mark.e2e, pytest.mark.sidebar]

expect.set_options(timeout=20_000)


async def _run(server: LabServer, kernel_id: str, code: str) -> str:
    url = (
        f"ws://127.0.0.1:{server.port}/api/kernels/{kernel_id}/channels"
        f"?session_id={uuid.uuid4().hex}"
    )
    request = HTTPRequest(url, headers={"Authorization": f"token {server.token}"})
    connection = await websocket_connect(request)
    try:
        message = Session(username="e2e").msg("execute_request", {"code": code, "silent": False})
        message["channel"] = "shell"
        await connection.write_message(json.dumps(message, default=str))
        while True:
            answer = json.loads(await asyncio.wait_for(connection.read_message(), 60))
            if (
                answer["parent_header"].get("msg_id") == message["header"]["msg_id"]
                and answer["header"]["msg_type"] == "execute_reply"
            ):
                return str(answer["content"]["status"])
    finally:
        connection.close()
        # Until the server closed its side too: the loop ends with this coroutine, and a
        # socket left open then is only found by the garbage collector, in another test.
        with contextlib.suppress(Exception):
            while await asyncio.wait_for(connection.read_message(), 5) is not None:
                pass


def sandboxed_kernel_that_writes(server: LabServer, project: Path) -> str:
    """Start a "Python 3 (sandboxed)" kernel in ``project`` and have it rewrite one file and
    create another; return its id."""
    (project / "sales.csv").write_text("id,total\n1,10\n")
    model = json.loads(
        server.api(
            "/api/kernels",
            "POST",
            json.dumps({"name": "python3-sandboxed", "path": project.name}).encode(),
        )
    )
    code = (
        "open('sales.csv', 'w').write('id,total\\n1,12\\n')\n"
        "open('report.md', 'w').write('# sales\\n')"
    )
    # Playwright's sync API keeps an event loop in this thread: the client gets its own.
    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(asyncio.run, _run(server, model["id"], code)).result() == "ok"
    return str(model["id"])


def section_of(page: Page, kernel_id: str) -> Locator:
    """The sidebar's change set of one kernel (those of kernels that ended stay listed)."""
    return page.locator(f'[data-testid="jpa-changes"] [data-kernel-id="{kernel_id}"]')


@pytest.fixture
def project(lab_server: LabServer) -> Path:
    folder = lab_server.root / f"sandboxed-{uuid.uuid4().hex[:8]}"
    folder.mkdir()
    yield folder
    lab_server.shutdown_kernels()


def test_a_person_applies_a_sandboxed_kernels_changes_in_the_sidebar(
    lab_server: LabServer, page: Page, project: Path
):
    # Given a sandboxed kernel that rewrote sales.csv and wrote report.md, in its overlay
    kernel_id = sandboxed_kernel_that_writes(lab_server, project)
    assert (project / "sales.csv").read_text() == "id,total\n1,10\n"
    # When the person opens the sidebar
    page.goto(lab_server.url("lab"))
    Sidebar(page).open()
    change_set = section_of(page, kernel_id)
    # Then the change set is shown: counts first, each file, the fingerprint
    expect(change_set).to_be_visible()
    expect(change_set.locator('[data-testid="jpa-changes-counts"]')).to_have_text(
        "2 files: 1 to create, 1 to modify"
    )
    files = change_set.locator('[data-testid="jpa-changes-file"]')
    expect(files).to_have_count(2)
    expect(files.nth(0)).to_contain_text(f"{project.name}/report.md")
    expect(files.nth(1)).to_contain_text(f"{project.name}/sales.csv")
    # When the person opens the modified file's change
    files.nth(1).locator('[data-testid="jpa-changes-show"]').click()
    # Then it is compared as a table, from the bytes: the changed cell's old and new value
    shown = change_set.locator('[data-testid="jpa-changes-preview"]').nth(1)
    expect(shown).to_contain_text("1 row to change")
    expect(shown).to_contain_text("10 → 12")
    # When the person applies it, once the buttons let them
    apply = change_set.locator('[data-testid="jpa-changes-apply"]')
    expect(apply).to_be_enabled()
    apply.click()
    # Then both files are in the project, and the change set is gone from the sidebar
    expect(page.locator('[data-testid="jpa-changes-note"]')).to_contain_text("2 applied")
    assert (project / "sales.csv").read_text() == "id,total\n1,12\n"
    assert (project / "report.md").read_text() == "# sales\n"
    expect(section_of(page, kernel_id)).to_have_count(0)


def test_a_person_discards_a_sandboxed_kernels_changes_in_the_sidebar(
    lab_server: LabServer, page: Page, project: Path
):
    # Given a sandboxed kernel with the same changes
    kernel_id = sandboxed_kernel_that_writes(lab_server, project)
    page.goto(lab_server.url("lab"))
    Sidebar(page).open()
    change_set = section_of(page, kernel_id)
    # When the person discards them
    discard = change_set.locator('[data-testid="jpa-changes-discard"]')
    expect(discard).to_be_enabled()
    discard.click()
    # Then nothing reached the project and nothing is left to decide
    expect(page.locator('[data-testid="jpa-changes-note"]')).to_contain_text("2 discarded")
    expect(section_of(page, kernel_id)).to_have_count(0)
    assert (project / "sales.csv").read_text() == "id,total\n1,10\n"
    assert not (project / "report.md").exists()


def test_a_person_applies_from_the_card_under_the_cell_that_changed_files(
    lab_server: LabServer, page: Page, project: Path
):
    # Given a notebook on "Python 3 (sandboxed)", open in JupyterLab
    notebook = project / "analysis.ipynb"
    document = nbformat.v4.new_notebook()
    document.metadata["kernelspec"] = {
        "name": "python3-sandboxed",
        "display_name": "Python 3 (sandboxed)",
        "language": "python",
    }
    document.cells.append(nbformat.v4.new_code_cell("x = 1"))
    nbformat.write(document, notebook)
    opened = NotebookPage.open(page, lab_server, notebook)
    # When the person runs a cell that only reads, and one that writes a file
    reading = opened.run_new_cell("print(open('analysis.ipynb').read()[:1])")
    writing = opened.run_new_cell("open('summary.txt', 'w').write('total 12\\n')")
    # Then the writing cell, and only it, gets the card, with the server's change set
    card = opened.cell(writing).locator('[data-testid="jpa-changes-card"]')
    expect(card.locator('[data-testid="jpa-changes-card-header"]')).to_have_text(
        "Sandboxed: this cell changed 1 file in its sandbox, not in the project."
    )
    expect(opened.cell(reading).locator('[data-testid="jpa-changes-card"]')).to_have_count(0)
    row = card.locator('[data-testid="jpa-changes-file"]')
    expect(row).to_contain_text(f"{project.name}/summary.txt")
    assert not (project / "summary.txt").exists()
    # When the person applies it from the card
    apply = card.locator('[data-testid="jpa-changes-apply"]')
    expect(apply).to_be_enabled()
    apply.click()
    # Then the file is in the project, and the card says nothing waits any more
    expect(card.locator('[data-testid="jpa-changes-card-note"]')).to_contain_text("1 applied")
    assert (project / "summary.txt").read_text() == "total 12\n"
    expect(card.locator('[data-testid="jpa-changes-card-state"]')).to_contain_text(
        "Nothing of it waits for a decision now"
    )
