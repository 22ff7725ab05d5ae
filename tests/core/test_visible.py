"""The one escaping scheme: every character that could hide something is shown as a marker."""

from __future__ import annotations

import pytest

from jupyter_approvals.core.visible import make_visible


@pytest.mark.parametrize(
    "hidden",
    [
        "\U0001bca0",  # shorthand format control (Cf), outside the listed ranges
        "\U00013430",  # Egyptian hieroglyph format control (Cf)
        "\U0001d173",  # musical symbol begin beam (Cf)
        "\U000e0001",  # language tag (Cf, inside the listed ranges)
        "\U0003ffff",  # a code point not assigned (Cn)
        "\x85",  # next line (Cc)
    ],
)
def test_characters_of_the_other_categories_are_marked(hidden):
    # Given text with a character a font may draw as nothing
    text = f"rm{hidden} -rf"
    # When it is made visible, Then the character is a marker naming its code point
    assert make_visible(text) == f"rm⟦U+{ord(hidden):04X}⟧ -rf"


def test_ordinary_text_is_left_as_it_is():
    text = "Größe: 3 \u00d7 4 — naïve café, 東京, emoji 🙂\n\tindented"
    assert make_visible(text) == text
    assert make_visible(text, keep_lines=False) == text.replace("\n", "⟦U+000A⟧").replace(
        "\t", "⟦U+0009⟧"
    )


def test_a_long_run_of_combining_marks_is_marked_a_short_one_kept():
    # Given an accent or two (ordinary), and a stack of twenty marks on one letter
    short = "e\u0301\u0323"
    stack = "a" + "\u0301" * 20
    # When they are made visible
    # Then the short run stays, the stack is written as markers after its base letter
    assert make_visible(short) == short
    assert make_visible(stack) == "a" + "⟦U+0301⟧" * 20


def test_a_braille_blank_is_marked():
    assert make_visible("rm\u2800-rf") == "rm⟦U+2800⟧-rf"
