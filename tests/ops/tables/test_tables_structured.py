"""write_table (table.write): the structured preview made beside the text, in the same pass."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from jupyter_approvals.core.structured import checked_structured
from jupyter_approvals.ops import write_table
from jupyter_approvals.ops.tables import write as tables_write
from jupyter_approvals.previews.render_text import render_text
from jupyter_approvals.previews.structured import STRUCTURED_BUDGET
from jupyter_approvals.previews.table_head import STRUCTURED_ROWS
from jupyter_approvals.previews.text import PREVIEW_BUDGET, Deadline

from ..conftest import ask, request_of
from .test_tables import sales, write_directly


def structured_of(session: Any, call: Any) -> tuple[str, dict[str, Any]]:
    """The text and structured preview of the request a call opens."""
    info = request_of(session, ask(call))
    assert info.structured is not None
    return info.preview, info.structured


def headline(document: dict[str, Any]) -> dict[str, int]:
    return {item["label"]: item["count"] for item in document["headline"]}


def table(document: dict[str, Any], title_start: str) -> dict[str, Any]:
    [found] = [
        b for b in document["blocks"] if b["type"] == "table" and b["title"].startswith(title_start)
    ]
    return found


def columns(block: dict[str, Any]) -> list[tuple[str, str | None, bool]]:
    return [(c["name"], c["type"], c["key"]) for c in block["columns"]]


def cells(block: dict[str, Any]) -> list[list[Any]]:
    """Each row's cells: a text, or (old, new) for a changed value."""
    return [
        [c["text"] if "text" in c else (c["old"], c["new"]) for c in row["cells"]]
        for row in block["rows"]
    ]


def test_parquet_changes_show_counts_first_then_old_and_new_values_with_real_keys(session):
    # Given an existing Parquet file: ids 1-4
    write_directly(sales([1, 2, 3, 4]), Path("sales.parquet"))
    # And a new version: 4 removed, 5 and 6 added, 2 changed in units, a column added
    new = sales([1, 2, 3, 5, 6], units=[10, 25, 30, 50, 60]).assign(note="x")
    # When its write is requested with the id key
    call = lambda: write_table(new, "sales.parquet", key="id")  # noqa: E731
    text, document = structured_of(session, call)
    # Then the headline counts come first, in the order a person reads them
    assert [(i["label"], i["count"], i["tone"]) for i in document["headline"]] == [
        ("rows to add", 2, "added"),
        ("row to remove", 1, "removed"),
        ("row to change", 1, "changed"),
        ("rows unchanged", 2, "neutral"),
        ("rows now", 4, "neutral"),
        ("rows after", 5, "neutral"),
        ("column to add", 1, "added"),
    ]
    # And the blocks: column changes, changed, added, removed rows, first rows, target
    titles = [block["title"] for block in document["blocks"]]
    assert titles == [
        "Column changes (dtype before and after)",
        "Changed rows (old -> new; 1 of 1)",
        "Added rows (2 of 2)",
        "Removed rows (1 of 1)",
        "First 5 rows of the new table",
        "Target",
    ]
    assert cells(document["blocks"][0]) == [["note", "", "str"]]
    # And the changed row names its integer key as 5 would be, with old and new values
    changed = table(document, "Changed rows")
    assert columns(changed) == [("id", "int64", True), ("units", "int64", False)]
    assert cells(changed) == [["2", ("20", "25")]]
    assert cells(table(document, "Added rows")) == [
        ["5", "r5", "50", "1.5", "x"],
        ["6", "r6", "60", "1.5", "x"],
    ]
    assert cells(table(document, "Removed rows")) == [["4", "r4", "40", "1.5"]]
    # And it passes the store's check unchanged
    assert checked_structured(document, 64_000) == document
    # And the text is rendered from it: the changed row with its old and new value
    assert text == render_text(document)
    assert "Changed rows (old -> new; 1 of 1):\n    id [key] (int64) | units (int64)\n" in text
    assert "  ~ 2 | 20 -> 25" in text


