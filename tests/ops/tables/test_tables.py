"""write_table (table.write): approved CSV and Parquet writes, previews, refusals."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import jupyter_approvals as ja
from jupyter_approvals.core import errors
from jupyter_approvals.ops import write_table
from jupyter_approvals.ops.tables import write as tables_module
from jupyter_approvals.previews.text import PREVIEW_BUDGET, Deadline

from ..conftest import approve, ask, decide, request_of


def sales(ids: list[int], units: list[int] | None = None) -> pd.DataFrame:
    """A small sales table keyed by id."""
    units = units if units is not None else [10 * i for i in ids]
    return pd.DataFrame(
        {"id": ids, "region": [f"r{i}" for i in ids], "units": units, "price": [1.5] * len(ids)}
    )


def write_directly(frame: pd.DataFrame, path: Path) -> None:
    """Put a file in place without the gate (the 'existing file' of a test)."""
    if path.suffix == ".csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path, index=False)


def test_an_approved_csv_write_runs_once_and_creates_the_file(session):
    # Given an approved write of a new CSV file
    frame = sales([1, 2, 3])
    info = approve(session, lambda: write_table(frame, "sales.csv"))
    assert info.action == "table.write"
    assert not Path("sales.csv").exists()
    # When the same call is made again
    written = write_table(frame, "sales.csv")
    # Then the file holds the table and the absolute path is returned
    assert written == str(Path("sales.csv").resolve())
    pd.testing.assert_frame_equal(pd.read_csv("sales.csv"), frame)
    # And a further run needs a new approval
    ask(lambda: write_table(frame, "sales.csv"))


@pytest.mark.parametrize("name", ["sales.parquet", "sales.pq"])
def test_an_approved_parquet_write_keeps_the_file_mode(session, name):
    # Given an existing Parquet file with restricted permissions
    path = Path(name)
    write_directly(sales([1]), path)
    os.chmod(path, 0o640)
    frame = sales([1, 2])
    approve(session, lambda: write_table(frame, name, key="id"))
    # When the approved call runs
    write_table(frame, name, key="id")
    # Then the new content replaced the file and the mode stayed
    pd.testing.assert_frame_equal(pd.read_parquet(path), frame)
    assert path.stat().st_mode & 0o777 == 0o640


def test_format_overrides_the_suffix_and_index_is_written_on_request(session):
    # Given a frame with a named index written as CSV to a .txt file
    frame = sales([1, 2]).set_index("id")
    approve(session, lambda: write_table(frame, "out.txt", format="CSV", index=True))
    # When it runs
    write_table(frame, "out.txt", format="CSV", index=True)
    # Then the file is CSV with the index as its first column
    assert Path("out.txt").read_text().splitlines()[0] == "id,region,units,price"


def test_a_file_changed_after_the_preview_refuses_the_run(session):
    # Given an approved replacement of an existing file
    path = Path("sales.csv")
    write_directly(sales([1, 2]), path)
    frame = sales([1, 2, 3])
    approve(session, lambda: write_table(frame, "sales.csv"))
    # When the file changes before the run
    write_directly(sales([7]), path)
    before = path.read_bytes()
    # Then the run refuses and the file is left as it was
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        write_table(frame, "sales.csv")
    assert path.read_bytes() == before


def test_a_frame_changed_after_the_preview_needs_a_new_approval(session):
    # Given an approved write
    frame = sales([1, 2])
    approve(session, lambda: write_table(frame, "sales.csv"))
    # When a value of the frame changes before the run
    frame.loc[0, "units"] = 999
    # Then the call does not run what was approved
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        write_table(frame, "sales.csv")
    assert not Path("sales.csv").exists()


def test_a_rejected_write_does_not_run(session):
    # Given a write a person rejects
    frame = sales([1])
    pending = ask(lambda: write_table(frame, "sales.csv"))
    decide(session, pending, "reject", reason="wrong table")
    # When it is called again
    # Then it raises the rejection and writes nothing
    with pytest.raises(ja.ApprovalRejected):
        write_table(frame, "sales.csv")
    assert not Path("sales.csv").exists()


def test_the_writer_refuses_outside_an_approved_run(session):
    # When the body is called directly, skipping the gate
    # Then it refuses before writing
    with pytest.raises(errors.ApprovalRequired):
        write_table.fn(sales([1]), str(Path("sales.csv").resolve()), format="csv")
    assert not Path("sales.csv").exists()


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"df": [[1, 2]], "path": "a.csv"}, "df"),
        ({"df": pd.Series([1]), "path": "a.csv"}, "df"),
        ({"path": "a.xlsx"}, "format"),
        ({"path": "a.csv", "format": "json"}, "format"),
        ({"path": "a.csv", "format": 3}, "format"),
        ({"path": 42}, "path"),
        ({"path": "a.csv", "key": "missing"}, "key"),
        ({"path": "a.csv", "key": []}, "key"),
        ({"path": "a.csv", "key": ["id", "id"]}, "key"),
        ({"path": "a.csv", "index": "yes"}, "index"),
        ({"path": "no-such-folder/a.csv"}, "path"),
        ({"path": "."}, "format"),
    ],
)
def test_invalid_arguments_are_refused_before_anything_is_asked(session, kwargs, argument):
    # Given arguments that cannot describe a table write
    call = {"df": sales([1]), **kwargs}
    # When the write is requested
    # Then it is refused as invalid, naming the argument, and no request is opened
    with pytest.raises(errors.ApprovalInvalidArgument) as refused:
        write_table(**call)
    assert refused.value.code == "APPROVAL_INVALID_ARGUMENT"
    assert refused.value.details["argument"] == argument
    assert session.store.pending() == []


def test_a_directory_path_and_repeated_or_non_text_columns_are_invalid(session):
    # Given a directory named like a CSV file, a frame with repeated columns, int column names
    Path("dir.csv").mkdir()
    repeated = pd.DataFrame([[1, 2]], columns=["a", "a"])
    numbered = pd.DataFrame([[1, 2]])
    # Then each is refused before anything is asked
    for call in (
        lambda: write_table(sales([1]), "dir.csv"),
        lambda: write_table(repeated, "a.csv"),
        lambda: write_table(numbered, "a.parquet"),
    ):
        with pytest.raises(errors.ApprovalInvalidArgument):
            call()
    assert session.store.pending() == []


def test_missing_pyarrow_names_the_tables_extra(session, monkeypatch):
    # Given a kernel without pyarrow
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    # When a Parquet write is requested
    # Then it fails naming the extra to install, and nothing is asked
    with pytest.raises(errors.ApprovalMissingDependency) as missing:
        write_table(sales([1]), "a.parquet")
    assert missing.value.details["extra"] == "tables"
    assert missing.value.details["package"] == "pyarrow"
    assert session.store.pending() == []


def test_missing_pandas_names_the_tables_extra(session, monkeypatch):
    # Given a kernel where pandas cannot be imported
    monkeypatch.setitem(sys.modules, "pandas", None)
    # When a CSV write is requested
    with pytest.raises(errors.ApprovalMissingDependency) as missing:
        write_table([[1]], "a.csv")
    # Then the error names pandas and the extra
    assert missing.value.details["package"] == "pandas"
    assert missing.value.details["extra"] == "tables"


def test_the_ops_package_does_not_import_pandas_itself():
    # Given a fresh interpreter importing the ops package only
    code = "import sys, jupyter_approvals.ops; print('pandas' in sys.modules)"
    # Then pandas was not imported by it
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


def test_preview_of_a_new_file_shows_schema_counts_and_first_rows(session):
    # When a new CSV table is requested
    info = request_of(session, ask(lambda: write_table(sales([1, 2, 3]), "sales.csv")))
    # Then the summary and preview describe the table
    path = str(Path("sales.csv").resolve())
    assert info.summary == f"Create CSV table {path} (3 rows x 4 columns)"
    preview = info.preview
    assert preview.startswith("3 rows to write, 4 columns\nFirst 3 rows of the new table:\n")
    assert "    id (int64) | region (str) | units (int64) | price (float64)\n" in preview
    assert "    1 | " in preview
    assert f"  file: {path}\n  action: Create (CSV)\n  new table: 3 rows x 4 columns" in preview
    assert "existing file: none" in preview


def test_preview_by_key_shows_added_removed_changed_and_column_changes(session):
    # Given an existing CSV file
    write_directly(sales([1, 2, 3, 4]), Path("sales.csv"))
    # And a new version: 4 removed, 5 and 6 added, 2 changed in units, a column added
    new = sales([1, 2, 3, 5, 6], units=[10, 25, 30, 50, 60]).assign(note="x")
    # When its write is requested with the id key
    preview = request_of(session, ask(lambda: write_table(new, "sales.csv", key="id"))).preview
    # Then the preview lists the changes by key and by column (CSV keys are the file's text)
    assert "action: Replace (CSV)" in preview
    assert preview.startswith(
        "2 rows to add, 1 row to remove, 1 row to change, 2 rows unchanged, 4 rows now, "
        "5 rows after, 1 column to add\n"
    )
    assert "  + note |  | str" in preview
    assert "  + 5 | r5 | 50 | 1.5 | x\n  + 6 | r6 | 60 | 1.5 | x" in preview
    assert "  - 4 | r4 | 40 | 1.5" in preview
    assert "  ~ 2 | 20 -> 25" in preview


def test_preview_without_key_shows_row_counts_and_retyped_columns(session):
    # Given an existing Parquet file and a new version whose units became floats
    write_directly(sales([1, 2]), Path("sales.parquet"))
    new = sales([1, 2, 3]).astype({"units": "float64"}).drop(columns="price")
    # When its write is requested without a key
    preview = request_of(session, ask(lambda: write_table(new, "sales.parquet"))).preview
    # Then column and row-count changes are shown, no row diff
    assert preview.startswith("2 rows now, 3 rows after, 1 column to remove, 1 column to retype\n")
    assert "  - price | float64 | " in preview
    assert "  ~ units | int64 | float64" in preview
    assert "rows to add" not in preview


def test_preview_reports_duplicate_keys(session):
    # Given an existing file whose key repeats, and a new table whose key repeats too
    write_directly(sales([1, 1, 2]), Path("sales.csv"))
    new = sales([1, 2, 2, 3, 3])
    # When the write is requested with that key
    preview = request_of(session, ask(lambda: write_table(new, "sales.csv", key=["id"]))).preview
    # Then both duplicate sets are named
    assert "Duplicate keys in the existing file: 1 key appears more than once ('1')" in preview
    assert "Duplicate keys in the new table: 2 keys appear more than once ('2', '3')" in preview


def test_preview_says_when_the_existing_file_is_not_that_format_and_write_still_runs(session):
    # Given a .parquet file that is not Parquet
    Path("sales.parquet").write_text("not parquet")
    frame = sales([1])
    # When the write is requested
    info = approve(session, lambda: write_table(frame, "sales.parquet", key="id"))
    # Then the preview says the file could not be read
    assert "could not be read as Parquet" in info.preview
    # And the approved write still replaces it
    write_table(frame, "sales.parquet", key="id")
    pd.testing.assert_frame_equal(pd.read_parquet("sales.parquet"), frame)


def test_preview_says_when_the_old_file_lacks_the_key(session):
    # Given an existing file without the key column
    write_directly(sales([1]).drop(columns="id"), Path("sales.csv"))
    # When the write is requested by key
    preview = request_of(session, ask(lambda: write_table(sales([1]), "sales.csv", key="id")))
    # Then the preview says rows cannot be matched
    assert "rows cannot be matched by key" in preview.preview


def test_preview_of_huge_and_wide_tables_stays_within_budget(session):
    # Given an existing file and a new table, both very wide with long values
    wide = pd.DataFrame({f"column_{i:04d}_{'x' * 80}": ["v" * 200] * 3 for i in range(2_000)})
    wide.insert(0, "id", [1, 2, 3])
    wide.to_csv("wide.csv", index=False)
    changed = wide.copy()
    changed.iloc[:, 1:] = "w" * 200
    # When its write is requested
    preview = request_of(session, ask(lambda: write_table(changed, "wide.csv", key="id"))).preview
    # Then the preview is bounded and says what it left out
    assert len(preview) <= PREVIEW_BUDGET
    assert "more columns not shown" in preview


def test_preview_of_many_changed_rows_stays_within_budget(session, monkeypatch):
    # Given 50,000 rows of which every one changes, compared without the preview's time budget
    # (this test counts the shown and cut rows; a budget spent on a slow machine is tested in
    # test_tables_structured.py)
    monkeypatch.setattr(tables_module, "Deadline", lambda: Deadline(math.inf))
    ids = list(range(50_000))
    write_directly(sales(ids), Path("big.csv"))
    new = sales(ids, units=[-1] * len(ids)).assign(region="z" * 300)
    # When the write is requested by key
    preview = request_of(session, ask(lambda: write_table(new, "big.csv", key="id"))).preview
    # Then counts cover every row while the examples are few
    assert len(preview) <= PREVIEW_BUDGET
    assert preview.startswith("0 rows to add, 0 rows to remove, 50,000 rows to change, 0 rows")
    [cut] = re.findall(r"… ([\d,]+) more changed rows not shown", preview)
    shown = len(re.findall(r"(?m)^  ~ ", preview))
    assert shown + int(cut.replace(",", "")) == 50_000


def test_calls_on_different_paths_do_not_compete(session):
    # Given an approved write to one file and a pending write to another
    frame = sales([1])
    approve(session, lambda: write_table(frame, "a.csv"))
    ask(lambda: write_table(frame, "b.csv"))
    # When the approved call runs
    write_table(frame, "a.csv")
    # Then it wrote its own file only
    assert Path("a.csv").exists()
    assert not Path("b.csv").exists()


def test_nan_values_in_the_frame_survive_the_round_trip(session):
    # Given a frame with missing values
    frame = pd.DataFrame({"id": [1, 2], "x": [np.nan, 1.0], "s": ["a", None]})
    approve(session, lambda: write_table(frame, "n.parquet"))
    # When it is written
    write_table(frame, "n.parquet")
    # Then it reads back equal
    pd.testing.assert_frame_equal(pd.read_parquet("n.parquet"), frame)


def test_a_dangling_symlink_is_shown_resolved_and_a_repointed_link_asks_again(session):
    # Given out.csv, a symlink to a file that does not exist yet
    Path("out.csv").symlink_to("a.csv")
    frame = sales([1])
    # When its write is approved
    info = approve(session, lambda: write_table(frame, "out.csv"))
    # Then the card names the file the link leads to
    assert info.summary.startswith(f"Create CSV table {Path('a.csv').resolve()} ")
    # And when the link is re-pointed to another missing file after the approval
    Path("out.csv").unlink()
    Path("out.csv").symlink_to("b.csv")
    # Then the call asks again instead of writing the other file
    pending = ask(lambda: write_table(frame, "out.csv"))
    assert str(Path("b.csv").resolve()) in request_of(session, pending).summary
    assert not Path("a.csv").exists()
    assert not Path("b.csv").exists()


def test_a_symlink_swapped_in_at_write_time_refuses_and_writes_nothing(session, monkeypatch):
    # Given an approved write of out.csv
    frame = sales([1])
    approve(session, lambda: write_table(frame, "out.csv"))
    # And out.csv becoming a symlink to another file once the run has started
    real_require_lease = tables_module.require_lease

    def swap_in_link(action):
        real_require_lease(action)
        Path("out.csv").symlink_to("elsewhere.csv")

    monkeypatch.setattr(tables_module, "require_lease", swap_in_link)
    # When it runs
    with pytest.raises(errors.ApprovalFingerprintMismatch) as refused:
        write_table(frame, "out.csv")
    # Then it names both paths and writes neither
    assert str(Path("out.csv").resolve()) in refused.value.message
    assert refused.value.details["approved"] == str(Path.cwd() / "out.csv")
    assert not Path("elsewhere.csv").exists()
    assert Path("out.csv").is_symlink()


@pytest.mark.parametrize("index", [False, True])
def test_an_identical_csv_rewrite_shows_no_change(session, index):
    # Given a CSV file written from a frame with text keys that look like numbers
    frame = pd.DataFrame(
        {"id": ["001", "002", "010"], "units": [1, 2, 3], "note": ["a", "", None]},
        index=pd.Index([7, 8, 9]) if index else None,
    )
    frame.to_csv("same.csv", index=index)
    # When the very same frame is to be written there again, by key
    call = lambda: write_table(frame, "same.csv", key="id", index=index)  # noqa: E731
    preview = request_of(session, ask(call)).preview
    # Then the preview shows nothing changed: no column added, removed or retyped
    assert preview.startswith(
        "0 rows to add, 0 rows to remove, 0 rows to change, 3 rows unchanged, 3 rows now, "
        "3 rows after, 0 columns to change\n"
    )
    assert "retyped" not in preview
    assert "Unnamed" not in preview


def test_a_csv_comparison_sees_text_changes_a_type_guess_would_hide(session):
    # Given a CSV file whose key "001" a type guess would read as the number 1
    pd.DataFrame({"id": ["001", "2"], "v": ["1.0", "x"]}).to_csv("t.csv", index=False)
    # When a frame writing "1" as key and 1 (written as "1") as value is to replace it
    new = pd.DataFrame({"id": ["1", "2"], "v": [1, "x"]})
    preview = request_of(session, ask(lambda: write_table(new, "t.csv", key="id"))).preview
    # Then the keys are compared as the file's text
    assert preview.startswith("1 row to add, 1 row to remove, 0 rows to change, 1 row unchanged")
    assert "  + '1' | 1" in preview
    assert "  - '001' | 1.0" in preview
