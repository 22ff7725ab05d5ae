"""A real agent client against the agent gate: jupyter-mcp-server 2.2.4 over MCP stdio, with
jupyter-collaboration on the server, driving a JupyterLab in which a person approves in the
sidebar in headless Chromium.

The server and the agent client run in the agent virtualenv (``AGENT_PYTHON``, made by
``make test``); the agent connects with a token of its own, never the person's.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from playwright.sync_api import Page, expect

from jupyter_approvals.cli_agent import MCP_RECONNECT_S, mcp_config
from jupyter_approvals.core.agents import AgentRegistry, registry_path
from jupyter_approvals.core.protocol import HELD_MIMETYPE
from tests.e2e.lab import (
    ARTIFACTS,
    DOC_IMAGES,
    LabServer,
    NotebookPage,
    Sidebar,
    pause_like_a_person,
    save_screenshot,
    venv_python,
)

pytestmark = pytest.mark.e2e

expect.set_options(timeout=20_000)

DRIVER = Path(__file__).with_name("mcp_driver.py")
YJS_DRIVER = Path(__file__).with_name("yjs_driver.py")
CODE = "print(40 + 2)"


def printed_42(result: dict[str, Any]) -> bool:
    """Whether the tool result holds the cell's output ``42`` (not a 42 inside some id)."""
    return any(text.strip() == "42" for text in result["text"])


def agent_python() -> str:
    return venv_python(
        "AGENT_PYTHON", "the agent client test", "jupyter-mcp-server and jupyter-collaboration"
    )


class McpAgent:
    """jupyter-mcp-server in a real MCP session, called one tool at a time."""

    def __init__(self, python: str, url: str, token: str) -> None:
        # Configured as `jupyter approvals agent add --mcp` prints it.
        [entry] = mcp_config("claude", token, url, (python, []))["mcpServers"].values()
        env = {**os.environ, "MCP_SERVER_ENV": json.dumps(entry["env"])}
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [python, str(DRIVER), str(ARTIFACTS / "jupyter-mcp-server.log")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )
        assert json.loads(self._line()) == {"ready": True}

    def _line(self) -> str:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the MCP driver ended with {self.process.wait()}")
        return line

    def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"tool": tool, "arguments": arguments}) + "\n")
        self.process.stdin.flush()
        result = json.loads(self._line())
        result["all_text"] = "\n".join(result["text"])
        return result

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.write("\n")
            self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


@pytest.fixture(scope="module")
def agent_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """JupyterLab with jupyter-collaboration and jupyter-approvals, from the agent virtualenv."""
    # The per-cell hold is what this file tests (the sandbox, the default, is
    # test_mcp_agent_sandbox.py's): agent code in any kernel is held.
    server = LabServer.start(
        tmp_path_factory.mktemp("agent-lab"),
        log_name="agent-lab",
        python=agent_python(),
        extra_args=["--ApprovalsServer.agent_code=ask"],
    )
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def agent(agent_lab: LabServer) -> Iterator[McpAgent]:
    # The person lets the agent in with its own identity (`jupyter approvals agent add`).
    registry = AgentRegistry(registry_path(agent_lab.state_dir))
    _, token = registry.add("claude")
    client = McpAgent(agent_python(), agent_lab.base_url, token)
    try:
        yield client
    finally:
        client.close()
        registry.remove("claude")


