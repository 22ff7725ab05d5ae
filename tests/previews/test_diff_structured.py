"""The structured form of the line diff: counts first, hunks with line numbers, changed words."""

from __future__ import annotations

import json
import math
import re

from jupyter_approvals.core.structured import checked_structured
from jupyter_approvals.previews.file_tree import Entry, add_listing, add_tree_counts
from jupyter_approvals.previews.line_diff import add_diff, changed_words
from jupyter_approvals.previews.render_text import render_text
from jupyter_approvals.previews.structured import STRUCTURED_BUDGET, StructuredPreview
from jupyter_approvals.previews.text import LINE_BUDGET, PREVIEW_BUDGET, Deadline

#: No time budget: these tests count the whole comparison, which a slow machine must not cut.
UNHURRIED = Deadline(math.inf)

OLD = b"id,name\n1,ann\n2,bob\n3,cy\n4,dd\n5,e\n6,f\n7,g\n8,h\n9,i\n10,j"
NEW = b"id,name\n1,ann\n2,bea\n3,cy\n4,dd\n5,e\n6,f\n7,g\n8,h\nnew\n9,i\n10,k"


def both(old: bytes, new: bytes, deadline: Deadline | None = None) -> tuple[str, dict]:
    """The text rendered from the structured form, and the structured form."""
    structured = StructuredPreview()
    add_diff(structured, old, new, "a (current)", "a (new)", deadline or Deadline())
    document = structured.document()
    return render_text(document), document


def hunk_lines(document: dict) -> list[tuple[str, int | None, int | None, list]]:
    [diff] = [block for block in document["blocks"] if block["type"] == "diff"]
    return [
        (line["op"], line["old"], line["new"], [(p["text"], p["changed"]) for p in line["parts"]])
        for hunk in diff["hunks"]
        for line in hunk["lines"]
    ]


def test_the_counts_come_first_and_each_line_has_both_sides_numbers():
    # Given a file with a changed row, an inserted row and a changed last line
    # When diffed with a structured form
    text, document = both(OLD, NEW)
    # Then the headline counts the added and removed lines
    assert document["headline"] == [
        {"label": "lines to add", "count": 3, "tone": "added"},
        {"label": "lines to remove", "count": 2, "tone": "removed"},
    ]
    # And the hunk names both paths and starts at line 1 on both sides
    [diff] = document["blocks"]
    assert (diff["old_path"], diff["new_path"]) == ("a (current)", "a (new)")
    assert [(h["old_start"], h["new_start"]) for h in diff["hunks"]] == [(1, 1)]
    lines = hunk_lines(document)
    # And a changed line is a removed line then an added one, the differing word marked
    assert lines[2] == ("removed", 3, None, [("2,", False), ("bob", True)])
    assert lines[3] == ("added", None, 3, [("2,", False), ("bea", True)])
    # And context after an insertion is numbered on each side
    assert lines[10] == ("added", None, 10, [("new", False)])
    assert lines[11] == ("context", 10, 11, [("9,i", False)])
    assert lines[12] == ("removed", 11, None, [("10,", False), ("j", True)])
    # And the missing last newline is said in a note, not mixed into the line
    assert document["notes"] == [
        "No newline at the end of a (current).",
        "No newline at the end of a (new).",
    ]
    # And it passes the store's check unchanged, and its text is the unified diff
    assert checked_structured(document, 64_000) == json.loads(json.dumps(document))
    assert text.startswith("3 lines to add, 2 lines to remove\n--- a (current)\n+++ a (new)\n")
    assert "@@ -1,11 +1,12 @@\n id,name\n 1,ann\n-2,bob\n+2,bea\n" in text


def test_hunks_far_apart_start_at_their_own_line_numbers():
    # Given two changes 100 lines apart
    old = b"".join(f"line {n}\n".encode() for n in range(1, 201))
    new = old.replace(b"line 20\n", b"line 20 changed\n").replace(b"line 150\n", b"")
    # When diffed
    text, document = both(old, new)
    # Then each hunk starts 3 lines of context before its change, on each side
    [diff] = document["blocks"]
    assert [(h["old_start"], h["new_start"]) for h in diff["hunks"]] == [(17, 17), (147, 147)]
    removed = [line for line in hunk_lines(document) if line[0] == "removed"]
    assert removed[1] == ("removed", 150, None, [("line 150", False)])
    assert checked_structured(document, 64_000) is not None
    # And the text's hunk headers are those of a unified diff
    assert "@@ -17,7 +17,7 @@" in text
    assert "@@ -147,7 +147,6 @@" in text


def test_changed_words_marks_only_what_differs():
    # Given a line where one word and one comment changed
    old, new = changed_words("total = compute(a, b)  # old", "total = compute(a, c)  # new")
    # Then the shared words stay unmarked on both sides
    assert old == [("total = compute(a, ", False), ("b", True), (")  # ", False), ("old", True)]
    assert new == [("total = compute(a, ", False), ("c", True), (")  # ", False), ("new", True)]
    # And a space between two changed words is marked with them, not split off
    assert changed_words("a b c", "a x y")[1] == [("a ", False), ("x y", True)]


