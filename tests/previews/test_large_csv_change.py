"""A CSV too large to load as a table, compared line by line as both files stream through."""

from __future__ import annotations

import hashlib
import io

from jupyter_approvals.previews.large_csv_change import compare_lines, large_csv_change
from jupyter_approvals.previews.render_text import preview_of


def rows(count: int, changed: set[int] = frozenset()) -> bytes:
    lines = ["id,region,total"]
    lines += [f"{i},r{i % 7},{i * 10 + (1 if i in changed else 0)}" for i in range(count)]
    return ("\n".join(lines) + "\n").encode()


def test_rows_changed_in_place_are_counted_with_their_old_and_new_cells(tmp_path):
    # Given a CSV of 1,000 rows where 10 changed in place and 2 were added at the end
    old = rows(1000)
    new = rows(1002, changed={5, 50, 100, 150, 200, 250, 300, 350, 400, 450})
    (tmp_path / "old.csv").write_bytes(old)
    (tmp_path / "new.csv").write_bytes(new)
    # When it is compared
    structured, found = large_csv_change("t.csv", tmp_path / "old.csv", tmp_path / "new.csv")
    text = preview_of(structured).text
    # Then the counts are exact, the first changed row shows its cell's old and new value
    assert (found.added, found.removed, found.changed, found.unchanged) == (2, 0, 10, 990)
    assert text.startswith("2 rows to add, 0 rows to remove, 10 rows to change, 990 rows unchanged")
    assert "50 -> 51" in text
    # And both files' digests come out of the same pass
    assert found.old_sha256 == hashlib.sha256(old).hexdigest()
    assert found.new_sha256 == hashlib.sha256(new).hexdigest()


def test_a_row_inserted_at_the_top_is_said_to_shift_the_rest(tmp_path):
    # Given a row inserted before all others
    old = rows(100)
    new = old.replace(b"id,region,total\n", b"id,region,total\n-1,r0,0\n")
    (tmp_path / "old.csv").write_bytes(old)
    (tmp_path / "new.csv").write_bytes(new)
    # Then most rows differ at their position, and the preview says why
    found = compare_lines(io.BytesIO(old), io.BytesIO(new))
    assert (found.changed, found.added) == (100, 1)
    structured, _ = large_csv_change("t.csv", tmp_path / "old.csv", tmp_path / "new.csv")
    assert "rows were probably inserted or removed" in preview_of(structured).text


def test_a_changed_header_is_shown(tmp_path):
    (tmp_path / "a.csv").write_bytes(b"id,total\n1,2\n")
    (tmp_path / "b.csv").write_bytes(b"id,sum\n1,2\n")
    structured, _ = large_csv_change("t.csv", tmp_path / "a.csv", tmp_path / "b.csv")
    text = preview_of(structured).text
    assert "header before: id,total" in text
    assert "header after: id,sum" in text
