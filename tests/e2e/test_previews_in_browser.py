"""Structured previews as a person reads them, at 1400x900, in the card and the sidebar.

A notebook calls each ready operation on real files, a real SQLite database and a real
command; each card and each sidebar row must show its headline counts without scrolling, a
hostile preview must be shown as text, and in the dark theme every text must keep a contrast
of at least 4.5:1 against what is behind it, computed from the page's own styles.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import Locator, Page, expect

from tests.e2e.lab import CARD, DOC_IMAGES, LabServer, NotebookPage, Sidebar, save_screenshot

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("no_other_kernels")]

expect.set_options(timeout=20_000)

SETUP = """\
import sqlite3
from pathlib import Path

import pandas as pd
from jupyter_approvals import ops, protected
from jupyter_approvals.previews.structured import Preview, StructuredPreview

Path("data").mkdir(exist_ok=True)
Path("data/report.txt").write_text("".join(f"line {n}\\n" for n in range(1, 60)))
pd.DataFrame({"id": [1, 2, 3, 4, 5], "units": [10, 20, 30, 40, 50]}).to_csv(
    "data/orders.csv", index=False
)
with sqlite3.connect("shop.db") as con:
    con.execute("create table if not exists stock(id integer, qty integer)")
    con.execute("delete from stock")
    con.executemany("insert into stock values (?, ?)", [(i, i * 10) for i in range(20)])
Path("data/old.txt").write_text("to move\\n")

import subprocess
def git(*args):
    subprocess.run(["git", "-C", "repo", *args], check=True, capture_output=True)
subprocess.run(["git", "init", "-q", "-b", "main", "repo"], check=True)
subprocess.run(["git", "init", "-q", "--bare", "-b", "main", "remote.git"], check=True)
git("config", "user.name", "Ana Lima")
git("config", "user.email", "ana@example.org")
Path("repo/notes.txt").write_text("one\\ntwo\\n")
git("add", "notes.txt")
git("commit", "-q", "-m", "first")
git("remote", "add", "origin", "../remote.git")
git("push", "-q", "origin", "main")
Path("repo/notes.txt").write_text("one\\ntwo\\nthree\\n")
git("commit", "-q", "-am", "second, not pushed yet")
Path("repo/notes.txt").write_text("one\\n2\\nthree\\n")
git("add", "notes.txt")
"""

#: One call per ready operation, each left pending: (name, code).
CALLS = [
    (
        "file.write",
        'ops.write_file("data/report.txt", "".join(f"line {n}{\' changed\' if n in (5, 30, 55) '
        "else ''}\\n\" for n in range(1, 60)))",
    ),
    (
        "table.write",
        'ops.write_table(pd.DataFrame({"id": [1, 2, 3, 6, 7], "units": [10, 25, 30, 60, 70]}), '
        '"data/orders.csv", key="id")',
    ),
    ("sql.execute", 'ops.execute_sql("sqlite:///shop.db", "delete from stock where qty > 100")'),
    ("shell.run", 'ops.run_command(["ls", "-l", "data"])'),
    (
        "http.request",
        'ops.http_request("POST", "https://example.org/api/upload", json={"rows": 3})',
    ),
    ("file.delete", 'ops.delete_path("data/orders.csv")'),
    ("file.move", 'ops.move_path("data/old.txt", "data/moved.txt")'),
    (
        "table.to_sql",
        'ops.to_sql(pd.DataFrame({"id": [30, 31], "qty": [1, 2]}), "stock", "sqlite:///shop.db", '
        'if_exists="append")',
    ),
    ("git.commit", 'ops.git_commit("Refresh the notes", repo="repo")'),
    ("git.push", 'ops.git_push(repo="repo")'),
]

#: Operations whose preview counts nothing: a plain command's argv is its first block.
WITHOUT_COUNTS = {"shell.run"}

HOSTILE_VALUE = '<img src=x onerror="window.hacked=1"><script>window.hacked=2</script>'
HOSTILE = f"""\
from jupyter_approvals import protected
from jupyter_approvals.previews.structured import Preview, StructuredPreview

def hostile_preview(name):
    built = StructuredPreview()
    built.count("rows to change", 1, "changed")
    table = built.table([("id", "int64", True), ("name", "object", False)], title="Changed rows")
    table.row("changed", ["5", ("old", {HOSTILE_VALUE!r} + name)])
    built.lines(["x" * 10_000, "right-to-left: \\u202eexe.txt"])
    return Preview("hostile " + name, built.document())

