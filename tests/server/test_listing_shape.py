"""What the server keeps of a kernel's listing: its documented shape, and a reading floor
within the promised bounds, whatever the kernel's code published."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_approvals.core import schemas
from jupyter_approvals.server.mirror.listing_shape import well_formed
from tests.core.schema_strategies import from_schema

#: A request as a kernel of this version lists it, every field of its documented type.
LISTED = {
    "id": "0123456789abcdef",
    "action": "file.write",
    "summary": "Replace data.csv",
    "preview": "--- data.csv",
    "preview_omitted": 0,
    "structured": None,
    "fingerprint": "sha256:" + "ab" * 32,
    "function": "jupyter_approvals.ops.files.write_file",
    "status": "pending",
    "created_at": "2026-12-02T05:00:00.000Z",
    "expires_at": "2026-12-02T05:10:00.000Z",
    "approval_expires_at": None,
    "reason": "",
    "code": None,
    "kernel_id": "k1",
    "notebook_path": "analysis.ipynb",
    "cell_id": "c1",
    "execution_count": 3,
    "username": None,
    "display_name": None,
    "session": None,
    "agent": None,
}


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
    return {"requests": [{**LISTED, **request}]}


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


def test_a_request_of_the_documented_shape_is_kept_as_it_was_listed():
    # When a kernel lists a request with every field of its documented type
    [request] = well_formed(_listing())["requests"]
    # Then the server keeps it unchanged
    assert request == LISTED


@pytest.mark.parametrize(
    "broken",
    [
        {"fingerprint": "sha256:short"},
        {"fingerprint": None},
        {"status": "decided-by-me"},
        {"status": ["pending"]},
        {"created_at": "yesterday"},
        {"expires_at": 1_800_000_000},
    ],
)
def test_a_request_that_cannot_be_decided_or_timed_is_left_out(broken):
    # When a kernel lists a request without a usable fingerprint, status or time
    listing = well_formed(_listing(**broken))
    # Then the server's copy leaves it out rather than show a row nobody can decide
    assert listing["requests"] == []


def test_fields_of_another_type_become_empty_and_unknown_fields_are_dropped():
    # When a kernel lists a request whose other fields have other types, and fields of its own
    [request] = well_formed(
        _listing(
            summary=["not", "text"],
            preview_omitted=-5,
            execution_count=True,
            code="not a code",
            agent={"name": "bot"},
            approval_expires_at="soon",
            injected="<script>",
        )
    )["requests"]
    # Then each becomes empty or null, and what the contract does not name is gone
    assert request["summary"] == ""
    assert request["preview_omitted"] == 0
    assert request["execution_count"] is None
    assert request["code"] is None
    assert request["agent"] is None
    assert request["approval_expires_at"] is None
    assert "injected" not in request
    assert set(request) == set(LISTED)


# Values of every JSON type, for the fields of a request a hostile kernel fills at will.
_ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=4), inner, max_size=2)
    ),
    max_leaves=4,
)


@settings(max_examples=150, deadline=None)
@given(
    valid=from_schema("comm.schema.json", "ListedRequest"),
    replaced=st.dictionaries(st.sampled_from(sorted(LISTED)), _ANY_JSON, max_size=4),
)
def test_whatever_a_kernel_lists_the_server_keeps_only_rows_of_the_schema(valid, replaced):
    # Given a listed request of the schema with some fields replaced by anything at all
    request = {**valid, **replaced, "id": "0123456789abcdef"}
    # When the server keeps the kernel's listing
    kept = well_formed({"requests": [request]})["requests"]
    # Then every row it keeps validates against the schema the sidebar's types come from
    rows = schemas.validator("comm.schema.json", "ListedRequest")
    for row in kept:
        rows.validate(row)
    # And a row whose fingerprint, status and times were left alone is kept
    if not set(replaced) & {"fingerprint", "status", "created_at", "expires_at"}:
        assert len(kept) == 1
