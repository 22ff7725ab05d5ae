"""The approval card as a person uses it: the quickstart notebook in a real JupyterLab.

Each test opens a fresh copy of notebooks/quickstart.ipynb in headless Chromium, runs its
cells with Shift+Enter, answers in the card, and checks what the person sees, what ran on
disk, and what the journal recorded.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.e2e.lab import (
    CARD,
    DOC_IMAGES,
    EXPECTED_CSV,
    FINGERPRINT,
    TARGET,
    TIME_LEFT,
    USE_WITHIN,
    LabServer,
    NotebookPage,
    QuickstartCells,
    expect_rejected_call,
    pause_like_a_person,
    request_id_shown,
    save_screenshot,
)

pytestmark = pytest.mark.e2e

# Kernel round trips and widget rendering take a moment on a loaded CI machine.
expect.set_options(timeout=15_000)

PREVIEW = (
    "Create quickstart-output/sales.csv with 4 rows:\nregion,units\nnorth,120\nsouth,95\neast,143"
)


def open_first_call(page: Page, server: LabServer, notebook: Path):
    """Open the notebook and run it up to and including the first protected call."""
    cells = QuickstartCells.of(notebook)
    nb = NotebookPage.open(page, server, notebook)
    nb.run_all([*cells.setup, cells.first_call])
    card = nb.card(cells.first_call)
    expect(card).to_be_visible()
    return nb, cells, card, time.monotonic()


def button(card: Locator, name: str) -> Locator:
    return card.get_by_role("button", name=name, exact=True)


def test_a_person_approves_in_the_card_and_the_next_call_runs_once(
    lab_server: LabServer, notebook: Path, page: Page
):
    # Given the quickstart in JupyterLab, run up to and including the first protected call
    nb, cells, card, seen = open_first_call(page, lab_server, notebook)
    request_id = request_id_shown(nb, cells.first_call)

    # Then the card shows the action, the summary, the preview, a short fingerprint, a
    # running countdown and the two answers
    expect(card).to_have_attribute("data-state", "pending")
    expect(card.locator(".jpa-action")).to_have_text("table.write")
    expect(card.locator(".jpa-summary")).to_have_text("Write quickstart-output/sales.csv")
    assert card.locator(".jpa-preview pre").inner_text() == PREVIEW
    short = card.locator(".jpa-fp")
    expect(short).to_have_text(re.compile(r"^[0-9a-f]{12}$"))
    clock = card.locator(".jpa-clock")
    expect(clock).to_have_text(TIME_LEFT)
    # 10 minutes to answer
    assert clock.inner_text().startswith(("answer within 9:", "answer within 10:")), (
        clock.inner_text()
    )
    expect(button(card, "Approve")).to_be_visible()
    expect(button(card, "Reject")).to_be_visible()
    expect(card.get_by_role("textbox", name="Reason")).to_be_editable()
    expect(card.locator(".jpa-status")).to_contain_text("Waiting for a person")
    expect(clock).not_to_have_text(clock.inner_text())  # it counts down while it is read
    expect(button(card, "Approve")).to_be_enabled()  # the documentation shows it answerable
    save_screenshot(card, "approve-1-card-pending", doc=True)

    # And the short fingerprint is the start of the full one the agent gets as text
    nb.run(cells.agent_view)
    agent_text = nb.output(cells.agent_view).inner_text()
    full = FINGERPRINT.search(agent_text)
    assert full, agent_text
    assert short.inner_text() == full.group(0)[len("sha256:") : len("sha256:") + 12]
    card.get_by_role("button", name="show full").click()
    expect(short).to_have_text(full.group(0))

    # When the person has read it for more than a second and presses Approve
    pause_like_a_person(seen)
    button(card, "Approve").click()

    # Then the card says approved and offers no more answers, in both places it is shown
    expect(card).to_have_attribute("data-state", "approved")
    expect(card.locator(".jpa-status")).to_contain_text("Approved.")
    expect(button(card, "Approve")).to_be_hidden()
    expect(button(card, "Reject")).to_be_hidden()
    expect(card.locator(".jpa-notice")).to_have_text("")
    expect(clock).to_have_text(USE_WITHIN)  # now the approval's lifetime
    save_screenshot(card, "approve-2-card-approved")

    # When the "call again" cell runs
    nb.run(cells.call_again)

    # Then the call ran once, wrote the file, and the card says so
    expect(nb.output(cells.call_again)).to_contain_text(
        "'wrote 4 rows to quickstart-output/sales.csv'"
    )
    assert (notebook.parent / TARGET).read_bytes() == EXPECTED_CSV
    expect(card).to_have_attribute("data-state", "executed")
    expect(card.locator(".jpa-status")).to_contain_text("Executed once.")
    save_screenshot(card, "approve-3-card-executed")
    save_screenshot(page, "approve-4-notebook")

    # And the journal holds request, decision (from the card, after more than a second) and run
    lines = lab_server.events_of(request_id)
    by_event = {line["event"]: line for line in lines}
    events = [line["event"] for line in lines]
    assert events[:1] == ["requested"], events
    assert events.index("requested") < events.index("approved") < events.index("executed")
    assert by_event["approved"]["channel"] == "card"
    assert by_event["approved"]["latency_ms"] >= 1000
    # made by the person the server authenticated for the page's websocket (its stamp)
    assert by_event["approved"]["decided_by"]
    assert "agent" not in by_event["requested"]
    assert {by_event[e]["fingerprint"] for e in ("requested", "approved", "executed")} == {
        full.group(0)
    }
    assert nb.errors == []


@pytest.mark.realtime
def test_approve_and_reject_wait_for_the_reading_floor_with_a_countdown(
    lab_server: LabServer, notebook: Path, page: Page
):
    # Given the first protected call's card, just shown
    nb, cells, card, _seen = open_first_call(page, lab_server, notebook)
    request_id = request_id_shown(nb, cells.first_call)

    # Then Approve and Reject cannot be pressed yet, and the card says how long to read
    expect(button(card, "Approve")).to_be_disabled()
    expect(button(card, "Reject")).to_be_disabled()
    expect(card.locator(".jpa-floor")).to_have_text(re.compile(r"^read first: \d+ s$"))
    save_screenshot(card, "floor-1-card-reading")

    # When the person presses Approve as soon as it can be pressed
    button(card, "Approve").click()  # waits until it is enabled, as a person would

    # Then the answer counts: approved, no countdown, and the journal has no too-fast answer
    expect(card).to_have_attribute("data-state", "approved")
    expect(card.locator(".jpa-floor")).to_have_text("")
    events = {line["event"]: line for line in lab_server.events_of(request_id)}
    assert "auto_answered" not in events
    assert events["approved"]["channel"] == "card"
    assert events["approved"]["latency_ms"] >= 1000
    assert nb.errors == []


def test_a_rejection_with_a_reason_reaches_the_next_call(
    lab_server: LabServer, notebook: Path, page: Page
):
    # Given the first protected call's card
    nb, cells, card, seen = open_first_call(page, lab_server, notebook)
    request_id = request_id_shown(nb, cells.first_call)
    cell_count = nb.cells.count()

    # When the person types a reason (letters that are also notebook shortcuts) and rejects
    reason = "Totals look wrong; check the east region first (ask Dana)"
    box = card.get_by_role("textbox", name="Reason")
    box.click()
    box.press_sequentially(reason)
    expect(box).to_have_value(reason)
    assert nb.cells.count() == cell_count  # typing went to the box, not to the notebook
    save_screenshot(card, "reject-1-card-with-reason")
    pause_like_a_person(seen)
    button(card, "Reject").click()

    # Then the card shows the rejection with the reason, and offers no answers any more
    expect(card).to_have_attribute("data-state", "rejected")
    expect(card.locator(".jpa-status")).to_contain_text(f"Rejected. Reason: {reason}")
    expect(button(card, "Reject")).to_be_hidden()
    save_screenshot(card, "reject-2-card-rejected")

    # When the call is made again
    # Then its error carries the person's reason, nothing was written, and the journal
    # records the rejection from the card with the reason
    expect_rejected_call(
        nb, cells.call_again, lab_server, notebook, request_id, reason, channel="card"
    )
    save_screenshot(page, "reject-3-notebook")


def test_a_double_click_on_approve_decides_once_without_an_error(
    lab_server: LabServer, notebook: Path, page: Page
):
    # Given the first protected call's card, read for more than a second
    nb, cells, card, seen = open_first_call(page, lab_server, notebook)
    request_id = request_id_shown(nb, cells.first_call)
    pause_like_a_person(seen)

    # When the person double-clicks Approve
    button(card, "Approve").dblclick()

    # Then the request is approved
    expect(card).to_have_attribute("data-state", "approved")

    # When the call is made again (the kernel handles messages in order, so by the time this
    # cell has run it has handled everything the clicks sent)
    nb.run(cells.call_again)

    # Then it ran once, and the card shows no refused second decision
    expect(nb.output(cells.call_again)).to_contain_text("'wrote 4 rows")
    expect(card).to_have_attribute("data-state", "executed")
    expect(card.locator(".jpa-notice")).to_have_text("")
    events = [line["event"] for line in lab_server.events_of(request_id)]
    assert events.count("approved") == 1, events
    assert "refused" not in events, events
    assert nb.errors == []


def saved_outputs(notebook: Path, cell: int) -> str:
    """The text/plain of a cell's outputs as the saved notebook file holds them."""
    outputs = json.loads(notebook.read_text(encoding="utf-8"))["cells"][cell]["outputs"]
    return "\n".join("".join(o.get("data", {}).get("text/plain", "")) for o in outputs)


