"""The Approvals sidebar as a person uses it: the quickstart notebook in a real JupyterLab.

Each test opens a fresh copy of notebooks/quickstart.ipynb in headless Chromium, runs it up to
a protected call, answers in the sidebar (the shield tab on the left), and checks what the
person sees there and in the notebook, what ran on disk, and what the journal recorded.

The sidebar lists the requests of every running kernel of the server, and a closed notebook
tab leaves its kernel running, so every test starts and ends with no kernel at all.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.lab import (
    DOC_IMAGES,
    DOC_SIDEBAR_SCREENSHOT,
    EXPECTED_CSV,
    TARGET,
    TIME_LEFT,
    LabServer,
    NotebookPage,
    QuickstartCells,
    Sidebar,
    expect_rejected_call,
    fresh_quickstart,
    pause_like_a_person,
    request_id_shown,
    save_screenshot,
)

pytestmark = pytest.mark.e2e

# Kernel round trips and widget rendering take a moment on a loaded CI machine.
expect.set_options(timeout=15_000)

#: A second protected call of the quickstart's function, distinct from the first one.
OTHER_CALL = "save_csv(rows[:2], str(target.with_name('other.csv')))"
#: The sidebar polls the server every second; a change shows within two polls.
POLL_S = 1.0
#: JupyterLab's notification toasts.
TOAST = ".Toastify__toast"


@pytest.fixture(autouse=True)
def no_other_kernels(lab_server: LabServer) -> Iterator[None]:
    """Only this test's kernel runs: the badge and the list count every running kernel."""
    lab_server.shutdown_kernels()
    yield
    lab_server.shutdown_kernels()


def open_first_call(page: Page, server: LabServer, notebook: Path):
    """Open the notebook, run it up to its first protected call and wait for the card."""
    cells = QuickstartCells.of(notebook)
    nb = NotebookPage.open(page, server, notebook)
    nb.run_all([*cells.setup, cells.first_call])
    card = nb.card(cells.first_call)
    expect(card).to_be_visible()
    return nb, cells, card, time.monotonic()


def kernel_of(server: LabServer, notebook: Path) -> str:
    """The id of the kernel the server's session for ``notebook`` runs in."""
    relative = notebook.relative_to(server.root).as_posix()
    kernels = [s["kernel"]["id"] for s in server.sessions() if s["path"] == relative]
    assert len(kernels) == 1, server.sessions()
    return kernels[0]


def wait_for_verdict(page: Page, request_id: str, state: str, timeout: float = 5_000) -> str:
    """The verdict text the item of ``request_id`` showed in ``state`` (from the record kept
    by Sidebar.record_verdicts: the item goes at the next poll, taking its verdict along)."""
    page.wait_for_function(
        "([id, state]) => (window.__jpaVerdicts || [])"
        ".some(v => v.request_id === id && v.state === state)",
        arg=[request_id, state],
        timeout=timeout,
    )
    seen = Sidebar(page).verdicts_seen()
    return next(v["text"] for v in seen if v["request_id"] == request_id and v["state"] == state)


