"""The structured preview's contract: documented shape only, every string escaped, bounded."""

from __future__ import annotations

import json

import pytest

from jupyter_approvals.core import errors
from jupyter_approvals.core.store.approval_store import ApprovalStore
from jupyter_approvals.core.structured import StructuredRefused, checked_structured
from jupyter_approvals.previews.structured import STRUCTURED_BUDGET, StructuredPreview
from jupyter_approvals.previews.text import LINE_BUDGET


def _doc(*blocks: dict) -> dict:
    return {"version": 1, "headline": [], "blocks": list(blocks), "left_out": [], "notes": []}


def test_a_built_preview_passes_the_check_unchanged():
    # Given a preview with every kind of block
    built = StructuredPreview()
    built.count("rows to add", 2, "added")
    built.facts([("path:file", "out/a.csv"), ("size", "3 bytes")], title="Target")
    built.argv(["git", "push", "origin", "main"])
    built.request("POST", "https://example.org/api")
    built.code("select 1", "sql")
    diff = built.diff("a.txt", "a.txt (new)")
    assert diff is not None
    assert diff.hunk(3, 3)
    diff.line("removed", 3, None, [("total = ", False), ("1", True)])
    diff.line("added", None, 3, [("total = ", False), ("2", True)])
    table = built.table([("id", "int64", True), ("units", "int64", False)], title="Changed")
    assert table is not None
    assert table.row("changed", ["5", ("3", "4")])
    paths = built.paths("Deleted")
    assert paths is not None
    assert paths.add("data/old.csv", "12 bytes")
    built.lines(["plain"])
    document = built.document()
    # When the store's check reads it
    kept = checked_structured(document, 64_000)
    # Then nothing is lost or added
    assert kept == json.loads(json.dumps(document))


def test_every_string_is_escaped_with_the_markers_of_the_text():
    # Given a table cell and a diff part carrying a right-to-left override and markup
    built = StructuredPreview()
    table = built.table([("name", "object", False)])
    assert table is not None
    table.row("added", ["<script>alert(1)</script>\u202etxt.exe"])
    # When checked
    kept = checked_structured(built.document(), 64_000)
    # Then the override is a marker and the markup is text (the renderer sets it as text)
    assert kept is not None
    cell = kept["blocks"][0]["rows"][0]["cells"][0]["text"]
    assert cell == "<script>alert(1)</script>⟦U+202E⟧txt.exe"


@pytest.mark.parametrize(
    "document",
    [
        [],
        {"version": 2},
        _doc({"type": "html", "title": None, "html": "<b>x</b>"}),
        _doc({"type": "code", "title": None, "language": "javascript", "text": "x"}),
        _doc({"type": "facts", "title": None, "items": [{"label": "a", "value": 1}]}),
        _doc(
            {
                "type": "table",
                "title": None,
                "columns": [{"name": "a"}],
                "rows": [{"change": "same", "cells": []}],
            }
        ),
        {**_doc(), "headline": [{"label": "x", "count": 2**60, "tone": "added"}]},
        {**_doc(), "headline": [{"label": "x", "count": 1, "tone": "red"}]},
    ],
)
def test_any_other_shape_is_refused(document):
    # When a document not of the documented shape is checked
    # Then it is refused, not passed on
    with pytest.raises(StructuredRefused):
        checked_structured(document, 64_000)


def test_a_document_over_the_limit_is_replaced_by_a_note_saying_so():
    # Given a document longer than the limit
    built = StructuredPreview()
    built.lines(["x" * 300] * 50)
    # When checked against a small limit
    kept = checked_structured(built.document(), 2_000)
    # Then no block is kept and a note says why
    assert kept is not None
    assert kept["blocks"] == []
    assert "over the limit of 2,000" in kept["notes"][0]