def test_mcp_agent_code_runs_once_after_the_person_approves_it_in_the_sidebar(
    agent_lab: LabServer, agent: McpAgent, page: Page
):
    # Given jupyter-mcp-server connected with the agent's token, working on a new notebook
    opened = agent.call(
        "use_notebook", notebook_name="nb", notebook_path="agent.ipynb", mode="create"
    )
    assert not opened["is_error"], opened

    # When the agent inserts and runs a cell
    first = agent.call("insert_execute_code_cell", cell_index=-1, cell_source=CODE)

    # Then nothing ran, and the agent reads, unmistakably, what to do
    assert not printed_42(first), first
    assert "APPROVAL_PENDING: nothing ran" in first["all_text"]
    assert "send exactly the same code again" in first["all_text"]
    [held] = [p for p in agent_lab.pending() if p.get("held_at") == "server"]
    assert held["preview"] == CODE
    assert held["agent"] == "claude"

    # When the person opens the Approvals sidebar
    page.goto(agent_lab.url("lab"))
    sidebar = Sidebar(page)
    sidebar.record_verdicts()
    sidebar.open()
    # Then it lists the agent's code, who asked, and where it would run
    item = sidebar.item(held["id"])
    expect(item).to_be_visible()
    seen = time.monotonic()
    expect(item).to_have_attribute("data-held-at", "server")
    expect(sidebar.part(item, "action")).to_have_text("kernel.execute")
    expect(sidebar.part(item, "agent")).to_have_text("requested by agent claude")
    expect(sidebar.part(item, "preview")).to_contain_text(CODE)
    save_screenshot(page, "agent-code-held-in-sidebar")

    # When the person has read it and presses Approve
    pause_like_a_person(seen)
    sidebar.part(item, "approve").click()
    expect(item).to_be_hidden()
    assert {"request_id": held["id"], "state": "ok", "text": "Approved"} in (
        sidebar.verdicts_seen()
    )

    # And the agent sends the same code again
    second = agent.call("insert_execute_code_cell", cell_index=-1, cell_source=CODE)
    # Then it ran, once
    assert printed_42(second), second
    assert "APPROVAL_PENDING" not in second["all_text"]

    # And a third send asks again
    third = agent.call("insert_execute_code_cell", cell_index=-1, cell_source=CODE)
    assert not printed_42(third)
    assert "APPROVAL_PENDING: nothing ran" in third["all_text"]

    # And the journal tells the story with the agent's name and the person's
    events = [
        (line["event"], line.get("agent"))
        for line in agent_lab.journal_lines()
        if line.get("request_id") == held["id"]
    ]
    assert events == [("requested", "claude"), ("approved", "claude"), ("executed", "claude")]


def test_the_person_approves_held_agent_code_at_its_cell_and_a_retry_points_there(
    agent_lab: LabServer, agent: McpAgent, page: Page
):
    # Given an agent's notebook where its code is held, and the agent retried it in a new cell
    opened = agent.call(
        "use_notebook", notebook_name="cells", notebook_path="at-cell.ipynb", mode="create"
    )
    assert not opened["is_error"], opened
    first = agent.call("insert_execute_code_cell", cell_index=-1, cell_source=CODE)
    retry = agent.call("insert_execute_code_cell", cell_index=-1, cell_source=CODE)
    assert "APPROVAL_PENDING: nothing ran" in first["all_text"]
    assert "APPROVAL_PENDING: nothing ran" in retry["all_text"]
    [held] = [
        p
        for p in agent_lab.pending()
        if p.get("held_at") == "server" and p.get("notebook_path") == "at-cell.ipynb"
    ]

    # When the person opens the agent's notebook
    page.set_viewport_size({"width": 1400, "height": 900})
    nb = NotebookPage.open(page, agent_lab, agent_lab.root / "at-cell.ipynb")

    # Then the first cell shows the held code as the server lists it, with Approve and Reject
    # and no red error; the retry's cell points to it
    cards = page.locator("[data-testid='jpa-held-card']")
    expect(cards).to_have_count(2)
    card, pointer = cards.nth(0), cards.nth(1)
    expect(card.locator("[data-testid='jpa-held-card-header']")).to_contain_text("nothing ran")
    expect(card.locator("[data-testid='jpa-sidebar-preview']")).to_contain_text(CODE)
    approve = card.get_by_role("button", name="Approve", exact=True)
    expect(approve).to_be_visible()
    expect(card.get_by_role("button", name="Reject", exact=True)).to_be_visible()
    seen = time.monotonic()
    expect(pointer.locator("[data-testid='jpa-held-card-state']")).to_contain_text(
        f"The same held code as an earlier cell (request {held['id']})"
    )
    expect(page.locator(".jp-OutputArea-output[data-mime-type*='stderr']")).to_have_count(0)
    save_screenshot(
        card, "held-code-card-at-cell", doc=True, doc_path=DOC_IMAGES / "held-code-card.png"
    )

    # When the person has read it and approves it there
    pause_like_a_person(seen)
    approve.click()

    # Then the request is approved (no longer listed), and the agent's next send runs once
    expect(card.locator("[data-testid='jpa-held-card-state']")).to_contain_text(
        "nothing of it waits for a decision now", timeout=30_000
    )
    second = agent.call("insert_execute_code_cell", cell_index=-1, cell_source=CODE)
    assert printed_42(second), second
    # And the journal says it was decided in the card, not in the sidebar
    events = [
        (line["event"], line.get("channel"))
        for line in agent_lab.journal_lines()
        if line.get("request_id") == held["id"]
    ]
    assert events == [("requested", None), ("approved", "card"), ("executed", "card")]
    assert nb.errors == []


