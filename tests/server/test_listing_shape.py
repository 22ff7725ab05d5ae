"""What the server keeps of a kernel's listing: its documented shape, and a reading floor
within the promised bounds, whatever the kernel's code published."""

from __future__ import annotations

import pytest

from jupyter_approvals.server.mirror.listing_shape import well_formed


@pytest.mark.parametrize(
    ("published", "kept"),
    [
        (3000, 3000),  # a stricter floor, configured in that kernel
        (0, 1000),  # never less than the promised second
        (10**9, 60_000),  # never past the ceiling
        ("5000", 1000),  # not a number
        (None, 1000),  # an older kernel that does not say
        (True, 1000),
    ],
)
def test_a_kernels_reading_floor_is_kept_within_its_bounds(published, kept):
    # When a kernel publishes a listing with this floor
    listing = well_formed({"requests": [], "min_answer_ms": published})
    # Then the server keeps it only within one second and the ceiling
    assert listing["min_answer_ms"] == kept


def _listing(**request: object) -> dict:
    return {"requests": [{"id": "0123456789abcdef", **request}]}


@pytest.mark.parametrize(
    "structured",
    [
        {"version": 1, "headline": [{"label": "x", "count": 1, "tone": []}]},  # unhashable
        {"version": 1, "blocks": [{"type": "code", "language": {}, "text": "x"}]},
        {"version": True},
        "not a document",
        {"version": 1, "blocks": [{"type": "diff", "hunks": [{"lines": [{"op": ["added"]}]}]}]},
    ],
)
def test_a_structured_preview_not_of_the_shape_is_dropped_not_an_error(structured):
    # When a kernel publishes a request whose structured preview is malformed in any way
    [request] = well_formed(_listing(summary="s", structured=structured))["requests"]
    # Then the row stays, with its text, and no structured preview (never a 500 for the list)
    assert request["structured"] is None
    assert request["summary"] == "s"


def test_what_a_kernel_published_is_escaped_again_without_garbling_its_markers():
    # Given a kernel whose code skipped the escaping (a raw override) next to a marker a
    # store wrote
    raw = "invoice\u202etxt.exe ⟦U+202E⟧"
    structured = {"version": 1, "headline": [], "blocks": [{"type": "text", "lines": [raw]}]}
    # When the server keeps its listing
    [request] = well_formed(_listing(summary=raw, preview=raw, structured=structured))["requests"]
    # Then every hiding character is a marker, and the marker already there is left as it was
    shown = "invoice⟦U+202E⟧txt.exe ⟦U+202E⟧"
    assert request["summary"] == shown
    assert request["preview"] == shown
    assert request["structured"]["blocks"][0]["lines"] == [shown]
