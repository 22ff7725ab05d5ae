"""parse_statement: one statement for certain under every lexer its dialect may use."""

from __future__ import annotations

import pytest

from jupyter_approvals.core import errors
from jupyter_approvals.ops.sql.statement import parse_statement

#: The reviewer's bypass: with backslash escapes (PostgreSQL E'…') the DROP is a second
#: statement; without them (the old lexer) it looked like quoted text.
E_STRING_BYPASS = "SELECT E'\\'' ; DROP TABLE t; -- '"


@pytest.mark.parametrize(
    ("statement", "dialect"),
    [
        (E_STRING_BYPASS, None),
        (E_STRING_BYPASS, "postgresql"),
        ("SELECT '\\'' ; DROP TABLE t; -- '", "postgresql"),  # standard_conforming_strings off
        ("SELECT '\\'' ; DROP TABLE t; -- '", "mysql"),
        ('SELECT "\\"" ; DROP TABLE t; -- "', "mysql"),
        ("SELECT 1 # '\n; DELETE FROM t; -- '", "mysql"),  # "#" comments
        ("SELECT 1 # '\n; DELETE FROM t; -- '", None),
        ("SELECT 1 --1; DROP TABLE t", "mysql"),  # "--1" is not a MySQL comment
        ("SELECT 1 /*! ; DROP TABLE t */", "mysql"),  # executable comment
        ("SELECT 1 /* /* */ 'x */ ; DROP TABLE t; --'", "postgresql"),  # nested comments
        ("SELECT a[1]; DROP TABLE t; -- ]", "postgresql"),  # [ ] is not quoting there
        ("SELECT a[1]; DROP TABLE t; -- ]", None),
    ],
)
def test_a_second_statement_hidden_by_dialect_quoting_is_refused(
    statement: str, dialect: str | None
) -> None:
    # Given a statement that one of the dialect's lexers reads as two statements
    # When it is parsed
    with pytest.raises(errors.ApprovalInvalidArgument) as invalid:
        parse_statement(statement, dialect)
    # Then it is refused naming the statement
    assert invalid.value.details["argument"] == "statement"


def test_an_ambiguous_backslash_explains_how_to_pass_values() -> None:
    # When the reviewer's statement is parsed for an unknown dialect
    with pytest.raises(errors.ApprovalInvalidArgument) as invalid:
        parse_statement(E_STRING_BYPASS)
    # Then the message says why, and how to pass the value as a parameter instead
    message = invalid.value.message
    assert "where this statement ends is not certain" in message
    assert "backslash" in message
    assert "named parameters" in message
    assert ":name" in message


@pytest.mark.parametrize(
    ("statement", "dialect", "main", "kind"),
    [
        ("SELECT tags[1] FROM t", "postgresql", "SELECT", "read"),
        ("SELECT data #>> '{a}' FROM t", "postgresql", "SELECT", "read"),
        ("SELECT E'\\'' ; DROP TABLE t; -- '", "sqlite", "SELECT", "read"),  # no escapes there
        ("SELECT 'C:\\temp'", "sqlite", "SELECT", "read"),
        ("SELECT `a` FROM t # note", "mysql", "SELECT", "read"),
        ("SELECT 1 --1; DROP TABLE t", "sqlite", "SELECT", "read"),  # a comment in SQLite
        ("SELECT * FROM t FOR UPDATE", "postgresql", "SELECT", "read"),
    ],
)
def test_statements_each_dialect_reads_one_way_are_accepted(
    statement: str, dialect: str, main: str, kind: str
) -> None:
    # When a statement every lexer of its dialect reads alike is parsed
    parsed = parse_statement(statement, dialect)
    # Then it is one statement of the expected kind
    assert (parsed.main, parsed.kind) == (main, kind)


@pytest.mark.parametrize(
    ("statement", "main"),
    [
        ("WITH g AS (DELETE FROM t RETURNING *) SELECT * FROM g", "DELETE"),
        ("WITH a AS (SELECT 1), b AS (UPDATE t SET x = 1 RETURNING x) SELECT * FROM b", "UPDATE"),
        ("WITH a AS (WITH b AS (INSERT INTO t VALUES (1) RETURNING *) SELECT 1) TABLE a", "INSERT"),
    ],
)
def test_a_with_that_changes_data_at_any_depth_is_a_change(statement: str, main: str) -> None:
    # When a WITH whose main statement is a SELECT holds a data-changing CTE
    parsed = parse_statement(statement, "postgresql")
    # Then it is classified as a row change, never as a read
    assert (parsed.main, parsed.kind) == (main, "dml")
    assert not parsed.main_at_top