def test_after_a_pause_and_a_resume_the_agent_works_again_without_restarting(
    agent_lab: LabServer, agent: McpAgent
):
    # Given jupyter-mcp-server, configured as `agent add --mcp` prints it, working in its
    # notebook over a kernel websocket
    opened = agent.call(
        "use_notebook", notebook_name="resumed", notebook_path="resumed.ipynb", mode="create"
    )
    assert not opened["is_error"], opened
    first = agent.call("insert_execute_code_cell", cell_index=-1, cell_source=CODE)
    assert "APPROVAL_PENDING: nothing ran" in first["all_text"]
    closed_before = agent_lab.log_path.read_text().count("closing a socket of agent claude")

    # When the person pauses the agent (its request is rejected, its sockets close)
    paused = json.loads(agent_lab.api("/jupyter-approvals/api/agents/claude/pause", "POST", b""))
    assert paused["paused"] is True
    assert agent_lab.log_path.read_text().count("closing a socket of agent claude") > closed_before
    rejected = [
        line
        for line in agent_lab.journal_lines()
        if line.get("event") == "rejected" and line.get("notebook_path") == "resumed.ipynb"
    ]
    assert len(rejected) == 1
    # And resumes it, and the agent's websocket has had its time to open again
    agent_lab.api("/jupyter-approvals/api/agents/claude/resume", "POST", b"")
    time.sleep(MCP_RECONNECT_S + 2)

    # Then the agent's next code reaches the server again, without restarting the agent: it
    # is held for the person (not lost on a dead socket)
    again = agent.call("insert_execute_code_cell", cell_index=-1, cell_source="print(6 * 7)")
    assert "APPROVAL_PENDING: nothing ran" in again["all_text"], again
    held = [
        p
        for p in agent_lab.pending()
        if p.get("held_at") == "server" and p.get("notebook_path") == "resumed.ipynb"
    ]
    assert [p["preview"] for p in held] == ["print(6 * 7)"]


def test_mcp_notebook_tools_keep_working_for_the_agent(agent_lab: LabServer, agent: McpAgent):
    # Given jupyter-mcp-server on a notebook of its own
    opened = agent.call(
        "use_notebook", notebook_name="tools", notebook_path="tools.ipynb", mode="create"
    )
    assert not opened["is_error"], opened
    # When it inserts, edits, reads and deletes cells (through the collaboration room)
    for tool, arguments in (
        ("insert_cell", {"cell_index": -1, "cell_type": "markdown", "cell_source": "# Notes"}),
        ("insert_cell", {"cell_index": -1, "cell_type": "code", "cell_source": "x = 1"}),
        ("overwrite_cell_source", {"cell_index": 1, "cell_source": "x = 2"}),
        ("delete_cell", {"cell_indices": [0]}),
    ):
        result = agent.call(tool, **arguments)
        # Then each works, with no refusal
        assert not result["is_error"], (tool, result)
        assert "APPROVAL_" not in result["all_text"], (tool, result)
    listing = agent.call("read_notebook", notebook_name="tools", response_format="detailed")
    assert "x = 2" in listing["all_text"]
    assert "# Notes" not in listing["all_text"]
    # While running code is still held for the person
    ran = agent.call("execute_code", code="x * 21")
    assert "APPROVAL_PENDING: nothing ran" in ran["all_text"]


