"""Reading one SQL statement without a database: is it one statement, and of which kind.

A small lexer that knows quoted text, comments and parentheses is enough to refuse several
statements in one call (some drivers, psycopg among them, would run them all) and to tell a
preview what kind of statement it shows. Databases disagree on how text is quoted and
commented (backslash escapes in PostgreSQL ``E'…'`` and MySQL strings, MySQL ``#`` comments,
nested ``/* */`` in PostgreSQL, ``[…]`` identifiers in SQLite), so the statement is read
with every lexer its dialect may use (all of them for a dialect not known here), and it is
refused unless they all read the very same tokens: where it ends is then certain.

The kind only chooses the preview; it is never what makes a statement safe: every
statement, a SELECT included, runs only after a person approved it, and the kind is read
from keywords, not checked (a function a SELECT calls may still change data).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from ...core.errors import ApprovalInvalidArgument
from ..common.refusal import invalid_argument

#: Statements that change rows: a dry run (rolled back) counts what they would change.
DML = frozenset({"INSERT", "UPDATE", "DELETE", "REPLACE", "MERGE", "UPSERT"})
#: Statements that change the schema.
DDL = frozenset({"CREATE", "DROP", "ALTER", "TRUNCATE", "RENAME", "COMMENT"})
#: Statements classified as reads by their first keyword (not checked).
READ = frozenset({"SELECT", "VALUES", "TABLE", "SHOW", "DESCRIBE", "DESC"})
#: Transaction control would end the transaction the operation runs in: refused.
TRANSACTION = frozenset({"BEGIN", "COMMIT", "ROLLBACK", "END", "SAVEPOINT", "RELEASE", "START"})
#: Keywords that make a WITH (or a read) data-changing wherever they appear.
_NESTED_CHANGE = frozenset({"INSERT", "UPDATE", "DELETE", "MERGE"})
#: A change keyword right after one of these is a clause, not a statement (FOR UPDATE,
#: FOR NO KEY UPDATE, ON DELETE CASCADE).
_CLAUSE_BEFORE = frozenset({"FOR", "KEY", "ON"})

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")
_DOLLAR = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$")
_MYSQL_EXECUTABLE = re.compile(r"/\*!\d*")


@dataclass(frozen=True)
class Lexer:
    """How one database reads quotes and comments (one reading of the statement)."""

    name: str
    quotes: str  # characters that open quoted text: "'\"`[" ( "[" closes with "]")
    backslash: str = ""  # quote characters inside which a backslash escapes the next char
    hash_comments: bool = False  # MySQL: "#" comments to the end of the line
    dash_needs_space: bool = False  # MySQL: "--" is a comment only before whitespace
    nested_comments: bool = False  # PostgreSQL: /* /* */ */ nests
    dollar_quotes: bool = False  # PostgreSQL: $tag$…$tag$
    executable_comments: bool = False  # MySQL: the text of /*! … */ is SQL


SQLITE = Lexer("SQLite", "'\"`[")
_POSTGRES = [
    Lexer("PostgreSQL", "'\"", backslash=b, nested_comments=True, dollar_quotes=True)
    for b in ("", "'")  # standard_conforming_strings on/off (and E'…' strings)
]
_MYSQL = [
    Lexer(
        "MySQL",
        "'\"`",
        backslash=b,
        hash_comments=True,
        dash_needs_space=True,
        executable_comments=True,
    )
    for b in ("'\"", "'", '"', "")  # NO_BACKSLASH_ESCAPES and ANSI_QUOTES on/off
]
_T_SQL = Lexer("SQL Server", "'\"[", nested_comments=True)
LEXERS_OF_DIALECT: dict[str, tuple[Lexer, ...]] = {
    "sqlite": (SQLITE,),
    "postgresql": tuple(_POSTGRES),
    "mysql": tuple(_MYSQL),
    "mariadb": tuple(_MYSQL),
}
#: For a dialect not listed above, every reading must agree.
ALL_LEXERS = (SQLITE, *_POSTGRES, *_MYSQL, _T_SQL)


@dataclass(frozen=True)
class Token:
    """One token outside comments: ``kind`` is word, quoted, punct or end (``;``)."""

    kind: str
    text: str
    start: int
    end: int
    depth: int


@dataclass(frozen=True)
class Statement:
    """One checked statement: its kind, first keyword and where its text really ends."""

    text: str
    keyword: str  # the first keyword, upper-cased
    main: str  # the statement's own keyword: after WITH …, the DML or SELECT that follows
    kind: str  # "dml", "ddl", "read" or "other"
    tokens: tuple[Token, ...]

    @property
    def body_end(self) -> int:
        """Index just past the last token that is not a trailing ``;`` (comments excluded)."""
        significant = [t for t in self.tokens if t.kind != "end"]
        return significant[-1].end if significant else 0

    def top_words(self) -> list[str]:
        """Upper-cased words outside parentheses, in order."""
        return [t.text.upper() for t in self.tokens if t.kind == "word" and t.depth == 0]

    @property
    def has_returning(self) -> bool:
        """True if the statement already ends in a RETURNING clause."""
        return "RETURNING" in self.top_words()

    @property
    def main_at_top(self) -> bool:
        """True if the main keyword is outside parentheses (RETURNING can be added)."""
        return self.main in self.top_words()


class _Unterminated(Exception):
    def __init__(self, message: str, position: int) -> None:
        super().__init__(message)
        self.message = message
        self.position = position


def _tokens(text: str, lexer: Lexer) -> list[Token]:
    tokens: list[Token] = []
    depth = 0
    i = 0
    n = len(text)
    while i < n:
        char = text[i]
        if char.isspace():
            i += 1
        elif _line_comment(text, i, lexer):
            newline = text.find("\n", i)
            i = n if newline < 0 else newline + 1
        elif lexer.executable_comments and (executable := _MYSQL_EXECUTABLE.match(text, i)):
            i = executable.end()  # its text is read as SQL; the closing "*/" is skipped below
        elif lexer.executable_comments and text.startswith("*/", i):
            i += 2
        elif text.startswith("/*", i):
            i = _comment_end(text, i, lexer.nested_comments)
        elif char in lexer.quotes:
            end = _quoted_end(text, i, "]" if char == "[" else char, char in lexer.backslash)
            tokens.append(Token("quoted", text[i:end], i, end, depth))
            i = end
        elif lexer.dollar_quotes and char == "$" and (dollar := _DOLLAR.match(text, i)):
            tag = dollar.group(0)
            close = text.find(tag, dollar.end())
            if close < 0:
                raise _Unterminated("the statement has an unterminated $-quoted string", i)
            end = close + len(tag)
            tokens.append(Token("quoted", text[i:end], i, end, depth))
            i = end
        elif word := _WORD.match(text, i):
            tokens.append(Token("word", word.group(0), i, word.end(), depth))
            i = word.end()
        elif char == ";":
            tokens.append(Token("end", ";", i, i + 1, depth))
            i += 1
        else:
            if char == ")":
                depth = max(0, depth - 1)
            tokens.append(Token("punct", char, i, i + 1, depth))
            if char == "(":
                depth += 1
            i += 1
    return tokens


def _line_comment(text: str, i: int, lexer: Lexer) -> bool:
    if text.startswith("--", i):
        if not lexer.dash_needs_space:
            return True
        after = text[i + 2 : i + 3]
        return after == "" or after.isspace() or ord(after) < 32
    return lexer.hash_comments and text[i] == "#"


def _comment_end(text: str, start: int, nested: bool) -> int:
    """Index past the block comment opened at ``start`` (to the end if unterminated)."""
    depth = 0
    i = start
    while i < len(text):
        if text.startswith("/*", i):
            depth = depth + 1 if nested or depth == 0 else depth
            i += 2
        elif text.startswith("*/", i):
            depth -= 1
            i += 2
            if depth == 0:
                return i
        else:
            i += 1
    return len(text)


def _quoted_end(text: str, start: int, closing: str, backslash: bool) -> int:
    """Index past the quote opened at ``start``; a doubled closing quote is an escape."""
    i = start + 1
    while True:
        close = text.find(closing, i)
        if backslash:
            escape = text.find("\\", i)
            if 0 <= escape < close or (close < 0 <= escape):
                i = escape + 2
                continue
        if close < 0:
            raise _Unterminated(
                f"the statement has an unterminated quoted text starting with {text[start]!r}",
                start,
            )
        if closing != "]" and text.startswith(closing * 2, close):
            i = close + 2
            continue
        return close + 1


def parse_statement(text: object, dialect: str | None = None) -> Statement:
    """Check that ``text`` is exactly one SQL statement for ``dialect`` and classify it.

    Raises ApprovalInvalidArgument for a non-string, an empty statement, several
    statements, a statement the dialect's lexers read differently (so where it ends is not
    certain), or transaction control (the operation runs in its own transaction).
    """
    if not isinstance(text, str):
        raise _invalid(
            f"statement must be a str holding one SQL statement, not {type(text).__name__}"
        )
    return _parse(text, dialect)


@functools.lru_cache(maxsize=16)
def _parse(text: str, dialect: str | None) -> Statement:
    # Called by prepare, summary, subject, preview and the run of one call: read once.
    lexers = LEXERS_OF_DIALECT.get(dialect or "", ALL_LEXERS)
    tokens = _agreed_tokens(text, lexers, dialect)
    ends = [index for index, token in enumerate(tokens) if token.kind == "end"]
    if ends and any(token.kind != "end" for token in tokens[ends[0] :]):
        raise _invalid(
            "statement holds more than one SQL statement; execute_sql runs exactly one "
            "(each needs its own approval). Split it into separate calls.",
            position=tokens[ends[0]].start,
        )
    body = [token for token in tokens if token.kind != "end"]
    if not body:
        raise _invalid("statement is empty (only whitespace, comments or ';')")
    keyword = body[0].text.upper() if body[0].kind == "word" else body[0].text
    if keyword in TRANSACTION:
        raise _invalid(
            f"{keyword} controls the transaction, but execute_sql runs each statement in a "
            "transaction of its own (committed when it succeeds, rolled back when it fails). "
            "Leave transaction control out.",
            keyword=keyword,
        )
    words = [t.text.upper() for t in body if t.kind == "word" and t.depth == 0]
    main = keyword
    if keyword == "WITH":
        # The main statement after the common table expressions decides.
        main = next((w for w in words[1:] if w in DML or w in READ), keyword)
    if keyword == "WITH" or main in READ:
        # A data-changing WITH (PostgreSQL: WITH d AS (DELETE … RETURNING *) SELECT …)
        # changes data whatever its main statement: at any depth, it is a change.
        main = _nested_change(body) or main
    return Statement(
        text=text, keyword=keyword, main=main, kind=_kind(main, words), tokens=tuple(tokens)
    )


def _agreed_tokens(text: str, lexers: tuple[Lexer, ...], dialect: str | None) -> list[Token]:
    """The tokens every lexer reads alike; refused where two readings differ."""
    readings: list[list[Token] | _Unterminated] = []
    for lexer in lexers:
        try:
            readings.append(_tokens(text, lexer))
        except _Unterminated as exc:
            readings.append(exc)
    first = readings[0]
    if all(isinstance(r, _Unterminated) for r in readings) and isinstance(first, _Unterminated):
        raise _invalid(first.message, position=first.position)
    if all(r == first for r in readings) and not isinstance(first, _Unterminated):
        return first
    names = sorted({lexer.name for lexer in lexers})
    scope = f"the {dialect} dialect" if dialect in LEXERS_OF_DIALECT else "SQL dialects"
    if "\\" in text:
        reason = (
            "it has a backslash, which some readings take as an escape inside quoted text "
            "(PostgreSQL E'…' strings, MySQL strings) and others as a plain character"
        )
    else:
        reason = (
            "it uses quoting or comments that databases read differently (# comments, "
            "nested /* */ comments, [ ] or $tag$ quoting, or -- without a space)"
        )
    raise _invalid(
        f"where this statement ends is not certain: {scope} ({', '.join(names)}) can read "
        f"it in more than one way, as {reason}, so a second statement could hide in it. "
        "Pass values as named parameters instead of quoting them in the statement, e.g. "
        "execute_sql(db, 'SELECT * FROM t WHERE name = :name', {'name': value})",
        dialect=dialect,
    )


def _nested_change(body: list[Token]) -> str | None:
    """The first INSERT/UPDATE/DELETE/MERGE at any depth that starts a statement, if any."""
    previous = ""
    for token in body:
        if token.kind != "word":
            previous = ""
            continue
        word = token.text.upper()
        if word in _NESTED_CHANGE and previous not in _CLAUSE_BEFORE:
            return word
        previous = word
    return None


def _kind(main: str, words: list[str]) -> str:
    if main in DML:
        return "dml"
    if main in DDL:
        return "ddl"
    if main in READ:
        # SELECT … INTO creates a table on some databases: not a read.
        return "other" if "INTO" in words else "read"
    return "other"


def _invalid(message: str, **details: object) -> ApprovalInvalidArgument:
    return invalid_argument(message, argument="statement", **details)
