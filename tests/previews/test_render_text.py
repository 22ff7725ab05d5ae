"""The text preview rendered from the structured one: every block readable, bounded, cuts said."""

from __future__ import annotations

import random
import re

from jupyter_approvals.core.structured import checked_structured
from jupyter_approvals.previews.line_diff import add_diff, diff_lines, split_lines, unified_lines
from jupyter_approvals.previews.render_text import WRAP, preview_of, render_text
from jupyter_approvals.previews.structured import STRUCTURED_BUDGET, StructuredPreview
from jupyter_approvals.previews.text import LINE_BUDGET, PREVIEW_BUDGET, Deadline


def test_every_kind_of_block_is_written_once_in_document_order():
    # Given a document with a headline, one block of each kind, a count left out and a note
    shown = StructuredPreview()
    shown.count("rows to add", 2, "added")
    shown.count("rows to remove", 1, "removed")
    shown.facts([("path:file", "/data/out.csv"), ("change", "Replace")])
    shown.argv(["git", "commit", "-m", "two words"], title="runs (argv)")
    shown.request("POST", "https://example.org/api?q=1")
    shown.code("SELECT 1;\nSELECT 2;", "sql", title="statement")
    table = shown.table([("id", "int64", True), ("name", "object", False)], title="Rows")
    assert table is not None
    table.row("added", ["3", "cy"])
    table.row("changed", ["2", ("bob", "bea")])
    table.row("removed", ["1", "ann"])
    paths = shown.paths("Inside")
    assert paths is not None
    paths.add("sub/", "directory")
    shown.lines(["plain line"], title="log")
    shown.left_out(1, "commits")
    shown.note("Tags are not pushed.")
    # When rendered
    text = render_text(shown.document())
    # Then each fact appears once, in the document's order, under its block's title
    assert text == (
        "2 rows to add, 1 row to remove\n"
        "file: /data/out.csv\n"
        "change: Replace\n"
        "runs (argv):\n"
        "  git commit -m 'two words'\n"
        "POST https://example.org/api?q=1\n"
        "statement:\n"
        "  SELECT 1;\n"
        "  SELECT 2;\n"
        "Rows:\n"
        "    id [key] (int64) | name (object)\n"
        "  + 3 | cy\n"
        "  ~ 2 | bob -> bea\n"
        "  - 1 | ann\n"
        "Inside:\n"
        "  sub/  directory\n"
        "log:\n"
        "  plain line\n"
        "… 1 more commit not shown\n"
        "Tags are not pushed."
    )


def test_a_diff_renders_as_the_unified_diff_of_its_content():
    # Given random edits of a text, some without a final newline
    rng = random.Random(7)
    for _ in range(30):
        old = [f"line {rng.randrange(40)}\n" for _ in range(rng.randrange(1, 60))]
        new = [line for line in old if rng.random() > 0.2]
        for _ in range(rng.randrange(4)):
            new.insert(rng.randrange(len(new) + 1), f"new {rng.randrange(9)}\n")
        # When diffed into a document and rendered
        structured = StructuredPreview()
        add_diff(structured, "".join(old).encode(), "".join(new).encode(), "a", "b", Deadline())
        text = render_text(structured.document())
        # Then, after the counts, the text is the unified diff the engine writes
        diff = diff_lines(split_lines("".join(old).encode()), split_lines("".join(new).encode()))
        expected = list(unified_lines(diff, "a", "b"))
        assert text.split("\n")[1:] == expected


def test_a_value_cannot_start_a_line_of_its_own():
    # Given a file name with a newline and a terminal escape in it
    shown = StructuredPreview()
    shown.facts([("path:file", "a\nchange: nothing\x1b[2K")])
    paths = shown.paths("Inside")
    assert paths is not None
    paths.add("x\ny", "2 bytes")
    # When rendered
    text = render_text(shown.document())
    # Then each value stays on its line, its control characters written as escapes
    assert text.split("\n") == [
        "file: a\\nchange: nothing\\x1b[2K",
        "Inside:",
        "  x\\ny  2 bytes",
    ]


def test_long_blocks_share_the_room_so_short_facts_after_them_are_kept():
    # Given a code block far longer than the text's budget, with facts after it
    shown = StructuredPreview()
    shown.code("\n".join(f"echo {n}" for n in range(2_500)), "shell", title="command")
    shown.facts([("program", "/bin/sh"), ("timeout", "none")])
    # When rendered
    text = render_text(shown.document())
    # Then the facts are all there, the code is cut and the cut counted
    assert len(text) <= PREVIEW_BUDGET
    assert "program: /bin/sh\ntimeout: none" in text
    [cut] = re.findall(r"… ([\d,]+) more code lines not shown", text)
    assert text.count("\n  echo ") + int(cut.replace(",", "")) == 2_500


