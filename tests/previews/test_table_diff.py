"""Row and column differences between two DataFrames, by key (ops/table_diff.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from jupyter_approvals.previews.table_diff import diff_columns, diff_rows


def frame(**columns: list) -> pd.DataFrame:
    return pd.DataFrame(columns)


def test_added_removed_changed_and_unchanged_rows_by_key():
    # Given two versions of a table keyed by id
    old = frame(id=[1, 2, 3, 4], name=["a", "b", "c", "d"], x=[1.0, 2.0, 3.0, 4.0])
    new = frame(id=[5, 3, 2, 1], name=["e", "c", "B", "a"], x=[5.0, 3.5, 2.0, 1.0])
    # When they are compared by id
    diff = diff_rows(pd, old, new, ["id"])
    # Then 5 is added, 4 removed, 2 and 3 changed (in the columns that differ), 1 unchanged
    assert (diff.added, diff.removed, diff.changed, diff.unchanged) == (1, 1, 2, 1)
    assert diff.example_added == [5]
    assert diff.example_removed == [4]
    assert sorted(diff.example_changed) == [(2, ["name"]), (3, ["x"])]
    assert diff.compared_columns == ["name", "x"]


def test_a_multi_column_key_matches_on_all_its_columns():
    # Given rows keyed by (region, day)
    old = frame(region=["n", "n", "s"], day=[1, 2, 1], units=[1, 2, 3])
    new = frame(region=["n", "s", "s"], day=[2, 1, 2], units=[2, 30, 4])
    # When compared by both columns
    diff = diff_rows(pd, old, new, ["region", "day"])
    # Then keys are tuples and each kind of change is found
    assert diff.example_added == [("s", 2)]
    assert diff.example_removed == [("n", 1)]
    assert diff.example_changed == [(("s", 1), ["units"])]
    assert diff.unchanged == 1


def test_nan_equals_nan_and_missing_text_equals_missing_text():
    # Given identical rows holding NaN, None and NaT
    old = frame(
        id=[1, 2],
        x=[np.nan, 1.0],
        s=["a", None],
        t=pd.to_datetime(["2024-01-01", None]),
    )
    new = old.copy()
    # When compared
    diff = diff_rows(pd, old, new, ["id"])
    # Then nothing changed
    assert (diff.changed, diff.unchanged) == (0, 2)


def test_a_value_becoming_missing_is_a_change():
    # Given a value replaced by NaN
    old = frame(id=[1, 2], x=[1.0, 2.0])
    new = frame(id=[1, 2], x=[1.0, np.nan])
    # Then that row is changed in x
    assert diff_rows(pd, old, new, ["id"]).example_changed == [(2, ["x"])]


def test_a_dtype_change_alone_is_not_a_row_change_but_a_column_change():
    # Given units stored as int before and as float after, equal in value but for one row
    old = frame(id=[1, 2], units=[1, 2], label=[1, 2])
    new = frame(id=[1, 2], units=[1.0, 2.5], label=["1", "2"])
    # When compared
    columns = diff_columns(old, new)
    rows = diff_rows(pd, old, new, ["id"])
    # Then both columns are retyped, and only the row whose value changed is changed
    assert columns.retyped == [("units", "int64", "float64"), ("label", "int64", "str")]
    assert rows.example_changed == [(2, ["units"])]
    assert rows.unchanged == 1


def test_columns_added_and_removed_are_not_compared_row_by_row():
    # Given a column dropped and another added
    old = frame(id=[1], gone=[1], kept=[1])
    new = frame(id=[1], kept=[1], fresh=["x"])
    # When compared
    columns = diff_columns(old, new)
    rows = diff_rows(pd, old, new, ["id"])
    # Then the column diff names them and the row stays unchanged
    assert columns.added == [("fresh", "str")]
    assert columns.removed == [("gone", "int64")]
    assert not columns.empty
    assert (rows.changed, rows.unchanged, rows.compared_columns) == (0, 1, ["kept"])


def test_identical_column_sets_are_an_empty_column_diff():
    assert diff_columns(frame(a=[1]), frame(a=[2])).empty


def test_duplicate_keys_are_counted_and_the_first_row_of_each_is_compared():
    # Given a key repeated in both tables
    old = frame(id=[1, 1, 2], x=[1, 9, 2])
    new = frame(id=[1, 2, 2, 2, 3], x=[1, 5, 6, 7, 3])
    # When compared
    diff = diff_rows(pd, old, new, ["id"])
    # Then the repeated keys are reported and first rows matched
    assert (diff.duplicate_old, diff.example_duplicate_old) == (1, [1])
    assert (diff.duplicate_new, diff.example_duplicate_new) == (1, [2])
    assert (diff.added, diff.removed, diff.changed, diff.unchanged) == (1, 0, 1, 1)
    assert diff.example_changed == [(2, ["x"])]


def test_a_table_with_only_key_columns_compares_keys_only():
    # Given tables holding only their key
    diff = diff_rows(pd, frame(id=[1, 2]), frame(id=[2, 3]), ["id"])
    # Then matched keys are unchanged
    assert (diff.added, diff.removed, diff.changed, diff.unchanged) == (1, 1, 0, 1)


def test_examples_are_bounded_while_counts_cover_every_row():
    # Given 1,000 rows of which every one changed
    old = frame(id=list(range(1000)), x=[0] * 1000)
    new = frame(id=list(range(1000)), x=[1] * 1000)
    # When compared with 3 examples
    diff = diff_rows(pd, old, new, ["id"], examples=3)
    # Then all are counted, 3 shown
    assert diff.changed == 1000
    assert [key for key, _ in diff.example_changed] == [0, 1, 2]


def test_rows_in_a_different_order_match_by_key():
    # Given the same rows shuffled
    old = frame(id=list(range(100)), x=list(range(100)))
    new = old.sample(frac=1, random_state=0).reset_index(drop=True)
    # Then nothing is added, removed or changed
    diff = diff_rows(pd, old, new, ["id"])
    assert (diff.added, diff.removed, diff.changed, diff.unchanged) == (0, 0, 0, 100)


def test_example_rows_are_located_so_a_preview_can_show_their_values():
    # Given two versions of a table in different row orders
    old = frame(id=[1, 2, 3, 4], x=[1.0, 2.0, 3.0, 4.0])
    new = frame(id=[5, 3, 2, 1], x=[5.0, 3.5, 2.0, 1.0])
    # When they are compared by id
    diff = diff_rows(pd, old, new, ["id"])
    # Then each example's row is found by position: new for added, old for removed, both for
    # changed, in the order of the example keys
    assert [new["id"].iloc[at] for at in diff.added_rows] == diff.example_added == [5]
    assert [old["id"].iloc[at] for at in diff.removed_rows] == diff.example_removed == [4]
    assert diff.changed_rows == [(2, 1)]
    assert diff.example_changed == [(3, ["x"])]