def test_approve_in_the_sidebar_for_a_kernel_whose_notebook_tab_is_closed(
    lab_server: LabServer, notebook: Path, page: Page
):
    # Given the quickstart run up to its first protected call: the card is shown
    nb, cells, _card, seen = open_first_call(page, lab_server, notebook)
    request_id = request_id_shown(nb, cells.first_call)
    kernel_id = kernel_of(lab_server, notebook)
    [pending] = lab_server.pending()
    assert pending["id"] == request_id

    # When the person closes the notebook's tab
    nb.close(notebook)

    # Then its kernel keeps running in the same session
    assert kernel_of(lab_server, notebook) == kernel_id
    assert kernel_id in lab_server.kernel_ids()

    # When the person opens the Approvals sidebar
    sidebar = Sidebar(page)
    sidebar.record_verdicts()
    sidebar.open()

    # Then it lists the request of that kernel: action, summary, notebook, fingerprint (the
    # first 12 hex digits of the request's), and the time left, counting down
    item = sidebar.item(request_id)
    expect(item).to_be_visible()
    expect(sidebar.items).to_have_count(1)
    expect(item).to_have_attribute("data-kernel-id", kernel_id)
    expect(sidebar.part(item, "action")).to_have_text("table.write")
    expect(sidebar.part(item, "summary")).to_have_text("Write quickstart-output/sales.csv")
    expect(sidebar.part(item, "open-cell")).to_have_text(
        notebook.relative_to(lab_server.root).as_posix()
    )
    fingerprint = pending["fingerprint"]
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", fingerprint), fingerprint
    expect(sidebar.part(item, "fingerprint")).to_have_text(fingerprint[7:19])
    clock = sidebar.part(item, "time-left")
    expect(clock).to_have_text(TIME_LEFT)
    assert clock.inner_text().startswith(("answer within 9:", "answer within 10:")), (
        clock.inner_text()
    )
    expect(clock).not_to_have_text(clock.inner_text())  # it counts down
    sidebar.expect_badge(1)
    save_screenshot(page, "sidebar-approve-1-tab-closed")

    # When the person has read it for more than a second since the card was shown, and
    # presses Approve in the sidebar
    pause_like_a_person(seen)
    clicked = time.monotonic()
    sidebar.part(item, "approve").click()

    # Then the item says it was approved, and goes within 2 s; nothing is pending any more
    assert wait_for_verdict(page, request_id, "ok") == "Approved"
    left_s = 2.0 - (time.monotonic() - clicked)
    assert left_s > 0, "the verdict took 2 s to show"
    expect(item).to_have_count(0, timeout=left_s * 1000)
    expect(sidebar.panel.get_by_test_id("jpa-sidebar-empty")).to_be_visible()
    sidebar.expect_badge(0)
    assert not (notebook.parent / TARGET).exists()  # approving runs nothing by itself

    # When the person opens the notebook again, in the same session and kernel
    runs = nb.runs
    nb = NotebookPage.open(page, lab_server, notebook)
    nb.runs = runs  # the kernel counts on from where it was
    assert kernel_of(lab_server, notebook) == kernel_id

    # And runs the "call again" cell
    nb.run(cells.call_again)

    # Then the call ran once and wrote the file
    expect(nb.output(cells.call_again)).to_contain_text(
        "'wrote 4 rows to quickstart-output/sales.csv'"
    )
    assert (notebook.parent / TARGET).read_bytes() == EXPECTED_CSV

    # And the journal holds the request, the sidebar's decision after more than a second,
    # and the run, all for the fingerprint the sidebar showed
    lines = lab_server.events_of(request_id)
    events = [line["event"] for line in lines]
    assert events.index("requested") < events.index("approved") < events.index("executed")
    by_event = {line["event"]: line for line in lines}
    assert by_event["approved"]["channel"] == "sidebar"
    assert by_event["approved"]["latency_ms"] >= 1000
    assert by_event["approved"]["kernel_id"] == kernel_id
    assert {by_event[e]["fingerprint"] for e in ("requested", "approved", "executed")} == {
        fingerprint
    }
    assert nb.errors == []


@pytest.fixture
def sales_notebook(lab_server: LabServer) -> Path:
    """A fresh quickstart in ``sales/``: the notebook path the documentation's screenshot of
    the sidebar shows (the ``notebook`` fixture's directory has a random name)."""
    directory = lab_server.root / "sales"
    assert not directory.exists(), "one test per server uses sales/"
    return fresh_quickstart(directory)


def test_a_rejection_with_a_reason_typed_in_the_sidebar_reaches_the_next_call(
    lab_server: LabServer, sales_notebook: Path, page: Page
):
    notebook = sales_notebook
    # Given the first protected call's card, and the sidebar open next to the notebook
    nb, cells, card, seen = open_first_call(page, lab_server, notebook)
    request_id = request_id_shown(nb, cells.first_call)
    sidebar = Sidebar(page)
    sidebar.record_verdicts()
    sidebar.open()
    item = sidebar.item(request_id)
    expect(item).to_be_visible()
    expect(sidebar.part(item, "time-left")).to_have_text(TIME_LEFT)
    expect(page.locator(TOAST)).to_have_count(0)  # open, so no new-request notification
    card.scroll_into_view_if_needed()
    expect(card).to_be_in_viewport()
    expect(sidebar.part(item, "approve")).to_be_enabled()  # past the reading floor
    save_screenshot(
        page, "sidebar-1-pending-item-and-card", doc=True, doc_path=DOC_SIDEBAR_SCREENSHOT
    )
    save_screenshot(sidebar.panel, "sidebar-2-panel-pending-item")
    cell_count = nb.cells.count()

    # When the person types a reason in the item (letters that are also notebook shortcuts),
    # across the sidebar's polls, and rejects
    reason = "Totals look wrong; check the east region first (ask Dana)"
    box = sidebar.part(item, "reason")
    box.click()
    box.press_sequentially(reason, delay=20)
    expect(box).to_have_value(reason)
    expect(box).to_be_focused()  # the polls did not take the focus away
    assert nb.cells.count() == cell_count  # typing went to the box, not to the notebook
    pause_like_a_person(seen)
    sidebar.part(item, "reject").click()

    # Then the item says it was rejected and goes; the card in the notebook says so too
    assert wait_for_verdict(page, request_id, "ok") == "Rejected"
    expect(item).to_have_count(0, timeout=2 * POLL_S * 1000 + 1000)
    sidebar.expect_badge(0)
    expect(card).to_have_attribute("data-state", "rejected")
    expect(card.locator(".jpa-status")).to_contain_text(f"Rejected. Reason: {reason}")

    # When the call is made again
    # Then its error carries the person's reason, nothing was written, and the journal
    # records the sidebar's rejection with the reason, and no run
    expect_rejected_call(
        nb, cells.call_again, lab_server, notebook, request_id, reason, channel="sidebar"
    )
    save_screenshot(page, "sidebar-3-rejected")