def test_csv_keys_show_with_the_new_tables_type_not_as_quoted_text(session):
    # Given an existing CSV file and a new version whose unit of id 5 changed
    write_directly(sales([4, 5]), Path("sales.csv"))
    new = sales([4, 5], units=[40, 51])
    # When its write is requested by key
    text, document = structured_of(session, lambda: write_table(new, "sales.csv", key="id"))
    # Then the key reads 5 under the int64 type (the "'5': units" had it quoted)
    changed = table(document, "Changed rows")
    assert columns(changed) == [("id", "int64", True), ("units", "int64", False)]
    assert cells(changed) == [["5", ("50", "51")]]
    # And the text says the same
    assert "  ~ 5 | 50 -> 51" in text


def test_csv_text_keys_are_quoted_so_001_and_1_differ(session):
    # Given a CSV file keyed by text that looks like numbers
    pd.DataFrame({"id": ["001", "2"], "v": ["a", "x"]}).to_csv("t.csv", index=False)
    new = pd.DataFrame({"id": ["1", "2"], "v": ["a", "y"]})
    # When it is replaced by key
    _, document = structured_of(session, lambda: write_table(new, "t.csv", key="id"))
    # Then text keys are quoted, and each side shows its own rows
    assert cells(table(document, "Added rows")) == [["'1'", "a"]]
    assert cells(table(document, "Removed rows")) == [["'001'", "a"]]
    assert cells(table(document, "Changed rows")) == [["'2'", ("x", "y")]]


def test_retyped_and_removed_columns_show_before_and_after_types(session):
    # Given an existing Parquet file and a new version: units float, price dropped
    write_directly(sales([1, 2]), Path("sales.parquet"))
    new = sales([1, 2]).astype({"units": "float64"}).drop(columns="price")
    new.loc[1, "units"] = 20.5
    # When its write is requested by key
    _, document = structured_of(session, lambda: write_table(new, "sales.parquet", key="id"))
    # Then the column changes are counted and listed with both types
    counts = headline(document)
    assert counts["column to remove"] == 1
    assert counts["column to retype"] == 1
    assert cells(table(document, "Column changes")) == [
        ["price", "float64", ""],
        ["units", "int64", "float64"],
    ]
    # And a changed cell of the retyped column names both types
    changed = table(document, "Changed rows")
    assert columns(changed) == [("id", "int64", True), ("units", "int64 -> float64", False)]
    assert cells(changed) == [["2", ("20", "20.5")]]


def test_a_two_column_key_gives_one_key_cell_per_column(session):
    # Given rows keyed by (region, day)
    old = pd.DataFrame({"region": ["n", "n"], "day": [1, 2], "units": [1, 2]})
    write_directly(old, Path("t.parquet"))
    new = pd.DataFrame({"region": ["n", "n"], "day": [1, 2], "units": [1, 3]})
    # When replaced by both columns
    _, document = structured_of(
        session, lambda: write_table(new, "t.parquet", key=["region", "day"])
    )
    # Then the key cells keep each value's type (text quoted, numbers plain)
    changed = table(document, "Changed rows")
    assert columns(changed)[:2] == [("region", "str", True), ("day", "int64", True)]
    assert cells(changed) == [["'n'", "2", ("2", "3")]]


def test_a_new_file_shows_its_size_and_first_rows(session):
    # When a new CSV table is requested
    _, document = structured_of(session, lambda: write_table(sales([1, 2, 3]), "new.csv"))
    # Then the counts say what is written, and its first rows follow with their types
    assert headline(document) == {"rows to write": 3, "columns": 4}
    head = table(document, "First 3 rows")
    assert columns(head)[0] == ("id", "int64", False)
    assert cells(head)[0] == ["1", "r1", "10", "1.5"]
    facts = {i["label"]: i["value"] for i in document["blocks"][-1]["items"]}
    assert facts["file"] == str(Path("new.csv").resolve())
    assert facts["existing file"] == "none"


