"""Reading one SQL statement without a database: is it one statement, and of which kind.

A small tokenizer that knows quoted text (``'…'``, ``"…"``, `````…`````, ``[…]``, ``$tag$…$tag$``),
comments and parentheses is enough to refuse several statements in one call (some drivers,
psycopg among them, would run them all) and to tell a preview what kind of statement it shows.
The kind only chooses the preview; it is never what makes a statement safe: every
statement, a SELECT included, runs only after a person approved it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.errors import ApprovalInvalidArgument

#: Statements that change rows: a dry run (rolled back) counts what they would change.
DML = frozenset({"INSERT", "UPDATE", "DELETE", "REPLACE", "MERGE", "UPSERT"})
#: Statements that change the schema.
DDL = frozenset({"CREATE", "DROP", "ALTER", "TRUNCATE", "RENAME", "COMMENT"})
#: Statements that only read (by their first keyword).
READ = frozenset({"SELECT", "VALUES", "TABLE", "SHOW", "DESCRIBE", "DESC"})
#: Transaction control would end the transaction the operation runs in: refused.
TRANSACTION = frozenset({"BEGIN", "COMMIT", "ROLLBACK", "END", "SAVEPOINT", "RELEASE", "START"})

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")
_DOLLAR = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$")
_CLOSING = {"'": "'", '"': '"', "`": "`", "[": "]"}


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


def tokenize(text: str) -> list[Token]:
    """Tokens of ``text`` (comments and whitespace dropped); refuses unterminated quotes."""
    tokens: list[Token] = []
    depth = 0
    i = 0
    n = len(text)
    while i < n:
        char = text[i]
        if char.isspace():
            i += 1
        elif text.startswith("--", i):
            newline = text.find("\n", i)
            i = n if newline < 0 else newline + 1
        elif text.startswith("/*", i):
            close = text.find("*/", i + 2)
            i = n if close < 0 else close + 2
        elif char in _CLOSING:
            end = _quoted_end(text, i, _CLOSING[char])
            tokens.append(Token("quoted", text[i:end], i, end, depth))
            i = end
        elif char == "$" and (dollar := _DOLLAR.match(text, i)):
            tag = dollar.group(0)
            close = text.find(tag, dollar.end())
            if close < 0:
                raise _invalid("the statement has an unterminated $-quoted string", position=i)
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


def _quoted_end(text: str, start: int, closing: str) -> int:
    """Index past the quote opened at ``start``; a doubled closing quote is an escape."""
    i = start + 1
    while True:
        close = text.find(closing, i)
        if close < 0:
            raise _invalid(
                f"the statement has an unterminated quoted text starting with {text[start]!r}",
                position=start,
            )
        if closing != "]" and text.startswith(closing * 2, close):
            i = close + 2
            continue
        return close + 1


def parse_statement(text: object) -> Statement:
    """Check that ``text`` is exactly one SQL statement and classify it.

    Raises ApprovalInvalidArgument for a non-string, an empty statement, several
    statements, or transaction control (the operation runs in its own transaction).
    """
    if not isinstance(text, str):
        raise _invalid(
            f"statement must be a str holding one SQL statement, not {type(text).__name__}"
        )
    tokens = tokenize(text)
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
    return Statement(
        text=text, keyword=keyword, main=main, kind=_kind(main, words), tokens=tuple(tokens)
    )


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
    return ApprovalInvalidArgument(
        f"{message}. Nothing was asked or run.", argument="statement", **details
    )