def test_the_last_decision_note_follows_a_decision_made_in_the_card(
    lab_server: LabServer, notebook: Path, page: Page
):
    # Given the first protected call's card, and the sidebar open next to the notebook
    _nb, _cells, card, seen = open_first_call(page, lab_server, notebook)
    sidebar = Sidebar(page)
    sidebar.open()
    [pending] = lab_server.pending()
    expect(sidebar.item(pending["id"])).to_be_visible()

    # When the person approves in the card, not in the sidebar
    pause_like_a_person(seen)
    card.get_by_role("button", name="Approve").click()
    expect(card).to_have_attribute("data-state", "approved")

    # Then the sidebar's last-decision note says so, and where it was made
    last = page.get_by_test_id("jpa-sidebar-last-decision")
    expect(last).to_contain_text("Write quickstart-output/sales.csv")
    expect(last).to_contain_text("Approved in the card")


@pytest.mark.realtime
def test_a_busy_kernel_keeps_its_item_and_the_reason_being_typed(
    lab_server: LabServer, notebook: Path, page: Page
):
    # Given the first protected call's item in the sidebar, with a reason being typed
    nb, cells, _card, seen = open_first_call(page, lab_server, notebook)
    request_id = request_id_shown(nb, cells.first_call)
    sidebar = Sidebar(page)
    sidebar.record_verdicts()
    sidebar.open()
    item = sidebar.item(request_id)
    expect(item).to_be_visible()
    reason = "checked the totals"
    sidebar.part(item, "reason").fill(reason)

    # When the person runs a long cell in the same kernel
    nb.run_new_cell("import time; time.sleep(6)", wait=False)

    # Then the item stays across the polls, says why it cannot be decided now, and keeps
    # the reason; its buttons are off
    busy_note = sidebar.part(item, "busy")
    expect(busy_note).to_be_visible()
    expect(sidebar.part(item, "approve")).to_be_disabled()
    time.sleep(2 * POLL_S)
    expect(item).to_be_visible()
    expect(sidebar.part(item, "reason")).to_have_value(reason)
    save_screenshot(sidebar.panel, "sidebar-busy-kernel")

    # When the cell has ended
    # Then the note goes and the person can approve, with the reason kept
    expect(busy_note).to_be_hidden(timeout=15_000)
    expect(sidebar.part(item, "reason")).to_have_value(reason)
    pause_like_a_person(seen)
    sidebar.part(item, "approve").click()
    assert wait_for_verdict(page, request_id, "ok") == "Approved"


# The kernel counts an answer sooner than `min_answer_seconds` after the card was shown as
# auto-answered. Configuration may only make the limits stricter, so this test raises the
# minimum to 8 s in the kernels' IPython profile, written before the notebook's kernel starts:
# the sidebar must then wait those 8 s, not its default second, so that no click of a person
# lands in the kernel's floor. The file is removed after the test (try/finally in
# kernel_config), and the kernel is shut down, so the other tests run with the defaults. (An
# answer inside the floor over REST is still auto-answered: tests/server.)
MIN_ANSWER_S = 8.0


