"""The sidebar groups requests by who asked and pauses an agent in one click; the notebook
labels the cells an agent inserted.

The agent here is a plain HTTP client with a token of its own (the MCP client's test is
test_mcp_agent.py); the person uses the sidebar in headless Chromium.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from jupyter_approvals.core.agents import AgentRegistry, registry_path
from tests.e2e.lab import LabServer, NotebookPage, Sidebar, save_screenshot

pytestmark = pytest.mark.e2e

expect.set_options(timeout=15_000)


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """JupyterLab with agents' writes held one by one (policy ``ask``): under the default,
    ``sandbox``, an agent's file saves are staged in a change set instead."""
    server = LabServer.start(
        tmp_path_factory.mktemp("agents-lab"), ["--ApprovalsServer.agent_code=ask"]
    )
    try:
        yield server
    finally:
        server.stop()


def agent_call(server: LabServer, token: str, path: str, method: str = "GET", body=None):
    """(status, JSON body) of one request made with the agent's token."""
    request = urllib.request.Request(
        f"{server.base_url}{path}",
        data=None if body is None else json.dumps(body).encode(),
        method=method,
        headers={"Authorization": f"token {token}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            raw = response.read()
            return response.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def test_one_click_pauses_an_agent_and_resume_lets_it_in_again(lab_server: LabServer, page: Page):
    # Given an agent with three held writes, next to nothing of the person's
    _, token = AgentRegistry(registry_path(lab_server.state_dir)).add("writer")
    for name in ("a.csv", "b.csv", "c.csv"):
        status, reply = agent_call(
            lab_server,
            token,
            f"/api/contents/{name}",
            "PUT",
            {"type": "file", "format": "text", "content": "x\n"},
        )
        assert (status, reply["code"]) == (409, "APPROVAL_PENDING")

    # When the person opens the sidebar
    page.goto(lab_server.url("lab"))
    sidebar = Sidebar(page)
    sidebar.open()
    # Then the three requests are grouped under the agent that asked
    group = sidebar.panel.locator('[data-testid="jpa-sidebar-group"][data-agent="writer"]')
    expect(group).to_contain_text("Requested by agent writer (3)")
    expect(sidebar.items).to_have_count(3)
    # Each says which agent asked, and (a write comes from no notebook) names no notebook
    first = sidebar.items.first
    expect(sidebar.part(first, "agent")).to_have_text("requested by agent writer")
    expect(sidebar.part(first, "open-cell")).to_be_hidden()
    assert "unknown notebook" not in first.inner_text()
    save_screenshot(page, "sidebar-agent-group")

    # When the person presses Pause on that group, it asks first, saying what a pause does;
    # cancelling changes nothing
    group.locator('[data-testid="jpa-sidebar-pause"]').click()
    dialog = page.locator(".jp-Dialog")
    expect(dialog).to_contain_text("Pause agent writer?")
    expect(dialog).to_contain_text("Its 3 pending requests are rejected now")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_have_count(0)
    expect(sidebar.items).to_have_count(3)
    # When they press it again and confirm
    group.locator('[data-testid="jpa-sidebar-pause"]').click()
    page.locator(".jp-Dialog").get_by_role("button", name="Pause agent writer").click()
    # Then all three are rejected at once and leave the list
    expect(sidebar.items).to_have_count(0)
    rejected = [
        line
        for line in lab_server.journal_lines()
        if line.get("event") == "rejected" and line.get("agent") == "writer"
    ]
    assert len(rejected) == 3
    # And the agent's next call is refused with a code
    status, reply = agent_call(lab_server, token, "/api/status")
    assert (status, reply["code"]) == (403, "APPROVAL_AGENT_PAUSED")
    # And the sidebar lists the paused agent with Resume
    paused = sidebar.panel.locator('[data-testid="jpa-sidebar-paused-agents"]')
    expect(paused).to_contain_text("agent writer is paused")
    save_screenshot(page, "sidebar-agent-paused")

    # When the person presses Resume
    paused.locator('[data-testid="jpa-sidebar-resume"]').click()
    # Then the agent is let in again
    expect(paused).to_be_hidden()
    status, _ = agent_call(lab_server, token, "/api/status")
    assert status == 200


def test_cells_an_agent_inserted_are_labelled_in_the_persons_notebook(
    lab_server: LabServer, page: Page
):
    # Given a notebook of the person's, to which an agent adds a cell through the contents API
    lab_server.shutdown_kernels()
    _, token = AgentRegistry(registry_path(lab_server.state_dir)).add("editor")
    path = lab_server.root / "shared.ipynb"
    mine = {
        "cell_type": "code",
        "id": "mine",
        "metadata": {},
        "source": "x = 1",
        "outputs": [],
        "execution_count": None,
    }
    kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook = {
        "cells": [mine],
        "metadata": {"kernelspec": kernelspec},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(notebook))
    theirs = {**mine, "id": "theirs", "source": "import shutil; shutil.rmtree('data')"}
    status, _ = agent_call(
        lab_server,
        token,
        "/api/contents/shared.ipynb",
        "PUT",
        {"type": "notebook", "format": "json", "content": {**notebook, "cells": [mine, theirs]}},
    )
    assert status == 200
    # When the person opens it
    nb = NotebookPage.open(page, lab_server, path)
    # Then the agent's cell says who inserted it, and the person's does not
    expect(nb.cell(1)).to_have_class(re.compile(r"\bjpa-mod-agentCell\b"))
    expect(nb.cell(1)).to_have_attribute("data-jpa-inserted-by", "agent editor")
    expect(nb.cell(0)).not_to_have_class(re.compile(r"\bjpa-mod-agentCell\b"))
    save_screenshot(page, "notebook-agent-cell-labelled")
    lab_server.shutdown_kernels()
