"""A changed table file shown as a table diff (a sandboxed kernel's change set), from bytes."""

from __future__ import annotations

import io

import pytest

from jupyter_approvals.previews.render_text import preview_of
from jupyter_approvals.previews.table_file_change import table_change, table_format

pd = pytest.importorskip("pandas")


def parquet(frame) -> bytes:
    out = io.BytesIO()
    frame.to_parquet(out, index=False)
    return out.getvalue()


def test_table_files_are_known_by_their_ending():
    assert [table_format(p) for p in ("a.csv", "b/C.PARQUET", "c.pq", "d.txt")] == [
        "csv",
        "parquet",
        "parquet",
        None,
    ]


def test_a_csv_is_compared_as_the_text_it_holds():
    # Given a CSV whose cells only change their spelling of a number
    old = b"id,total\n1,10\n2,20\n"
    new = b"id,total\n1,10.0\n2,20\n"
    # When it is compared
    shown = preview_of(table_change("t.csv", old, new, "csv")).text
    # Then the text changed and it says so (nothing is read as a number)
    assert shown.startswith("0 rows to add, 0 rows to remove, 1 row to change, 1 row unchanged")
    assert "10 -> 10.0" in shown


def test_a_parquet_file_keeps_its_types():
    # Given a Parquet file of integers where one value changes
    old = parquet(pd.DataFrame({"id": [1, 2], "n": [5, 6]}))
    new = parquet(pd.DataFrame({"id": [1, 2], "n": [5, 7]}))
    # Then the change names the column's type and both values
    shown = preview_of(table_change("t.parquet", old, new, "parquet")).text
    assert "n (int64)" in shown
    assert "6 -> 7" in shown


def test_what_cannot_be_read_as_a_table_is_left_to_the_line_diff():
    # Given bytes that are not Parquet, or a table with a column named as the row numbers
    # Then no table diff is made (the caller shows the bytes another way)
    assert table_change("t.parquet", b"not parquet", b"still not", "parquet") is None
    assert table_change("t.csv", b"row #\n1\n1\n", b"row #\n1\n2\n", "csv") is None