@pytest.mark.realtime
def test_the_sidebar_waits_out_a_kernels_stricter_reading_floor(
    lab_server: LabServer, notebook: Path, page: Page
):
    with lab_server.kernel_config(min_answer_seconds=MIN_ANSWER_S):
        # Given a kernel whose minimum answer time is 8 s, and the first call's card
        nb, cells, _card, seen = open_first_call(page, lab_server, notebook)
        request_id = request_id_shown(nb, cells.first_call)
        sidebar = Sidebar(page)
        sidebar.record_verdicts()
        sidebar.open()
        item = sidebar.item(request_id)
        expect(item).to_be_visible()
        approve = sidebar.part(item, "approve")

        # Then Approve stays off with a countdown, also after the default second
        expect(approve).to_be_disabled()
        expect(sidebar.part(item, "floor")).to_have_text(re.compile(r"^read first: \d s$"))
        time.sleep(2.0)
        assert time.monotonic() - seen < MIN_ANSWER_S - 2, "too slow to test the floor"
        expect(approve).to_be_disabled()
        save_screenshot(page, "sidebar-stricter-floor")

        # When the kernel's floor has passed, Then Approve works and counts
        expect(approve).to_be_enabled(timeout=(MIN_ANSWER_S + 5) * 1000)
        approve.click()
        assert wait_for_verdict(page, request_id, "ok") == "Approved"

        # And the next call runs once; the journal has the sidebar's answer, after the floor
        nb.run(cells.call_again)
        expect(nb.output(cells.call_again)).not_to_contain_text("ApprovalAutoAnswered")
        assert (notebook.parent / TARGET).exists()
        events = {line["event"]: line for line in lab_server.events_of(request_id)}
        assert events["approved"]["channel"] == "sidebar"
        assert events["approved"]["latency_ms"] >= MIN_ANSWER_S * 1000
        assert "auto_answered" not in events
        assert "executed" in events
        assert nb.errors == []


# Requests wait 10 minutes by default. To watch one time out, this test shortens the wait to
# 6 s in the kernels' IPython profile (stricter, so allowed), before the notebook's kernel
# starts; the file is removed afterwards.
REQUEST_TIMEOUT_S = 6.0


def test_the_badge_counts_requests_as_they_come_are_decided_and_time_out(
    lab_server: LabServer, notebook: Path, page: Page
):
    with lab_server.kernel_config(request_timeout=REQUEST_TIMEOUT_S):
        # Given the notebook open, with the sidebar closed
        cells = QuickstartCells.of(notebook)
        nb = NotebookPage.open(page, lab_server, notebook)
        sidebar = Sidebar(page)
        expect(sidebar.panel).to_be_hidden()
        sidebar.expect_badge(0)

        # When the first protected call asks for approval
        nb.run_all([*cells.setup, cells.first_call])
        expect(nb.card(cells.first_call)).to_be_visible()
        seen = time.monotonic()
        first = request_id_shown(nb, cells.first_call)

        # Then the badge on the closed sidebar's tab shows 1, and a notification says so
        sidebar.expect_badge(1)
        expect(sidebar.panel).to_be_hidden()
        expect(
            page.locator(TOAST).filter(
                has_text="Approval requested: table.write: Write quickstart-output/sales.csv"
            )
        ).to_be_visible()

        # When a second, different call asks too
        other = nb.run_new_cell(OTHER_CALL)
        expect(nb.card(other)).to_be_visible()
        second = request_id_shown(nb, other)
        assert second != first

        # Then the badge shows 2, and the notification now names the new request
        sidebar.expect_badge(2)
        expect(sidebar.panel).to_be_hidden()
        expect(
            page.locator(TOAST).filter(has_text="Write quickstart-output/other.csv")
        ).to_be_visible()

        # When the person opens the sidebar and approves the first one
        sidebar.open()
        expect(page.locator(TOAST)).to_have_count(0)  # opening it dismissed the notification
        expect(sidebar.items).to_have_count(2)
        pause_like_a_person(seen)
        sidebar.part(sidebar.item(first), "approve").click()

        # Then the badge shows 1, for the second request
        sidebar.expect_badge(1)
        expect(sidebar.items).to_have_count(1)
        expect(sidebar.item(second)).to_be_visible()
        [remaining] = lab_server.pending()
        assert remaining["id"] == second
        expires = datetime.fromisoformat(remaining["expires_at"].replace("Z", "+00:00"))

        # When nobody answers the second one before it times out
        # Then the badge goes (count 0) within about 2 s of its timeout
        until_timeout_s = expires.timestamp() - time.time()
        sidebar.expect_badge(0, timeout=(max(until_timeout_s, 0) + 2.5) * 1000)
        late_s = time.time() - expires.timestamp()
        assert late_s < 2.5, f"the badge went {late_s:.1f} s after the timeout"
        expect(sidebar.items).to_have_count(0)

        # And the journal says the first was approved from the sidebar, the second timed out
        approved = {line["event"]: line for line in lab_server.events_of(first)}["approved"]
        assert approved["channel"] == "sidebar"
        assert approved["latency_ms"] >= 1000
        assert "timed_out" in [line["event"] for line in lab_server.events_of(second)]
        save_screenshot(page, "sidebar-badge-after-timeout")
        assert nb.errors == []