def test_the_builder_keeps_its_budget_and_counts_what_it_left_out():
    # Given far more diff lines than the budget holds
    built = StructuredPreview()
    diff = built.diff("a", "b")
    assert diff is not None
    assert diff.hunk(1, 1)
    kept = sum(diff.line("added", None, n, [(f"line {n}", False)]) for n in range(1, 20_001))
    document = built.document()
    # Then the JSON stays within the budget, and the rest is announced
    compact = json.dumps(checked_structured(document, 64_000), separators=(",", ":"))
    assert len(compact) <= STRUCTURED_BUDGET
    assert kept < 20_000
    assert {"kind": "diff lines", "count": 20_000 - kept} in document["left_out"]


def test_a_long_line_is_cut_at_the_line_budget_and_the_cut_announced():
    # Given a 10,000-character line
    built = StructuredPreview()
    built.lines(["y" * 10_000])
    # Then it is cut like the text preview's lines
    line = built.document()["blocks"][0]["lines"][0]
    assert line.startswith("y" * LINE_BUDGET)
    assert line.endswith("(9,600 more characters)")


def test_a_store_refuses_a_malformed_structured_preview_with_a_code():
    # Given a store
    store = ApprovalStore()
    # When a request is opened with a structured preview of another shape
    with pytest.raises(errors.ApprovalInvalidPreview) as raised:
        store.open_request(
            action="demo.run",
            fingerprint="sha256:" + "0" * 64,
            summary="s",
            preview="p",
            structured={"version": 1, "blocks": [{"type": "script"}]},
        )
    # Then no request exists and the code is stable
    assert raised.value.code == "APPROVAL_INVALID_PREVIEW"
    assert store.pending() == []


def test_a_stored_request_carries_its_checked_structured_preview_on_the_wire():
    # Given a request opened with a structured preview
    built = StructuredPreview()
    built.count("files to delete", 1, "removed")
    info, _ = ApprovalStore().open_request(
        action="demo.run",
        fingerprint="sha256:" + "0" * 64,
        summary="s",
        preview="p",
        structured=built.document(),
    )
    # Then the listing's form carries it
    assert info.to_wire()["structured"]["headline"] == [
        {"label": "file to delete", "count": 1, "tone": "removed"}
    ]


@pytest.mark.parametrize(
    ("label", "singular"),
    [
        ("rows to add", "row to add"),
        ("schema changes", "schema change"),
        ("standard input lines", "standard input line"),
        ("bytes to delete", "byte to delete"),
    ],
)
def test_a_count_of_one_reads_in_the_singular(label, singular):
    # Given a headline count of one and one of two
    built = StructuredPreview()
    built.count(label, 1)
    built.count(label, 2)
    # Then the one is singular, the two plural
    labels = [item["label"] for item in built.document()["headline"]]
    assert labels == [singular, label]


@pytest.mark.parametrize(
    "document",
    [
        {"version": 1, "headline": [{"label": "x", "count": 1, "tone": []}]},
        {"version": 1, "blocks": [{"type": "code", "title": None, "language": {}, "text": ""}]},
        {"version": True},
    ],
)
def test_values_of_another_type_are_refused_with_the_shape_error(document):
    # When a value that cannot even be looked up in the allowed set is checked
    # Then it is the shape's refusal (APPROVAL_INVALID_PREVIEW upstream), not a TypeError
    with pytest.raises(StructuredRefused):
        checked_structured(document, 64_000)


def test_code_of_many_short_lines_stays_within_the_budget():
    # Given 40,000 one-character lines of code, with counts and a note besides
    built = StructuredPreview()
    built.count("lines of code", 40_000)
    built.code("\n".join("x" for _ in range(40_000)), "python")
    built.note("a note")
    # When the store checks it
    kept = checked_structured(built.document(), 64_000)
    # Then it is kept (not replaced by the over-the-limit note), within the builder's budget,
    # and the lines left out are counted
    assert kept is not None
    assert kept["blocks"][0]["text"].startswith("x\nx")
    assert len(json.dumps(kept, ensure_ascii=False, separators=(",", ":"))) <= STRUCTURED_BUDGET
    assert kept["left_out"][0]["kind"] == "code lines"