def test_long_lines_are_marked_by_their_middle_run_and_only_their_shown_part_compared():
    # Given lines of many tokens that differ in one place, and a line past the line budget
    words = [chr(ord("a") + n % 26) for n in range(150)]  # 299 tokens in 299 characters
    left = " ".join(words)
    right = " ".join([*words[:75], "changed", *words[76:]])
    old, new = changed_words(left, right)
    # Then the differing run is marked, the common start and end are not
    assert [changed for _, changed in new] == [False, True, False]
    assert new[1][0] == "changed"
    assert "".join(text for text, _ in old) == left
    # And of a line past the budget, the rest is one part (not compared word by word)
    long_old, long_new = "x" * (LINE_BUDGET + 50), "x" * LINE_BUDGET + "y" * 50
    assert changed_words(long_old, long_new)[1] == [("x" * LINE_BUDGET, False), ("y" * 50, True)]


def test_a_cut_off_diff_says_so_in_the_document_and_its_text():
    # Given a deadline already passed
    old = b"".join(f"{n}\n".encode() for n in range(1_000))
    new = old.replace(b"100\n", b"x\n").replace(b"900\n", b"y\n")
    # When diffed
    text, document = both(old, new, Deadline(0))
    # Then the counts are labelled as bounds, and a note says why, in both forms
    assert document["headline"][0]["label"] == "lines to add (at most)"
    assert any("cut off after 0 s" in note for note in document["notes"])
    assert "lines to add (at most)" in text
    assert "cut off after 0 s" in text


def test_a_huge_diff_stays_in_budget_and_announces_what_it_left_out():
    # Given 200,000 lines with every 10th changed
    old = b"".join(f"line {n}\n".encode() for n in range(200_000))
    new = b"".join(
        (f"line {n} changed\n" if n % 10 == 0 else f"line {n}\n").encode() for n in range(200_000)
    )
    structured = StructuredPreview()
    # When diffed
    add_diff(structured, old, new, "a", "b", UNHURRIED)
    document = structured.document()
    # Then its JSON stays within the budget
    checked = checked_structured(document, 64_000)
    assert len(json.dumps(checked, ensure_ascii=False, separators=(",", ":"))) <= STRUCTURED_BUDGET
    # And every line is either shown or counted as left out, and so are the hunks
    [diff] = document["blocks"]
    shown = sum(len(hunk["lines"]) for hunk in diff["hunks"])
    left_out = {item["kind"]: item["count"] for item in document["left_out"]}
    # (each change is 1 line to remove and 1 added, 9 lines from the next: a hunk of its own,
    # with up to 3 lines of context on each side)
    total_lines = sum(2 + min(3, n) + min(3, 199_999 - n) for n in range(0, 200_000, 10))
    assert shown + left_out["diff lines"] == total_lines
    assert len(diff["hunks"]) + left_out["hunks"] == 20_000
    # And the changed words of the shown lines are marked
    assert ("added", None, 11, [("line 10", False), (" changed", True)]) in hunk_lines(document)
    # And its text is bounded, the counts first, the lines it cannot show counted
    text = render_text(document)
    assert len(text) <= PREVIEW_BUDGET
    assert text.startswith("20,000 lines to add, 20,000 lines to remove\n--- a\n+++ b\n")
    [cut] = re.findall(r"… ([\d,]+) more diff lines not shown", text)
    assert (
        int(cut.replace(",", ""))
        + text.count("\n ")
        + text.count("\n-line")
        + text.count("\n+line")
        == total_lines
    )


def test_a_listing_goes_to_a_paths_block_and_its_counts_to_the_headline():
    # Given a folder with two files and a subfolder
    entries = [
        Entry(".", "dir", 0),
        Entry("a.csv", "file", 12),
        Entry("sub", "dir", 0),
        Entry("sub/b.csv", "file", 30),
    ]
    structured = StructuredPreview()
    # When listed
    add_listing(structured, entries, "Inside")
    add_tree_counts(structured, entries, "removed", verb="to delete")
    document = structured.document()
    # Then the counts say files, folders (the folder itself among them) and bytes
    assert document["headline"] == [
        {"label": "files to delete", "count": 2, "tone": "removed"},
        {"label": "folders to delete", "count": 2, "tone": "removed"},
        {"label": "bytes to delete", "count": 42, "tone": "removed"},
    ]
    # And each entry is a path with its detail, a folder with its trailing slash
    [paths] = document["blocks"]
    assert paths["title"] == "Inside"
    assert paths["items"][1] == {"path": "sub/", "detail": "directory"}
    assert paths["items"][2] == {"path": "sub/b.csv", "detail": "30 bytes"}
    assert checked_structured(document, 64_000) is not None
    # And the text lists them under the title, after the counts
    assert render_text(document) == (
        "2 files to delete, 2 folders to delete, 42 bytes to delete\n"
        "Inside:\n  a.csv  12 bytes\n  sub/  directory\n  sub/b.csv  30 bytes"
    )


def test_a_huge_listing_stays_in_budget_and_counts_the_rest():
    # Given 20,000 files
    entries = [Entry(".", "dir", 0), *(Entry(f"f{n:05}.csv", "file", n) for n in range(20_000))]
    structured = StructuredPreview()
    # When listed
    add_listing(structured, entries, "Inside")
    document = structured.document()
    # Then the block keeps what fits and the rest is announced
    [paths] = document["blocks"]
    [left_out] = document["left_out"]
    assert left_out["kind"] == "paths"
    assert len(paths["items"]) + left_out["count"] == 20_000
    checked = checked_structured(document, 64_000)
    assert len(json.dumps(checked, ensure_ascii=False, separators=(",", ":"))) <= STRUCTURED_BUDGET
    # And its text keeps what fits in its own budget and counts every other path
    text = render_text(document)
    assert len(text) <= PREVIEW_BUDGET
    [cut] = re.findall(r"… ([\d,]+) more paths not shown", text)
    assert text.count("\n  f") + int(cut.replace(",", "")) == 20_000