def test_the_history_names_an_approval_the_kernel_recorded_with_another_summary(
    lab_server: LabServer, notebook: Path, page: Page
):
    # Given the first call's request listed in the sidebar, whose summary code in the kernel
    # then rewrote in the kernel's own record (T3: it patches the store, nothing re-lists it)
    nb, cells, _card, seen = open_first_call(page, lab_server, notebook)
    request_id = request_id_shown(nb, cells.first_call)
    sidebar = Sidebar(page)
    sidebar.open()
    item = sidebar.item(request_id)
    expect(item).to_be_visible()
    shown = sidebar.part(item, "summary").inner_text()
    nb.run_new_cell(
        "import jupyter_approvals.kernel.session as s; "
        f"s.KernelSession.current().store._table.lookup({request_id!r}).summary = "
        "'Write a harmless scratch file'"
    )
    # When the person approves the item as it was shown
    pause_like_a_person(seen)
    sidebar.part(item, "approve").click()
    expect(item).to_have_count(0, timeout=2 * POLL_S * 1000 + 1000)
    # Then the History tab names the disagreement above its entries: what the person
    # approved, and what the kernel recorded
    page.locator('[data-testid="jpa-sidebar-history-tab"]').click()
    found = page.locator('[data-testid="jpa-sidebar-history-disagreement"]')
    expect(found).to_have_count(1)
    expect(found).to_contain_text(f"{request_id}: summary rewritten")
    expect(found).to_contain_text(shown)
    expect(found).to_contain_text("harmless scratch")
    save_screenshot(sidebar.panel, "sidebar-history-disagreement")


def test_the_history_pages_older_and_newer_by_cursor(
    lab_server: LabServer, notebook: Path, page: Page
):
    # Given the notebook's project journal holding 120 entries, one request each
    from jupyter_approvals.core.project import journal_path, project_root_for

    journal = journal_path(project_root_for(notebook), lab_server.state_dir)
    journal.parent.mkdir(parents=True, exist_ok=True)
    with journal.open("a") as out:
        for n in range(120):
            entry = {
                "event": "approved",
                "time": f"2026-12-03T08:{n // 60:02d}:{n % 60:02d}.000Z",
                "request_id": f"{n:016x}",
                "summary": f"entry {n}",
            }
            out.write(json.dumps(entry) + "\n")
    NotebookPage.open(page, lab_server, notebook)
    Sidebar(page).open()
    page.locator('[data-testid="jpa-sidebar-history-tab"]').click()
    page.locator('[data-testid="jpa-sidebar-history-mode-events"]').click()
    entries = page.locator('[data-testid="jpa-sidebar-history-entry"]')
    newer = page.locator('[data-testid="jpa-sidebar-history-newer"]')
    older = page.locator('[data-testid="jpa-sidebar-history-older"]')
    expect(entries.first).to_have_attribute("data-request-id", f"{119:016x}")
    # When the person goes two pages older, then one newer
    older.click()
    expect(entries.first).to_have_attribute("data-request-id", f"{69:016x}")
    older.click()
    expect(entries.first).to_have_attribute("data-request-id", f"{19:016x}")
    expect(entries).to_have_count(20)
    expect(older).to_be_disabled()
    newer.click()
    # Then each page shows the entries just older than the one before, and back again
    expect(entries.first).to_have_attribute("data-request-id", f"{69:016x}")
    expect(entries.last).to_have_attribute("data-request-id", f"{20:016x}")
    expect(page.locator(".jpa-Sidebar-range")).to_have_text("51\u2013100")  # (an en dash)