def yjs_change(server: LabServer, token: str, path: str, change: str) -> dict[str, Any]:
    """Make one change as a fresh Yjs client of the file's room (tests/e2e/yjs_driver.py)."""
    done = subprocess.run(
        [agent_python(), str(YJS_DRIVER), server.base_url, token, path, change],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_an_agent_cannot_trust_a_script_output_through_a_collaboration_room(
    agent_lab: LabServer, page: Page
):
    # Given the person's notebook, open in their browser
    registry = AgentRegistry(registry_path(agent_lab.state_dir))
    _, token = registry.add("yjs")
    path = agent_lab.root / "shared.ipynb"
    kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cell = {
        "cell_type": "code",
        "id": "c1",
        "metadata": {},
        "source": "x = 1",
        "outputs": [],
        "execution_count": None,
    }
    path.write_text(
        json.dumps(
            {
                "cells": [cell],
                "metadata": {"kernelspec": kernelspec},
                "nbformat": 4,
                "nbformat_minor": 5,
            }
        )
    )
    try:
        page.goto(agent_lab.url("lab/tree/shared.ipynb"))
        expect(page.locator(".jp-Notebook .jp-Notebook-cell").first).to_be_visible()
        # When an agent edits a cell's source through the room, that passes
        assert yjs_change(agent_lab, token, "shared.ipynb", "source")["closed"] is False
        cells = page.locator(".jp-Notebook .jp-Notebook-cell")
        expect(cells.first).to_contain_text("edited by the agent")
        # When it inserts a cell through the room, the cell is marked as the agent's
        assert yjs_change(agent_lab, token, "shared.ipynb", "insert-cell")["closed"] is False
        expect(cells).to_have_count(2)
        expect(cells.nth(1)).to_have_attribute("data-jpa-inserted-by", "agent yjs")
        expect(cells.first).not_to_have_attribute("data-jpa-inserted-by", "agent yjs")
        # When it trusts the cell and gives it an HTML output with a script
        refused = yjs_change(agent_lab, token, "shared.ipynb", "trusted-script")
        # Then the server drops that update and closes the agent's socket
        assert (refused["closed"], refused["code"]) == (True, 4003)
        # And the script never ran in the person's page, where no such output appears
        page.wait_for_timeout(1500)
        assert page.evaluate("() => window.__jpaAgentScriptRan") is None
        expect(page.locator(".jp-Notebook .jp-OutputArea-output")).to_have_count(0)
    finally:
        registry.remove("yjs")


NOTES = "def total(rows):\n    return sum(rows)\n"
AGENT_LINE = "print(total([1, 2]))\n"


def held_edit(answer: dict[str, Any]) -> str:
    """The request id of a room edit the server held: told in a RAW message, then closed."""
    assert (answer["closed"], answer["code"]) == (True, 4009), answer
    [told] = answer["told"]
    assert told["type"] == "jupyter_approvals"
    assert told["code"] == "APPROVAL_PENDING"
    assert "nothing was written" in told["message"]
    assert answer["reason"] == f"APPROVAL_PENDING request {told['request_id']}"
    return str(told["request_id"])


def test_an_agents_edit_of_a_text_file_through_a_room_waits_for_the_person(
    agent_lab: LabServer, page: Page
):
    # Given notes.py, a file of the person's, and an agent with a Yjs client of its own
    registry = AgentRegistry(registry_path(agent_lab.state_dir))
    _, token = registry.add("typist")
    notes = agent_lab.root / "notes.py"
    notes.write_text(NOTES)
    try:
        # (a room of a file as anything but text or a notebook is refused outright)
        binary = urllib.request.Request(
            f"{agent_lab.base_url}/api/collaboration/session/notes.py",
            data=json.dumps({"format": "base64", "type": "file"}).encode(),
            method="PUT",
            headers={"Authorization": f"token {token}"},
        )
        with pytest.raises(urllib.error.HTTPError) as refused_room:
            urllib.request.urlopen(binary, timeout=10)
        assert refused_room.value.code == 403
        assert json.loads(refused_room.value.read())["code"] == "APPROVAL_AGENT_FORBIDDEN"

        # When the agent appends a line to it through the file's collaboration room
        request_id = held_edit(yjs_change(agent_lab, token, "notes.py", f"append:{AGENT_LINE}"))
        # Then nothing reached the file, even after the room's save delay
        time.sleep(2.5)
        assert notes.read_text() == NOTES

        # When the person opens the sidebar
        page.goto(agent_lab.url("lab"))
        sidebar = Sidebar(page)
        sidebar.record_verdicts()
        sidebar.open()
        # Then it shows the change as a diff, asked for by the agent
        item = sidebar.item(request_id)
        expect(item).to_be_visible()
        seen = time.monotonic()
        expect(sidebar.part(item, "action")).to_have_text("file.write")
        expect(sidebar.part(item, "agent")).to_have_text("requested by agent typist")
        expect(sidebar.part(item, "preview")).to_contain_text("+print(total([1, 2]))")
        save_screenshot(page, "agent-room-edit-held-in-sidebar")
        # When they approve it, and the agent's client sends the edit again
        pause_like_a_person(seen)
        sidebar.part(item, "approve").click()
        expect(item).to_be_hidden()
        sent = yjs_change(agent_lab, token, "notes.py", f"append:{AGENT_LINE}")
        # Then the room takes it and saves it to the file, once
        assert sent["closed"] is False, sent
        deadline = time.monotonic() + 15
        while notes.read_text() != NOTES + AGENT_LINE and time.monotonic() < deadline:
            time.sleep(0.2)
        assert notes.read_text() == NOTES + AGENT_LINE
        events = [line["event"] for line in agent_lab.events_of(request_id)]
        assert events == ["requested", "approved", "executed"]

        # When the agent's next edit is approved, but the file changes before it is sent again
        again = held_edit(yjs_change(agent_lab, token, "notes.py", "append:x = 1\n"))
        [held] = [p for p in agent_lab.pending() if p["id"] == again]
        page.wait_for_timeout(1100)  # the person reads it in the open sidebar
        decided = agent_lab.decide_held(held, "approve")
        assert decided["status"] == "approved"
        notes.write_text(NOTES + "# the person's line\n")
        room_text = NOTES + "# the person's line\n"
        # (the room takes the out-of-band change from disk)
        time.sleep(3)
        refused = yjs_change(agent_lab, token, "notes.py", "append:x = 1\n")
        # Then the edit is refused, and the file keeps the person's text
        assert (refused["code"], refused["told"][0]["code"]) == (
            4009,
            "APPROVAL_FINGERPRINT_MISMATCH",
        ), refused
        time.sleep(2)
        assert notes.read_text() == room_text
    finally:
        registry.remove("typist")


def test_a_held_run_of_the_persons_cell_leaves_the_persons_outputs(
    agent_lab: LabServer, agent: McpAgent
):
    # Given the person's notebook with a cell that has its outputs from an earlier run
    kept = {
        "cells": [
            {
                "id": "persons-cell",
                "cell_type": "code",
                "metadata": {},
                "execution_count": 3,
                "source": "print('the person ran this')",
                "outputs": [
                    {"output_type": "stream", "name": "stdout", "text": "the person ran this\n"}
                ],
            }
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = agent_lab.root / "kept.ipynb"
    path.write_text(json.dumps(kept))
    opened = agent.call(
        "use_notebook", notebook_name="kept", notebook_path="kept.ipynb", mode="connect"
    )
    assert not opened["is_error"], opened
    # When the agent runs that cell, and its code is held for the person
    ran = agent.call("execute_cell", cell_index=0)
    assert "APPROVAL_PENDING: nothing ran" in ran["all_text"]
    # Then the notebook keeps the person's outputs and count, the gate's answer after them,
    # once the room has saved
    earlier = kept["cells"][0]["outputs"]
    deadline = time.monotonic() + 30
    while True:
        # (the room saves stream text as a list of lines, as nbformat does; a read while it
        # writes the file may find it empty)
        try:
            cell = nbformat.reads(path.read_text(), as_version=4)["cells"][0]
        except (ValueError, nbformat.reader.NotJSONError):
            cell = {"outputs": [], "execution_count": None}
        outputs = [dict(output) for output in cell["outputs"]]
        # (the file holds the notebook as it was until the room saves the agent's run)
        answered = [sorted(o.get("data", {})) for o in outputs[len(earlier) :]] == [
            [HELD_MIMETYPE, "text/plain"]
        ]
        restored = outputs[: len(earlier)] == earlier and cell["execution_count"] == 3
        if (answered and restored) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert outputs[: len(earlier)] == earlier
    [answer] = outputs[len(earlier) :]
    assert answer["output_type"] == "display_data"
    assert answer["data"]["text/plain"].startswith("APPROVAL_PENDING: nothing ran")
    assert cell["execution_count"] == 3