def test_a_repeated_call_points_to_the_one_live_card_and_the_reopened_notebook_reads_as_past(
    lab_server: LabServer, notebook: Path, page: Page
):
    # Given the first protected call's card, shown by the notebook's cell [n]
    nb, cells, card, seen = open_first_call(page, lab_server, notebook)
    request_id = request_id_shown(nb, cells.first_call)
    number = nb.runs

    # Then the card names the notebook, the cell by its number and who ran it, no cell id
    expect(card.locator(".jpa-origin")).to_have_text(
        re.compile(
            r"^runs __main__\.save_csv, requested from notebook quickstart\.ipynb, "
            rf"cell \[{number}\], run by \S.* \(name not verified\)$"
        )
    )

    # When another cell makes the same call
    nb.run(cells.agent_view)

    # Then the page holds exactly one card, the only one with answers, and the second cell's
    # output says where it is
    expect(page.locator(CARD)).to_have_count(1)
    live = page.locator(CARD).filter(has=page.get_by_role("button", name="Approve", exact=True))
    expect(live).to_have_count(1)
    expect(nb.card(cells.agent_view)).to_have_count(0)
    expect(nb.output(cells.agent_view)).to_contain_text(
        f"Already asked in the card of cell [{number}] (request {request_id}), waiting for a "
        "decision: approve or reject it there or in the Approvals sidebar."
    )
    save_screenshot(page, "one-card-1-pointer")

    # When the person approves in that card and the call runs
    pause_like_a_person(seen)
    button(card, "Approve").click()
    expect(card).to_have_attribute("data-state", "approved")
    nb.run(cells.call_again)

    # Then the card, rewritten to its ended text, still renders and says executed, and the
    # pointer says how the request ended
    expect(card).to_have_attribute("data-state", "executed")
    expect(card.locator(".jpa-status")).to_contain_text("Executed once.")
    expect(nb.output(cells.agent_view)).to_contain_text(
        f"(request {request_id}), ended: approved and executed; run the cell to ask again."
    )

    # When the notebook is saved and closed
    nb.close(notebook)

    # Then the saved card and pointer read as past, dated, and ask for nothing
    card_text = saved_outputs(notebook, cells.first_call)
    assert card_text.startswith("Approval request ended: table.write\n"), card_text
    assert re.search(
        rf"request {request_id}, shown on \d{{4}}-\d\d-\d\d \d\d:\d\d UTC, ended: approved "
        "and executed; run the cell to ask again\n",
        card_text,
    ), card_text
    assert "Approve or reject" not in card_text
    assert "ended: approved and executed" in saved_outputs(notebook, cells.agent_view)
    assert nb.errors == []

    # When its kernel ends and the person reopens the notebook the next day
    lab_server.shutdown_kernels()
    page.reload()
    reopened = NotebookPage.open(page, lab_server, notebook)

    # Then the card's place shows the request as a dated record with how it ended, read from
    # the journal, and no widget error anywhere
    record = reopened.output(cells.first_call).locator("[data-testid='jpa-card-record']")
    expect(record).to_be_visible()
    expect(record).to_have_attribute("data-request-id", request_id)
    expect(record.locator("[data-testid='jpa-card-record-title']")).to_have_text(
        "Approval request: table.write"
    )
    expect(record).to_contain_text("Write quickstart-output/sales.csv")
    expect(record.locator("[data-testid='jpa-card-record-outcome']")).to_have_text(
        re.compile(r"^Ran, approved by \S.* in the card after \d+\.\d s \(.+\)\.$")
    )
    expect(record).to_contain_text("no longer live")
    expect(page.get_by_text("Error displaying widget")).to_have_count(0)
    expect(reopened.output(cells.first_call).locator(CARD)).to_have_count(0)
    save_screenshot(
        reopened.cell(cells.first_call),
        "reopened-card-record",
        doc=True,
        doc_path=DOC_IMAGES / "reopened-card.png",
    )
    assert reopened.errors == []