def test_the_history_shows_one_row_per_request_with_its_lines_folded(
    lab_server: LabServer, notebook: Path, page: Page
):
    # Given the notebook's project journal: three requests whose lines interleave, one run
    # after a person approved it in the sidebar, one rejected in the card, one still pending
    from jupyter_approvals.core.project import journal_path, project_root_for

    journal = journal_path(project_root_for(notebook), lab_server.state_dir)
    journal.parent.mkdir(parents=True, exist_ok=True)
    here = str(notebook.resolve())
    lines = [
        ("a" * 16, "requested", 1, {"summary": "Overwrite sales.csv", "action": "file.write"}),
        ("b" * 16, "requested", 2, {"summary": "Delete old.csv", "action": "file.delete"}),
        ("a" * 16, "approved", 5, {"decided_by": "ana", "channel": "sidebar", "latency_ms": 2200}),
        ("b" * 16, "rejected", 6, {"decided_by": "ana", "channel": "card", "reason": "keep it"}),
        ("a" * 16, "executed", 7, {}),
        ("c" * 16, "requested", 9, {"summary": "Run git push", "action": "git.push"}),
    ]
    with journal.open("a") as out:
        for request_id, event, second, extra in lines:
            entry = {
                "event": event,
                "request_id": request_id,
                "notebook_path": here,
                "time": f"2026-12-03T09:00:{second:02d}.000Z",
                **extra,
            }
            out.write(json.dumps(entry) + "\n")
    NotebookPage.open(page, lab_server, notebook)
    Sidebar(page).open()
    # When the person opens the History
    page.locator('[data-testid="jpa-sidebar-history-tab"]').click()
    rows = page.locator('[data-testid="jpa-sidebar-history-request"]')
    # Then there is one row per request, newest first, each saying how it ended and who decided
    expect(rows).to_have_count(3)
    expect(rows.nth(0)).to_have_attribute("data-outcome", "pending")
    expect(rows.nth(1)).to_have_attribute("data-outcome", "executed")
    expect(rows.nth(1)).to_contain_text("Ran")
    expect(rows.nth(1)).to_contain_text("Overwrite sales.csv")
    expect(rows.nth(1)).to_contain_text("approved by ana in the sidebar after 2.2 s")
    expect(rows.nth(2)).to_contain_text("rejected by ana in the card")
    expect(rows.nth(2)).to_contain_text("reason: keep it")
    # And a row's journal lines unfold under it
    events = rows.nth(1).locator('[data-testid="jpa-sidebar-history-request-events"]')
    expect(events).to_be_hidden()
    rows.nth(1).locator('[data-testid="jpa-sidebar-history-request-toggle"]').click()
    expect(events.locator('[data-testid="jpa-sidebar-history-entry"]')).to_have_count(3)
    save_screenshot(
        Sidebar(page).panel,
        "sidebar-history-requests",
        doc=True,
        doc_path=DOC_IMAGES / "history.png",
    )
    # And the outcome filter and the search keep the rows they name
    page.locator('[data-testid="jpa-sidebar-history-outcome"]').select_option("rejected")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Delete old.csv")
    page.locator('[data-testid="jpa-sidebar-history-outcome"]').select_option("")
    search = page.locator('[data-testid="jpa-sidebar-history-action"]')
    search.fill("git push")
    search.press("Enter")
    expect(rows).to_have_count(1)
    expect(rows.first).to_have_attribute("data-request-id", "c" * 16)


@pytest.mark.realtime  # the first key press must come within the row's one-second floor
def test_the_focused_row_is_approved_from_the_keyboard_once_read(
    lab_server: LabServer, notebook: Path, page: Page
):
    # Given the first protected call's request, its sidebar row focused as soon as it shows
    nb, cells, _card, seen = open_first_call(page, lab_server, notebook)
    request_id = request_id_shown(nb, cells.first_call)
    sidebar = Sidebar(page)
    sidebar.record_verdicts()
    sidebar.open()
    item = sidebar.item(request_id)
    expect(item).to_be_visible()
    item.focus()
    # When the person presses the approve shortcut inside the reading floor
    page.keyboard.press("Control+Alt+a")
    # Then nothing is sent (the row's Approve is still waiting for the floor)
    expect(sidebar.part(item, "approve")).to_be_disabled()
    assert lab_server.pending()[0]["id"] == request_id
    # When they press it again once they could have read the request
    pause_like_a_person(seen)
    expect(sidebar.part(item, "approve")).to_be_enabled()
    item.focus()
    page.keyboard.press("Control+Alt+a")
    # Then that request is approved, as if its button was pressed
    assert wait_for_verdict(page, request_id, "ok") == "Approved"
    # And both commands are in the command palette
    page.keyboard.press("Control+Shift+c")
    palette = page.locator("#command-palette")
    palette.locator("input").fill("Focused Approval Request")
    expect(palette.locator(".lm-CommandPalette-item")).to_have_count(2)