def test_two_long_blocks_get_about_the_same_room():
    # Given two lists of long paths, each longer than the text's budget
    shown = StructuredPreview()
    for title in ("first", "second"):
        paths = shown.paths(title)
        assert paths is not None
        for n in range(45):
            assert paths.add(f"{title}/{'d' * 300}/{n:03}.csv", "12 bytes")
    # When rendered
    text = render_text(shown.document())
    # Then each shows part of its list, in a share of about the same size
    first, second = text.count("\n  first/"), text.count("\n  second/")
    assert 10 < first < 45
    assert abs(first - second) <= 1
    assert f"… {90 - first - second:,} more paths not shown" in text


def test_the_documents_count_and_the_texts_own_cut_are_one_line():
    # Given a listing the document already cut, then cut again by the text
    shown = StructuredPreview()
    paths = shown.paths("Inside")
    assert paths is not None
    total = 30_000
    for n in range(total):
        if not paths.add(f"folder/file-{n:05}.csv", "1 byte"):
            shown.left_out(total - n - 1, "paths")
            break
    document = shown.document()
    # When rendered
    text = render_text(document)
    # Then one line counts every path not in the text, whichever side left it out
    [line] = [line for line in text.split("\n") if line.startswith("…")]
    assert line == f"… {total - text.count(chr(10) + '  folder/'):,} more paths not shown"


def test_a_document_near_its_budget_renders_within_the_text_budget():
    # Given a document filled to its budget with long facts, lines, notes and a code line
    shown = StructuredPreview()
    shown.code("x" * 30_000, "text", title="one long line")
    shown.facts((f"label {n}", "v" * 900) for n in range(200))
    for n in range(40):
        shown.note(f"note {n}: " + "n" * 500)
    document = shown.document()
    assert checked_structured(document, 64_000) is not None
    assert shown.full
    # When rendered
    text = render_text(document)
    # Then the text keeps its budget, its lines are bounded, and the cuts are announced
    assert len(text) <= PREVIEW_BUDGET
    assert max(len(line) for line in text.split("\n")) <= 2 * LINE_BUDGET + 140
    assert "more characters)" in text
    assert text.endswith("… the rest of this preview is not shown")


def test_preview_of_gives_the_document_and_its_text():
    # Given a structured preview
    shown = StructuredPreview()
    shown.count("files to delete", 1, "removed")
    shown.facts([("path:delete", "/tmp/a")])
    # When made into a preview
    preview = preview_of(shown)
    # Then it carries the document and the text rendered from it
    assert preview.structured == shown.document()
    assert preview.text == "1 file to delete\ndelete: /tmp/a"
    assert len(render_text(shown.document())) < STRUCTURED_BUDGET


def test_a_long_code_line_is_wrapped_so_every_character_stays_in_sight():
    # Given a statement whose second part hides after 400 spaces
    shown = StructuredPreview()
    statement = "SELECT 1;" + " " * 400 + "DROP TABLE sales;"
    shown.code(statement, "sql", title="Statement")
    # When rendered
    lines = render_text(shown.document()).split("\n")
    # Then the line continues on marked lines, nothing of it cut
    assert lines[0] == "Statement:"
    assert all(len(line) <= WRAP + 4 for line in lines)
    assert lines[1][2:] + "".join(line.removeprefix("  ↪ ") for line in lines[2:]) == statement
    assert lines[-1].endswith("DROP TABLE sales;")


def test_a_block_placed_last_follows_later_blocks_and_keeps_its_room():
    # Given a preview whose facts, built first, are placed last, and then many lines of what
    # changes, far more than the budget
    structured = StructuredPreview(budget=2_000)
    structured.facts([("repository", "/srv/repo")], last=True)
    structured.lines([f"changed line {n}" for n in range(1_000)], title="what changes")
    # When the document is made
    blocks = structured.document()["blocks"]
    # Then what changes leads, the facts follow, and the cut fell on the lines, not on them
    assert [block["type"] for block in blocks] == ["text", "facts"]
    assert blocks[1]["items"] == [{"label": "repository", "value": "/srv/repo", "path": False}]
    assert len(blocks[0]["lines"]) < 1_000
