"""The fast line diff: its hunks turn the old lines into the new, in difflib's unified format."""

from __future__ import annotations

import difflib
import math
import random
import re

import pytest

from jupyter_approvals.previews import line_match as diff_match
from jupyter_approvals.previews.line_diff import (
    add_diff,
    diff_lines,
    is_binary,
    show_line,
    split_lines,
    unified_lines,
)
from jupyter_approvals.previews.render_text import render_text
from jupyter_approvals.previews.structured import StructuredPreview
from jupyter_approvals.previews.text import PREVIEW_BUDGET, Deadline

#: No time budget: these tests count the whole comparison, which a slow machine must not cut.
UNHURRIED = Deadline(math.inf)

HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def apply_blocks(old, new, blocks):
    """Old lines with each block replaced by what it names in new."""
    out, at = [], 0
    for i1, i2, j1, j2 in blocks:
        out.extend(old[at:i1])
        out.extend(new[j1:j2])
        at = i2
    out.extend(old[at:])
    return out


def apply_unified(old_text, diff_text):
    """Apply unified-diff text to lines (without endings), checking every context line."""
    out, at = [], 0
    lines = [line for line in diff_text if not line.startswith("\\")]
    assert lines[0].startswith("--- ")
    assert lines[1].startswith("+++ ")
    k = 2
    while k < len(lines):
        match = HUNK.fullmatch(lines[k])
        assert match, lines[k]
        start, length = int(match[1]), int(match[2] or 1)
        new_length = int(match[4] or 1)
        begin = start - 1 if length else start
        out.extend(old_text[at:begin])
        at = begin
        k += 1
        seen_old = seen_new = 0
        while k < len(lines) and not lines[k].startswith("@@"):
            tag, body = lines[k][0], lines[k][1:]
            if tag in " -":
                assert old_text[at] == body
                at += 1
                seen_old += 1
            if tag in " +":
                out.append(body)
                seen_new += 1
            k += 1
        assert (seen_old, seen_new) == (length, new_length)
    out.extend(old_text[at:])
    return out


def random_edit(rng, lines, alphabet):
    new = list(lines)
    for _ in range(rng.randrange(0, 8)):
        where = rng.randrange(0, len(new) + 1)
        kind = rng.random()
        if kind < 0.3 and new:
            del new[where : where + rng.randrange(1, 4)]
        elif kind < 0.6:
            new[where:where] = [rng.choice(alphabet) for _ in range(rng.randrange(1, 4))]
        elif kind < 0.8 and where < len(new):
            new[where] = rng.choice(alphabet)
        elif len(new) > 4:
            # Move a block: exercises anchors that are out of order.
            block = new[where : where + 3]
            del new[where : where + 3]
            spot = rng.randrange(0, len(new) + 1)
            new[spot:spot] = block
    return new


@pytest.mark.parametrize("window", [0, 32])
@pytest.mark.parametrize("alphabet_size", [3, 30, 10_000])
def test_hunks_turn_the_old_lines_into_the_new(alphabet_size, window, monkeypatch):
    # Given random edits of random files, with few distinct lines (many repeats) or many,
    # diffed by the forward scan (window 32) or by the patience diff alone (window 0)
    monkeypatch.setattr(diff_match, "RESYNC_WINDOW", window)
    rng = random.Random(alphabet_size)
    alphabet = [f"line {n}\n".encode() for n in range(alphabet_size)]
    for _ in range(300):
        old = [rng.choice(alphabet) for _ in range(rng.randrange(0, 120))]
        new = random_edit(rng, old, alphabet)
        # When they are diffed
        diff = diff_lines(old, new)
        # Then the blocks, and the rendered unified text, both turn old into new
        assert apply_blocks(old, new, diff.blocks) == new
        text = list(unified_lines(diff, "a", "b"))
        if old == new:
            assert text == []
            continue
        assert apply_unified([show_line(x) for x in old], text) == [show_line(x) for x in new]
        # And the counts add up, with blocks sorted, disjoint and never touching
        assert diff.removed == sum(i2 - i1 for i1, i2, _, _ in diff.blocks)
        assert diff.added == sum(j2 - j1 for _, _, j1, j2 in diff.blocks)
        for before, after in zip(diff.blocks, diff.blocks[1:], strict=False):
            assert before[1] < after[0]
            assert before[3] < after[2]