def test_a_comparison_the_text_skips_is_a_note_in_the_structured_form_too(session):
    # Given an existing file without the key column
    write_directly(sales([1]).drop(columns="id"), Path("sales.csv"))
    # When the write is requested by key
    text, document = structured_of(session, lambda: write_table(sales([1]), "sales.csv", key="id"))
    # Then both say rows cannot be matched, and no row counts are claimed
    assert "rows cannot be matched by key" in text
    assert any("rows cannot be matched by key" in note for note in document["notes"])
    assert not {"rows to change", "row to change"} & headline(document).keys()
    assert headline(document)["row after"] == 1


def test_many_changed_rows_and_wide_values_stay_within_the_budget_with_cuts_announced(session):
    # Given 2,000 rows with 30 columns of long values, every one of them changing
    ids = list(range(2_000))
    long = [f"long_{i:02d}_{'x' * 60}" for i in range(30)]
    write_directly(sales(ids).assign(**dict.fromkeys(long, "v" * 500)), Path("big.parquet"))
    new = sales(ids, units=[-1] * len(ids)).assign(**dict.fromkeys(long, "w" * 500))
    # And 25 columns to add
    new = new.assign(**{f"added_{i:02d}": i for i in range(25)})
    # When the write is requested by key
    call = lambda: write_table(new, "big.parquet", key="id")  # noqa: E731
    text, document = structured_of(session, call)
    # Then the counts cover every row, the examples are few and within the budget
    assert headline(document)["rows to change"] == 2_000
    shown = len(table(document, "Changed rows")["rows"])
    assert 0 < shown < STRUCTURED_ROWS
    assert len(json.dumps(document, ensure_ascii=False)) <= STRUCTURED_BUDGET
    # And every cut is announced: rows, columns, the blocks past the budget
    left_out = {item["kind"]: item["count"] for item in document["left_out"]}
    assert left_out["changed rows"] == 2_000 - shown
    assert left_out["column changes"] == 25 - STRUCTURED_ROWS
    assert left_out["columns of changed rows"] == 31 - 12
    assert left_out["blocks"] >= 1
    assert checked_structured(document, 64_000) == document
    # And the text is bounded, and counts what neither form shows
    assert len(text) <= PREVIEW_BUDGET
    assert f"… {2_000 - shown:,} more changed rows not shown" in text


class SpentAfter(Deadline):
    """A preview deadline that is spent once it has been asked ``calls`` times."""

    def __init__(self, calls: int) -> None:
        super().__init__()
        self.calls = calls

    def passed(self) -> bool:
        self.calls -= 1
        return self.calls < 0


def test_a_deadline_spent_reading_the_file_says_rows_were_not_compared(session, monkeypatch):
    # Given an existing CSV table, and a machine so slow that reading it spends the budget
    write_directly(sales([1, 2, 3]), Path("sales.csv"))
    monkeypatch.setattr(tables_write, "Deadline", lambda: SpentAfter(0))
    # When its replacement is requested by key
    call = lambda: write_table(sales([1, 2], units=[5, 6]), "sales.csv", key="id")  # noqa: E731
    text, document = structured_of(session, call)
    # Then both forms say that row changes were not computed, and claim no row counts
    reason = "Row changes by key were not computed: reading the existing file took too long."
    assert reason in text
    assert reason in document["notes"]
    claimed = [label for label in headline(document) if label.startswith(("row to", "rows to"))]
    assert claimed == []
    assert headline(document)["rows after"] == 2


def test_a_deadline_spent_comparing_rows_keeps_the_counts_and_says_values_are_not_shown(
    session, monkeypatch
):
    # Given an existing Parquet table, and a budget spent once the rows are compared
    write_directly(sales([1, 2, 3]), Path("sales.parquet"))
    monkeypatch.setattr(tables_write, "Deadline", lambda: SpentAfter(1))
    # When its replacement is requested by key
    call = lambda: write_table(sales([1, 2], units=[5, 6]), "sales.parquet", key="id")  # noqa: E731
    text, document = structured_of(session, call)
    # Then the counts are there, the rows' values are not, and both forms say why
    assert headline(document)["rows to change"] == 2
    assert headline(document)["row to remove"] == 1
    assert not [b for b in document["blocks"] if b["title"].startswith("Changed rows")]
    reason = "The values of changed, added and removed rows are not shown"
    assert reason in text
    assert any(note.startswith(reason) for note in document["notes"])
