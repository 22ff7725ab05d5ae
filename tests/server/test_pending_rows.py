"""The body of GET pending: one JSON document, oldest first, rows encoded again only when
they changed."""

from __future__ import annotations

import json

from jupyter_approvals.server.mirror.kernels import Row
from jupyter_approvals.server.rest.pending_rows import PendingRows

LISTING = {"unanswered_kernels": [], "busy_kernels": ["k2"], "journal_errors": []}


def row(kernel: str, request: str, created: str, version: int = 1) -> tuple[tuple, Row]:
    key = (kernel, request, version, False, True, "nb.ipynb")
    return key, Row(key, {"kernel_id": kernel, "id": request, "created_at": created})


def test_the_body_lists_held_and_kernel_rows_oldest_first_then_the_rest():
    # Given a held request and two kernel rows
    held = [{"id": "h", "created_at": "2026-12-01T10:00:01Z", "held_at": "server"}]
    rows = [row("k1", "b", "2026-12-01T10:00:02Z"), row("k2", "a", "2026-12-01T10:00:00Z")]
    # When the body is rendered
    body = json.loads(PendingRows().body(held, rows, LISTING, lambda item: item.update(x=1)))
    # Then it is one document: every row, oldest first, completed, then the listing's fields
    assert [item["id"] for item in body["pending"]] == ["a", "h", "b"]
    assert [item.get("x") for item in body["pending"]] == [1, None, 1]
    assert {k: v for k, v in body.items() if k != "pending"} == LISTING


def test_an_unchanged_row_is_not_encoded_again_and_a_changed_one_is():
    # Given rows rendered once
    rendered = PendingRows()
    decorated: list[str] = []

    def decorate(item):
        decorated.append(item["id"])

    rendered.body([], [row("k1", "a", "1"), row("k1", "b", "2")], LISTING, decorate)
    # When the next poll has the same rows, and then one from a newer listing of its kernel
    rendered.body([], [row("k1", "a", "1"), row("k1", "b", "2")], LISTING, decorate)
    again = rendered.body([], [row("k1", "a", "1"), row("k1", "b", "2", version=2)], {}, decorate)
    # Then only the changed row was completed and encoded again
    assert decorated == ["a", "b", "b"]
    assert [item["id"] for item in json.loads(again)["pending"]] == ["a", "b"]
