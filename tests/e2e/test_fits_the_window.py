"""Each ready operation's card and sidebar row, at 1400x900 in JupyterLab and Notebook 7: what
will change and the buttons show at once, without scrolling anything.

Measured from the page's own layout: with the card (or the row) brought to the top of the
area it scrolls in, the start of the block that says what will change (the diff, the rows,
the statement, the request, the files, the commits, the command) and its Approve and Reject
buttons must lie inside the viewport and inside every box around them that clips (a preview
is folded, never scrolled); and no box inside them scrolls.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.e2e.lab import LabServer, NotebookPage, Sidebar
from tests.e2e.test_notebook7 import open_in_notebook7, show_approvals_from_the_view_menu
from tests.e2e.test_previews_in_browser import CALLS, SETUP, _notebook

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("no_other_kernels")]

expect.set_options(timeout=20_000)

#: How much of the change block must show at least: a title and its first lines.
CHANGE_SHOWN_PX = 60

#: Where ``node`` lies against the part of the window it can be seen in: the viewport cut
#: by every ancestor that clips what overflows it (the notebook, the sidebar, a folded
#: preview).
PLACE = """node => {
    let top = 0, bottom = window.innerHeight;
    // The page itself (body, html) is the viewport's.
    for (let up = node.parentElement; up && up !== document.body; up = up.parentElement) {
        if (/(auto|scroll|hidden|clip)/.test(getComputedStyle(up).overflowY)) {
            const box = up.getBoundingClientRect();
            top = Math.max(top, box.top);
            bottom = Math.min(bottom, box.bottom);
        }
    }
    const r = node.getBoundingClientRect();
    return {top: r.top, bottom: r.bottom, height: r.height, seenTop: top, seenBottom: bottom};
}"""

#: A write whose diff is far taller than a card: every line of the file changes.
TALL = (
    "file.write",
    'ops.write_file("data/report.txt", "".join(f"row {n}\\n" for n in range(1, 60)))',
)

#: The boxes under ``root`` that scroll what they hold (a bar of their own), as class names.
SCROLLING = """root => [...root.querySelectorAll('*')]
    .filter(node => /(auto|scroll)/.test(getComputedStyle(node).overflowY)
                    && node.scrollHeight > node.clientHeight + 1)
    .map(node => node.className)"""

#: Bring ``node`` to the top of the area it scrolls in, as a person scrolling to it would
#: (only that area: ``scrollIntoView`` would also shift boxes that merely clip, the page's own
#: layout among them).
TO_THE_TOP = """node => {
    for (let up = node.parentElement; up; up = up.parentElement) {
        if (/(auto|scroll)/.test(getComputedStyle(up).overflowY)
            && up.scrollHeight > up.clientHeight) {
            up.scrollTop += node.getBoundingClientRect().top - up.getBoundingClientRect().top;
            return;
        }
    }
}"""


def _assert_change_shown(change: Locator, where: str) -> None:
    place = change.evaluate(PLACE)
    assert place["height"] > 0, (where, place)
    assert place["seenTop"] <= place["top"], (where, place)
    assert place["top"] + min(place["height"], CHANGE_SHOWN_PX) <= place["seenBottom"], (
        where,
        place,
    )


def _assert_whole(node: Locator, where: str) -> None:
    place = node.evaluate(PLACE)
    assert place["height"] > 0, (where, place)
    assert place["seenTop"] <= place["top"], (where, place)
    assert place["bottom"] <= place["seenBottom"], (where, place)


#: Each operation's block that says what will change (not where, nor how it runs).
CHANGE_BLOCK = {
    "file.write": "diff",
    "table.write": "table",
    "sql.execute": "code",
    "shell.run": "argv",
    "http.request": "request",
    "file.delete": "facts",  # the path to delete and what it holds
    "file.move": "facts",  # from and to
    "table.to_sql": "table",
    "git.commit": "paths",  # the files committed, the secret-looking one flagged
    "git.push": "table",  # the commits pushed
}


def _change(root: Locator, action: str) -> Locator:
    """The first block of ``action``'s structured preview that says what will change."""
    kind = CHANGE_BLOCK[action]
    return root.locator(f'[data-testid="jpa-structured"] > .jpa-sp-{kind}-block').first


# Notebook 7 first: its notebook page throws "Command 'filebrowser:open-path' not registered"
# (from its own bundle) once JupyterLab has shown a notebook in a folder on the same server,
# even with JupyterLab's saved layout deleted; each test module has a server of its own.
@pytest.mark.parametrize("ui", ["notebook7", "jupyterlab"])
def test_every_operation_shows_what_changes_and_its_buttons_without_scrolling(
    lab_server: LabServer, wide_page: Page, ui: str
):
    # Given a notebook that calls each ready operation once, each call left pending, open
    # in the given UI with the Approvals sidebar shown
    calls = [*CALLS, TALL]
    path = _notebook(lab_server, [SETUP, *(code for _, code in calls)])
    if ui == "notebook7":
        nb = open_in_notebook7(wide_page, lab_server, path)
    else:
        nb = NotebookPage.open(wide_page, lab_server, path)
    nb.run(0)
    for index in range(1, len(calls) + 1):
        nb.run(index)
    sidebar = Sidebar(wide_page)
    if ui == "notebook7":
        show_approvals_from_the_view_menu(wide_page)
        expect(sidebar.panel).to_be_visible()
    else:
        sidebar.open()
    for index, (action, _) in enumerate(calls, start=1):
        card = nb.card(index)
        expect(card.locator(".jpa-action")).to_have_text(action)
        approve = card.get_by_role("button", name="Approve", exact=True)
        expect(approve).to_be_enabled()
        # When the person scrolls the notebook to the card
        card.evaluate(TO_THE_TOP)
        # Then what will change and both buttons show together, nothing scrolled inside it
        _assert_change_shown(_change(card, action), f"{ui}: card of {action}")
        _assert_whole(approve, f"{ui}: Approve of the {action} card")
        _assert_whole(
            card.get_by_role("button", name="Reject", exact=True), f"{ui}: Reject of {action}"
        )
        assert card.evaluate(SCROLLING) == [], f"{ui}: a box scrolls inside the {action} card"
        # And so do they in its sidebar row, scrolled to
        request_id = card.get_attribute("data-request-id")
        row = sidebar.item(str(request_id))
        expect(row).to_be_visible()
        row.evaluate(TO_THE_TOP)
        _assert_change_shown(_change(row, action), f"{ui}: sidebar row of {action}")
        _assert_whole(sidebar.part(row, "approve"), f"{ui}: sidebar Approve of {action}")
        _assert_whole(sidebar.part(row, "reject"), f"{ui}: sidebar Reject of {action}")
        assert row.evaluate(SCROLLING) == [], f"{ui}: a box scrolls inside the {action} row"

    # And the tall one is cut, not scrolled: its button shows the rest in place
    tall = nb.card(len(calls))
    more = tall.locator('[data-testid="jpa-sp-more"]')
    expect(more).to_have_text("Show the whole preview")
    tall.evaluate(TO_THE_TOP)
    _assert_whole(more, f"{ui}: the button showing the rest of a tall card")
    more.click()
    expect(more).to_have_text("Show less of the preview")
    last_line = tall.locator(".jpa-sp-line").last
    expect(last_line).to_contain_text("row 59")
    last_line.scroll_into_view_if_needed()
    _assert_whole(last_line, f"{ui}: the last line of a tall card, shown in place")
    assert tall.evaluate(SCROLLING) == []
    assert nb.errors == []
