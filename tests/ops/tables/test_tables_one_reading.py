"""The table preview compares with the file content that was fingerprinted, not a later one."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from jupyter_approvals.core import errors
from jupyter_approvals.ops import write_table

from ..conftest import approve, ask, change_after_fingerprint


def test_the_table_preview_compares_with_the_content_that_was_fingerprinted(
    session, tmp_path: Path, monkeypatch
):
    # Given a CSV table that another writer replaces right after the approval's reading of it
    path = tmp_path / "work" / "sales.csv"
    pd.DataFrame({"id": [1, 2], "units": [10, 20]}).to_csv(path, index=False)
    later = pd.DataFrame({"id": [1, 2, 3, 4, 5], "units": [0, 0, 0, 0, 0]})
    change_after_fingerprint(session, monkeypatch, lambda: later.to_csv(path, index=False))
    new = pd.DataFrame({"id": [1, 2, 3], "units": [10, 20, 30]})
    # When its replacement is asked for, keyed by id
    info = approve(session, lambda: write_table(new, path, key="id"))
    # Then the card compares with the two rows that were fingerprinted
    assert info.preview.startswith(
        "1 row to add, 0 rows to remove, 0 rows to change, 2 rows unchanged, 2 rows now, "
        "3 rows after"
    )
    # And the approved call refuses, since the file is not what the card compared with
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        write_table(new, path, key="id")
    assert len(pd.read_csv(path)) == 5


def test_a_csv_too_large_to_compare_quickly_says_so(session, tmp_path: Path, monkeypatch):
    from jupyter_approvals.ops.tables import preview as table_preview

    # Given a CSV comparison limit smaller than the new table
    monkeypatch.setattr(table_preview, "CSV_DIFF_LIMIT_CELLS", 5)
    path = tmp_path / "work" / "sales.csv"
    pd.DataFrame({"id": [1, 2], "units": [10, 20]}).to_csv(path, index=False)
    new = pd.DataFrame({"id": [1, 2, 3], "units": [10, 20, 30]})
    # When its replacement is asked for, keyed by id
    info = approve(session, lambda: write_table(new, path, key="id"))
    # Then the card gives the row counts and says why rows were not compared by key
    assert info.preview.startswith("2 rows now, 3 rows after")
    assert "rows to add" not in info.preview
    assert "the new table has 6 cells, more than the 5 a CSV preview compares" in info.preview


def test_nothing_read_for_a_call_outlives_it(session, tmp_path: Path):
    from jupyter_approvals.kernel import handoff

    # Given an existing table whose replacement waits for a person
    path = tmp_path / "work" / "sales.csv"
    pd.DataFrame({"id": [1, 2]}).to_csv(path, index=False)
    new = pd.DataFrame({"id": [1, 2, 3]})
    key = ("table.write", str(path.resolve()))
    ask(lambda: write_table(new, path))
    # When an agent asks again (the pending request is reused, no card is built) and asks for
    # the fingerprint
    ask(lambda: write_table(new, path))
    write_table.fingerprint(new, path)
    # Then the file's content read for those calls is not kept after them
    assert handoff.peek(key) is None