@pytest.mark.parametrize("window", [0, 32])
def test_a_big_file_with_scattered_changes_diffs_minimally(window, monkeypatch):
    monkeypatch.setattr(diff_match, "RESYNC_WINDOW", window)
    # Given 20,000 unique lines with 1% of them replaced
    rng = random.Random(7)
    old = [f"{n},{rng.random()}\n".encode() for n in range(20_000)]
    new = list(old)
    changed = rng.sample(range(20_000), 200)
    for n in changed:
        new[n] = f"{n},changed\n".encode()
    # When diffed
    diff = diff_lines(old, new)
    # Then exactly the changed lines are removed and added
    assert (diff.removed, diff.added) == (200, 200)
    assert apply_blocks(old, new, diff.blocks) == new


def test_the_format_is_difflibs_unified_diff():
    # Given edits whose minimal diff is unambiguous
    old = [f"row {n}\n".encode() for n in range(40)]
    cases = [
        [*old[:10], b"inserted\n", *old[10:]],
        old[:5] + old[6:],
        [*old[:20], b"changed\n", *old[21:35], b"changed too\n", *old[36:]],
        [],
    ]
    for new in cases:
        # When rendered
        ours = list(unified_lines(diff_lines(old, new), "before.txt", "after.txt"))
        # Then it is line for line what difflib writes
        theirs = difflib.unified_diff(
            [show_line(x) for x in old],
            [show_line(x) for x in new],
            "before.txt",
            "after.txt",
            lineterm="",
        )
        assert ours == list(theirs)


def test_a_new_file_is_all_added_lines():
    # Given no old content
    diff = diff_lines([], [b"a\n", b"b\n"])
    # Then the hunk adds every line
    assert list(unified_lines(diff, "/dev/null", "new")) == [
        "--- /dev/null",
        "+++ new",
        "@@ -0,0 +1,2 @@",
        "+a",
        "+b",
    ]


def test_a_missing_final_newline_is_shown():
    # Given the same text with and without the newline at its end
    diff = diff_lines(split_lines(b"a\nb\n"), split_lines(b"a\nb"))
    # Then the change is visible although the lines read the same
    assert list(unified_lines(diff, "x", "y"))[2:] == [
        "@@ -1,2 +1,2 @@",
        " a",
        "-b",
        "+b",
        "\\ No newline at end of file",
    ]


def test_a_passed_deadline_gives_a_coarse_but_correct_diff():
    # Given a deadline already passed
    old = [f"{n}\n".encode() for n in range(1_000)]
    new = [*old[:100], b"x\n", *old[100:900], b"y\n", *old[900:]]
    diff = diff_lines(old, new, Deadline(0))
    # Then the blocks still turn old into new, and the diff says it is not exact
    assert apply_blocks(old, new, diff.blocks) == new
    assert diff.exact is False
    structured = StructuredPreview()
    add_diff(structured, b"".join(old), b"".join(new), "a", "b", Deadline(0))
    text = render_text(structured.document())
    assert "at most" in text
    assert "cut off after 0 s" in text


def test_the_preview_states_the_counts_and_stays_in_budget():
    # Given 200,000 lines with every 10th changed
    old = b"".join(f"line {n}\n".encode() for n in range(200_000))
    new = b"".join(
        (f"line {n} changed\n" if n % 10 == 0 else f"line {n}\n").encode() for n in range(200_000)
    )
    structured = StructuredPreview()
    # When previewed
    diff = add_diff(structured, old, new, "a", "b", UNHURRIED)
    text = render_text(structured.document())
    # Then the counts cover everything, the text is bounded and the cut is announced
    assert "20,000 lines to add, 20,000 lines to remove" in text
    assert len(text) <= PREVIEW_BUDGET
    assert re.search(r"… [\d,]+ more diff lines not shown", text)
    shown = text.count("\n-line")
    assert 0 < shown < diff.removed


def test_binary_is_a_nul_in_the_first_8_kib():
    assert is_binary(b"abc\x00def")
    assert not is_binary(b"a" * 8192 + b"\x00")
    assert not is_binary("naïve\n".encode())
