"""execute_sql and to_sql: the structured preview made beside the text, from the same dry run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from jupyter_approvals.core.structured import checked_structured
from jupyter_approvals.kernel.session import KernelSession
from jupyter_approvals.ops import execute_sql, to_sql
from jupyter_approvals.previews.structured import STRUCTURED_BUDGET

from ..conftest import ask, request_of
from .test_sql import DELETE, url

pytestmark = pytest.mark.usefixtures("sql_engines_closed")


def structured_of(session: KernelSession, call: Any) -> tuple[str, dict[str, Any]]:
    info = request_of(session, ask(call))
    assert info.structured is not None
    assert checked_structured(info.structured, 64_000) == info.structured
    return info.preview, info.structured


def blocks(document: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [block for block in document["blocks"] if block["type"] == kind]


def facts(block: dict[str, Any]) -> dict[str, str]:
    return {item["label"]: item["value"] for item in block["items"]}


def test_a_delete_shows_the_dry_run_count_first_then_the_statement(
    session: KernelSession, shop: Path
) -> None:
    # When a DELETE with a parameter is asked for
    call = lambda: execute_sql(url(shop), DELETE, {"status": "cancelled"})  # noqa: E731
    text, document = structured_of(session, call)
    # Then the dry run's count is the headline
    assert document["headline"] == [
        {"label": "rows it would delete", "count": 4, "tone": "removed"}
    ]
    # And the statement comes first, as SQL, then its parameters and database
    code, parameters, database = document["blocks"][:3]
    assert (code["type"], code["language"], code["text"]) == ("code", "sql", DELETE)
    assert facts(parameters) == {":status": "'cancelled'"}
    assert facts(database) == {
        "database": url(shop),
        "dialect": "sqlite",
        "statement": "DELETE",
        "dry run": "Dry run (rolled back): would delete 4 rows.",
    }
    # And the rows it would delete, values as the text shows them
    [rows] = blocks(document, "table")
    assert [c["name"] for c in rows["columns"]] == ["id", "status", "amount"]
    assert [c["text"] for c in rows["rows"][0]["cells"]] == ["1", "'cancelled'", "0"]
    assert {row["change"] for row in rows["rows"]} == {"removed"}
    # And the text is the text of before
    assert "Dry run (rolled back): would delete 4 rows." in text


def test_a_drop_counts_the_schema_change_and_the_rows_lost(
    session: KernelSession, shop: Path
) -> None:
    # When a DROP TABLE is asked for
    _, document = structured_of(session, lambda: execute_sql(url(shop), "DROP TABLE orders"))
    # Then the counts say what goes, and the table's first rows follow
    assert [(i["label"], i["count"], i["tone"]) for i in document["headline"]] == [
        ("table to drop", 1, "removed"),
        ("rows in table orders", 10, "removed"),
    ]
    [rows] = blocks(document, "table")
    assert rows["title"] == "Table orders now: 10 rows; first 5"
    assert {"kind": "rows of table orders", "count": 5} in document["left_out"]


def test_what_the_dry_run_cannot_tell_is_a_note(session: KernelSession, shop: Path) -> None:
    # When a read is asked for (no dry run)
    _, document = structured_of(session, lambda: execute_sql(url(shop), "SELECT * FROM orders"))
    # Then no count is claimed and a note says why
    assert document["headline"] == []
    assert any("no dry run is made" in note for note in document["notes"])


def test_credentials_stay_hidden_in_the_structured_form(
    session: KernelSession, tmp_path: Path
) -> None:
    # Given a SQLite URI whose query carries a token
    secret_url = f"sqlite:///file:{tmp_path}/t.db?mode=rwc&token=hunter2&uri=true"
    # When a statement on it is asked for
    _, document = structured_of(session, lambda: execute_sql(secret_url, "CREATE TABLE t (x)"))
    # Then the database is shown with the token masked
    assert "hunter2" not in json.dumps(document)
    assert "token=***" in facts(blocks(document, "facts")[-1])["database"]


def test_a_huge_statement_stays_within_the_budget_with_cuts_announced(
    session: KernelSession, shop: Path
) -> None:
    # Given a 200,000-character statement and a huge parameter
    ids = ", ".join(str(i) for i in range(40_000))
    statement = f"DELETE FROM orders WHERE id IN ({ids}) AND status != :note"
    call = lambda: execute_sql(url(shop), statement, {"note": "x" * 10**6})  # noqa: E731
    _, document = structured_of(session, call)
    # Then it fits, keeps the count first and says what it left out
    assert len(json.dumps(document, ensure_ascii=False)) <= STRUCTURED_BUDGET
    assert document["headline"][0]["count"] == 10
    left_out = {item["kind"]: item["count"] for item in document["left_out"]}
    assert left_out["characters of the statement"] == len(statement) - 6_000
    assert any("cut here" in note for note in document["notes"])


def test_to_sql_replace_counts_rows_added_and_removed(session: KernelSession, shop: Path) -> None:
    # Given a frame replacing the orders table
    frame = pd.DataFrame({"id": [1, 2], "status": ["a", "b"]})
    call = lambda: to_sql(frame, "orders", url(shop), if_exists="replace")  # noqa: E731
    # When the write is asked for
    _, document = structured_of(session, call)
    # Then the counts say what is written and what is dropped
    counts = {i["label"]: (i["count"], i["tone"]) for i in document["headline"]}
    assert counts["rows to add"] == (2, "added")
    assert counts["rows to remove"] == (10, "removed")
    frame_rows, table_rows = blocks(document, "table")
    assert (frame_rows["columns"][0]["name"], frame_rows["columns"][0]["type"]) == ("id", "int64")
    assert [c["text"] for c in frame_rows["rows"][0]["cells"]] == ["1", "a"]
    assert table_rows["columns"][0]["type"] == "INTEGER"
    assert {row["change"] for row in table_rows["rows"]} == {"removed"}


def test_to_sql_append_counts_rows_before_and_after(session: KernelSession, shop: Path) -> None:
    frame = pd.DataFrame({"id": [11], "status": ["new"], "amount": [5]})
    call = lambda: to_sql(frame, "orders", url(shop), if_exists="append")  # noqa: E731
    _, document = structured_of(session, call)
    counts = {i["label"]: i["count"] for i in document["headline"]}
    assert (counts["row to add"], counts["rows now"], counts["rows after"]) == (1, 10, 11)
