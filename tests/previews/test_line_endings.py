"""A change of line endings or of a byte order mark is said in words, not shown as every line
removed and added again (previews/line_diff.py)."""

from __future__ import annotations

from jupyter_approvals.previews.line_diff import add_diff
from jupyter_approvals.previews.render_text import render_text
from jupyter_approvals.previews.structured import StructuredPreview


def diffed(old: bytes, new: bytes) -> dict:
    structured = StructuredPreview()
    add_diff(structured, old, new, "notes.txt (current)", "notes.txt (new)")
    return structured.document()


def counts(document: dict) -> dict[str, int]:
    return {item["label"]: item["count"] for item in document["headline"]}


def test_crlf_to_lf_is_said_and_only_the_real_change_is_diffed():
    # Given a Windows file whose lines all become LF, one of them also edited
    document = diffed(b"id,qty\r\n1,10\r\n2,20\r\n", b"id,qty\n1,10\n2,25\n")
    # Then the counts say three endings change and one line changes
    assert counts(document) == {
        "lines to change their line ending": 3,
        "line to add": 1,
        "line to remove": 1,
    }
    # And a sentence names both endings
    assert document["notes"] == [
        "Line endings change: CRLF (Windows) on 3 lines now, LF on 3 lines after. Lines that "
        "differ only in their ending are shown as unchanged."
    ]
    # And the diff shows only the edited line as removed and added
    text = render_text(document)
    assert "-2,20" in text
    assert "+2,25" in text
    assert "-id,qty" not in text


def test_lf_to_crlf_alone_changes_no_line_of_content():
    document = diffed(b"a\nb\n", b"a\r\nb\r\n")
    assert counts(document) == {
        "lines to change their line ending": 2,
        "lines to add": 0,
        "lines to remove": 0,
    }
    assert "CRLF (Windows) on 2 lines after" in document["notes"][0]


def test_a_byte_order_mark_added_is_said():
    document = diffed(b"a\nb\n", b"\xef\xbb\xbfa\nb\n")
    assert document["notes"] == ["A UTF-8 byte order mark is added at the start of the file."]
    assert counts(document) == {"lines to add": 0, "lines to remove": 0}


def test_lines_added_with_the_same_endings_are_an_ordinary_diff():
    # Given a file with mixed endings that keeps its mix and gains a line
    document = diffed(b"a\r\nb\n", b"a\r\nb\nc\n")
    # Then nothing is said about endings
    assert document["notes"] == []
    assert counts(document) == {"line to add": 1, "lines to remove": 0}