@protected("demo.hostile", preview=hostile_preview)
def hostile(name):
    return name

hostile("<b>bold</b>")
"""


def _notebook(server: LabServer, cells: list[str]) -> Path:
    project = Path(tempfile.mkdtemp(prefix="previews-", dir=server.root))
    path = project / "previews.ipynb"
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(code) for code in cells]
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    nbformat.write(notebook, path)
    return path


def _headline_readable(headline: Locator) -> dict[str, float]:
    """Where the headline is against the viewport and its scrolling box."""
    return headline.evaluate(
        """node => {
            const box = node.closest('.jpa-preview-body, .jpa-Sidebar-previewBody');
            const r = node.getBoundingClientRect();
            const b = box.getBoundingClientRect();
            return {top: r.top, bottom: r.bottom, boxTop: b.top, boxBottom: b.bottom,
                    viewport: window.innerHeight, scrolled: box.scrollTop, height: r.height};
        }"""
    )


def _assert_visible_without_scrolling(headline: Locator, where: str) -> None:
    place = _headline_readable(headline)
    assert place["height"] > 0, (where, place)
    assert place["scrolled"] == 0, (where, place)
    assert place["boxTop"] <= place["top"], (where, place)
    assert place["bottom"] <= place["boxBottom"], (where, place)
    assert place["top"] >= 0, (where, place)
    assert place["bottom"] <= place["viewport"], (where, place)


def test_every_operation_shows_its_headline_counts_without_scrolling(
    lab_server: LabServer, wide_page: Page
):
    # Given a notebook that calls each ready operation once, each call left pending
    path = _notebook(lab_server, [SETUP, *(code for _, code in CALLS)])
    nb = NotebookPage.open(wide_page, lab_server, path)
    nb.run(0)
    for index in range(1, len(CALLS) + 1):
        nb.run(index)
    sidebar = Sidebar(wide_page)
    sidebar.open()
    for index, (action, _) in enumerate(CALLS, start=1):
        # Then each card shows the structured preview with its counts first, in view (a
        # plain command has none: its argv, shown first, says it all)
        card = nb.card(index)
        expect(card.locator(".jpa-action")).to_have_text(action)
        card.scroll_into_view_if_needed()
        headline = card.locator('[data-testid="jpa-sp-headline"]')
        if action in WITHOUT_COUNTS:
            expect(card.locator('[data-testid="jpa-structured"]')).to_be_visible()
            expect(headline).to_have_count(0)
            continue
        expect(headline).to_be_visible()
        _assert_visible_without_scrolling(headline, f"card of {action}")
        # And so does its sidebar row, once scrolled to
        item = sidebar.items.filter(has_text=action).first
        item.scroll_into_view_if_needed()
        row_headline = item.locator('[data-testid="jpa-sp-headline"]')
        expect(row_headline).to_be_visible()
        _assert_visible_without_scrolling(row_headline, f"sidebar row of {action}")
        assert row_headline.inner_text() == headline.inner_text(), action
    http_card = nb.card(1 + [action for action, _ in CALLS].index("http.request"))
    http_card.scroll_into_view_if_needed()
    expect(http_card.get_by_role("button", name="Approve", exact=True)).to_be_enabled()
    save_screenshot(
        wide_page, "previews-every-operation", doc=True, doc_path=DOC_IMAGES / "previews.png"
    )
    # And in the sidebar every file name stays whole: a path wraps only at its separators
    for name in ("report.txt", "orders.csv"):
        broken = sidebar.panel.evaluate(WORD_BROKEN, name)
        assert broken == [], (name, broken)


#: The texts under ``root`` in which ``word`` is drawn on more than one line.
WORD_BROKEN = """(root, word) => {
    const broken = [];
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let text = walker.nextNode(); text; text = walker.nextNode()) {
        const at = text.textContent.indexOf(word);
        if (at < 0 || !text.parentElement.getClientRects().length) continue;
        const range = document.createRange();
        range.setStart(text, at);
        range.setEnd(text, at + word.length);
        const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
        if (tops.size > 1) broken.push(text.parentElement.className);
    }
    return broken;
}"""


def test_a_hostile_preview_is_shown_as_text_in_the_card_and_the_sidebar(
    lab_server: LabServer, wide_page: Page
):
    # Given a protected call whose structured preview carries markup, script, a
    # right-to-left override and a 10,000-character line
    path = _notebook(lab_server, [HOSTILE])
    nb = NotebookPage.open(wide_page, lab_server, path)
    nb.run(0)
    card = nb.card(0)
    expect(card).to_be_visible()
    sidebar = Sidebar(wide_page)
    sidebar.open()
    item = sidebar.items.filter(has_text="demo.hostile").first
    expect(item).to_be_visible()
    for where, root in (("card", card), ("sidebar", item)):
        structured = root.locator('[data-testid="jpa-structured"]')
        # Then the markup is text: no element of it exists, no script ran
        expect(structured.locator("ins")).to_have_text(HOSTILE_VALUE + "<b>bold</b>")
        assert structured.locator("img, script").count() == 0, where
        assert structured.locator("b", has_text="bold").count() == 0, where
        # And the override is a visible marker, the long line is cut and says so
        root.scroll_into_view_if_needed()
        text = structured.inner_text()
        assert "⟦U+202E⟧" in text, where
        assert "\u202e" not in text, where
        assert "(9,600 more characters)" in text, where
    assert wide_page.evaluate("window.hacked") is None


CONTRAST = """roots => {
    const parse = value => {
        const m = value.match(/rgba?\\(([^)]+)\\)/);
        if (m) {
            const p = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
            return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
        }
        const c = value.match(/color\\(srgb ([^)]+)\\)/);
        if (c) {
            const p = c[1].split(/[ /]+/).filter(Boolean).map(Number);
            return [p[0] * 255, p[1] * 255, p[2] * 255, p.length > 3 ? p[3] : 1];
        }
        return [0, 0, 0, 0];
    };
    const over = (top, bottom) => {
        const a = top[3] + bottom[3] * (1 - top[3]);
        if (a === 0) return [0, 0, 0, 0];
        const mix = i => (top[i] * top[3] + bottom[i] * bottom[3] * (1 - top[3])) / a;
        return [mix(0), mix(1), mix(2), a];
    };
    const background = node => {
        const layers = [];
        for (let at = node; at; at = at.parentElement) {
            const color = parse(getComputedStyle(at).backgroundColor);
            if (color[3] > 0) layers.push(color);
            if (color[3] >= 1) break;
        }
        let result = [255, 255, 255, 1];
        for (const layer of layers.reverse()) result = over(layer, result);
        return result;
    };
    const luminance = c => {
        const ch = c.slice(0, 3).map(v => {
            const s = v / 255;
            return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
        });
        return 0.2126 * ch[0] + 0.7152 * ch[1] + 0.0722 * ch[2];
    };
    const failures = [];
    let checked = 0;
    for (const root of roots) {
        const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
        for (let text = walker.nextNode(); text; text = walker.nextNode()) {
            const node = text.parentElement;
            if (!text.textContent.trim() || !node || !node.getClientRects().length) continue;
            if (node.closest('button:disabled, input:disabled')) continue;  // WCAG: inactive
            const style = getComputedStyle(node);
            if (style.visibility === 'hidden') continue;
            const back = background(node);
            const fore = over(parse(style.color), back);
            const [hi, lo] = [luminance(fore), luminance(back)].sort((a, b) => b - a);
            const ratio = (hi + 0.05) / (lo + 0.05);
            checked += 1;
            if (ratio < 4.5) {
                failures.push({text: text.textContent.trim().slice(0, 40),
                               cls: node.className, ratio: Math.round(ratio * 100) / 100});
            }
        }
    }
    return {checked, failures};
}"""


def test_in_the_dark_theme_every_text_keeps_a_contrast_of_4_5(
    lab_server: LabServer, wide_page: Page
):
    # Given JupyterLab in its dark theme, with a file diff and a table change pending
    themes = "/lab/api/settings/@jupyterlab/apputils-extension:themes"
    dark = json.dumps({"raw": json.dumps({"theme": "JupyterLab Dark"})}).encode()
    lab_server.api(themes, "PUT", dark)
    try:
        path = _notebook(lab_server, [SETUP, CALLS[0][1], CALLS[1][1]])
        nb = NotebookPage.open(wide_page, lab_server, path)
        expect(wide_page.locator("body")).to_have_attribute("data-jp-theme-light", "false")
        for index in range(3):
            nb.run(index)
        sidebar = Sidebar(wide_page)
        sidebar.open()
        expect(sidebar.items).to_have_count(2)
        expect(nb.card(2).locator('[data-testid="jpa-structured"]')).to_be_visible()
        # When the reading floor has passed (the buttons are live)
        expect(nb.card(2).get_by_role("button", name="Approve", exact=True)).to_be_enabled()
        # Then every text of the cards and the sidebar has a contrast of at least 4.5:1
        roots = wide_page.locator(f"{CARD}, [data-testid='jpa-sidebar']")
        result = roots.evaluate_all(CONTRAST)
        save_screenshot(wide_page, "previews-dark-theme")
        assert result["checked"] > 50, result
        assert not result["failures"], json.dumps(result["failures"], indent=0)
    finally:
        light = json.dumps({"raw": json.dumps({"theme": "JupyterLab Light"})}).encode()
        lab_server.api(themes, "PUT", light)


def test_a_preview_opens_full_size_in_a_main_area_tab_from_the_sidebar_and_the_card(
    lab_server: LabServer, wide_page: Page
):
    # Given a pending file write, shown in its card and in the sidebar
    path = _notebook(lab_server, [SETUP, CALLS[0][1]])
    nb = NotebookPage.open(wide_page, lab_server, path)
    nb.run(0)
    nb.run(1)
    card = nb.card(1)
    expect(card.locator('[data-testid="jpa-structured"]')).to_be_visible()
    counts = str(card.locator('[data-testid="jpa-sp-headline"]').text_content())
    sidebar = Sidebar(wide_page)
    sidebar.open()
    item = sidebar.items.filter(has_text="file.write").first
    panels = wide_page.locator('[data-testid="jpa-preview-panel"]')
    # When the person opens the preview full size from the sidebar row
    sidebar.part(item, "open-preview").click()
    # Then a main-area tab shows it, counts first, with the request's fingerprint
    expect(panels).to_have_count(1)
    panel = panels.first
    expect(panel).to_be_visible()
    expect(panel.locator('[data-testid="jpa-sp-headline"]')).to_have_text(counts)
    fingerprint = sidebar.part(item, "fingerprint").get_attribute("data-fingerprint")
    expect(panel).to_contain_text(str(fingerprint))
    tab = wide_page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text="Preview: file.write")
    expect(tab).to_have_count(1)
    save_screenshot(wide_page, "preview-full-size-tab")
    # When the person goes back to the notebook and opens it full size from the card
    wide_page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text="previews.ipynb").click()
    card.get_by_role("button", name="open full size").click()
    # Then the same tab comes forward; no second one opens
    expect(panel).to_be_visible()
    expect(panels).to_have_count(1)
    expect(tab).to_have_count(1)


def test_a_git_commit_card_leads_with_its_files_and_flags_a_staged_secret(
    lab_server: LabServer, wide_page: Page
):
    # Given a repository where a notebook and an .env file holding an AWS key are staged
    staged = SETUP + (
        'Path("repo/.env").write_text("AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\\n")\n'
        'git("add", ".env")\n'
    )
    path = _notebook(lab_server, [staged, 'ops.git_commit("Add the analysis", repo="repo")'])
    nb = NotebookPage.open(wide_page, lab_server, path)
    nb.run(0)
    nb.run(1)
    card = nb.card(1)
    expect(card.locator(".jpa-action")).to_have_text("git.commit")
    card.scroll_into_view_if_needed()
    # Then its first count says a file may hold secrets
    first = card.locator('[data-testid="jpa-sp-headline"] > *').first
    expect(first).to_have_text("1 file that may hold secrets")
    # And the files, the .env among them with why, show in view without scrolling the box,
    # and so do the buttons
    files = card.locator(".jpa-sp-paths-block")
    expect(files).to_contain_text(".env")
    expect(files).to_contain_text("may hold secrets: an environment file")
    _assert_visible_without_scrolling(files, "files of the git.commit card")
    approve = card.get_by_role("button", name="Approve", exact=True)
    box = approve.bounding_box()
    assert box is not None
    assert box["y"] >= 0, box
    assert box["y"] + box["height"] <= 900, box
    # And the argv and the git settings wait, closed, after the patch
    folded = card.locator('[data-testid="jpa-sp-folded"]')
    expect(folded).to_contain_text("How it runs: runs (argv), git settings")
    assert folded.evaluate("node => node.open") is False
    expect(card.locator(".jpa-sp-argv")).to_be_hidden()
    save_screenshot(
        card, "git-commit-card-leads-with-files", doc=True, doc_path=DOC_IMAGES / "git-commit.png"
    )
