"""The structured preview of a request: its documented shape, escaped and held to a size.

Beside the text preview, a request may carry a structured preview (docs/protocol.md 4.1): the
same facts as JSON a card and the sidebar render as HTML (hunks with line numbers, tables of
old and new values, highlighted code). :func:`checked_structured` is the one gate every
structured preview passes before a store keeps it, whoever built it: it keeps only the
documented keys and kinds, passes every string through :func:`~.visible.make_visible`, and
refuses a document over the size limit by replacing it with one that says so. Cards, the
sidebar and the journal then never see a shape or a character the contract does not allow.

The shape is written down once more, normatively, as ``schemas/structured-preview.schema.json``;
this checker stays the run-time gate (jsonschema costs seconds to import in a kernel:
docs/decisions/0007), and tests/core/test_schemas.py holds the two together.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Final

from .visible import make_visible

#: The version of the structured preview's shape (docs/protocol.md 4.1).
STRUCTURED_VERSION: Final = 1
#: Tones of a headline count: how a renderer colours it.
TONES: Final = frozenset({"added", "removed", "changed", "neutral"})
#: Kinds of a diff line.
LINE_OPS: Final = frozenset({"context", "added", "removed"})
#: Kinds of a table row.
ROW_CHANGES: Final = frozenset({"added", "removed", "changed", "same"})
#: Languages a code block may name; a renderer highlights the ones it knows.
LANGUAGES: Final = frozenset({"python", "sql", "shell", "json", "text"})

# Nothing a person can read in a card is this deep; a deeper document is refused, not walked.
_MAX_ITEMS: Final = 100_000


@dataclass(frozen=True)
class Preview:
    """What a preview function may return: the text preview and, beside it, a structured one
    (built with :class:`jupyter_approvals.previews.structured.StructuredPreview`)."""

    text: str
    structured: dict[str, Any] | None = None


class StructuredRefused(ValueError):
    """A structured preview that does not have the documented shape."""


def checked_structured(
    document: object, limit: int, escaped_once: bool = False
) -> dict[str, Any] | None:
    """``document`` reduced to its documented shape and escaped, or a note if it is too large.

    Returns None for no document. A document of another shape raises
    :class:`StructuredRefused`. One whose JSON is longer than ``limit`` characters is replaced
    by a document that only says so: the text preview then carries what the person reads.
    ``escaped_once`` is for a document a store escaped already (the server re-reading a
    kernel's listing): every hiding character is marked again, but not the markers' bracket,
    so markers are not garbled and a kernel that skipped the escaping gains nothing.
    """
    if document is None:
        return None
    token = _ESCAPE.set(_escaped_again if escaped_once else make_visible)
    try:
        kept = _document(document)
    finally:
        _ESCAPE.reset(token)
    size = len(json.dumps(kept, ensure_ascii=False, separators=(",", ":")))
    if size <= limit:
        return kept
    return {
        "version": STRUCTURED_VERSION,
        "headline": [],
        "blocks": [],
        "left_out": [],
        "notes": [
            f"The structured preview is {size:,} characters, over the limit of {limit:,}; "
            "it is not shown. The text preview shows this request."
        ],
    }


def _document(value: object) -> dict[str, Any]:
    doc = _mapping(value, "the structured preview")
    version = doc.get("version")
    if type(version) is not int or version != STRUCTURED_VERSION:
        raise StructuredRefused(f"version must be {STRUCTURED_VERSION}")
    return {
        "version": STRUCTURED_VERSION,
        "headline": [_count(item) for item in _items(doc.get("headline", []), "headline")],
        "blocks": [_block(item) for item in _items(doc.get("blocks", []), "blocks")],
        "left_out": [_left_out(item) for item in _items(doc.get("left_out", []), "left_out")],
        "notes": [_text(item, "note") for item in _items(doc.get("notes", []), "notes")],
    }


def _count(value: object) -> dict[str, Any]:
    item = _mapping(value, "a headline count")
    tone = _choice(item.get("tone", "neutral"), TONES, "headline tone")
    return {
        "label": _text(item.get("label"), "label"),
        "count": _int(item.get("count")),
        "tone": tone,
    }


def _left_out(value: object) -> dict[str, Any]:
    item = _mapping(value, "a left_out entry")
    return {"kind": _text(item.get("kind"), "kind"), "count": _int(item.get("count"))}


def _block(value: object) -> dict[str, Any]:
    block = _mapping(value, "a block")
    kind = block.get("type")
    title = _optional_text(block.get("title"))
    checker = _BLOCKS.get(kind) if isinstance(kind, str) else None
    if checker is None:
        raise StructuredRefused(f"block type {str(kind)[:20]!r} is not one of {sorted(_BLOCKS)}")
    checked = {"type": kind, "title": title, **checker(block)}
    if block.get("fold") is True:  # plumbing, shown folded (left out when false)
        checked["fold"] = True
    return checked


def _facts(block: dict[str, Any]) -> dict[str, Any]:
    items = []
    for value in _items(block.get("items"), "facts"):
        item = _mapping(value, "a fact")
        items.append(
            {
                "label": _text(item.get("label"), "label"),
                "value": _text(item.get("value"), "value"),
                "path": item.get("path") is True,
            }
        )
    return {"items": items}


def _argv(block: dict[str, Any]) -> dict[str, Any]:
    return {"items": [_text(item, "argument") for item in _items(block.get("items"), "argv")]}


def _request(block: dict[str, Any]) -> dict[str, Any]:
    return {"method": _text(block.get("method"), "method"), "url": _text(block.get("url"), "url")}


def _code(block: dict[str, Any]) -> dict[str, Any]:
    language = _choice(block.get("language", "text"), LANGUAGES, "language")
    return {"language": language, "text": _text(block.get("text"), "code")}


def _diff(block: dict[str, Any]) -> dict[str, Any]:
    hunks = []
    for value in _items(block.get("hunks"), "hunks"):
        hunk = _mapping(value, "a hunk")
        lines = []
        for raw in _items(hunk.get("lines"), "lines"):
            line = _mapping(raw, "a diff line")
            op = _choice(line.get("op"), LINE_OPS, "diff line op")
            lines.append(
                {
                    "op": op,
                    "old": _optional_int(line.get("old")),
                    "new": _optional_int(line.get("new")),
                    "parts": [_part(part) for part in _items(line.get("parts"), "parts")],
                }
            )
        hunks.append(
            {
                "old_start": _int(hunk.get("old_start")),
                "new_start": _int(hunk.get("new_start")),
                "lines": lines,
            }
        )
    return {
        "old_path": _text(block.get("old_path"), "old_path"),
        "new_path": _text(block.get("new_path"), "new_path"),
        "hunks": hunks,
    }


def _part(value: object) -> dict[str, Any]:
    part = _mapping(value, "a part of a diff line")
    return {"text": _text(part.get("text"), "text"), "changed": part.get("changed") is True}


def _table(block: dict[str, Any]) -> dict[str, Any]:
    columns = []
    for value in _items(block.get("columns"), "columns"):
        column = _mapping(value, "a column")
        columns.append(
            {
                "name": _text(column.get("name"), "column name"),
                "type": _optional_text(column.get("type")),
                "key": column.get("key") is True,
            }
        )
    rows = []
    for value in _items(block.get("rows"), "rows"):
        row = _mapping(value, "a row")
        change = _choice(row.get("change", "same"), ROW_CHANGES, "row change")
        cells = [_cell(cell) for cell in _items(row.get("cells"), "cells")]
        if len(cells) != len(columns):
            raise StructuredRefused("a row must have one cell per column")
        rows.append({"change": change, "cells": cells})
    return {"columns": columns, "rows": rows}


def _cell(value: object) -> dict[str, Any]:
    cell = _mapping(value, "a cell")
    if "old" in cell or "new" in cell:
        return {
            "old": _text(cell.get("old"), "old value"),
            "new": _text(cell.get("new"), "new value"),
        }
    return {"text": _text(cell.get("text"), "cell")}


def _paths(block: dict[str, Any]) -> dict[str, Any]:
    items = []
    for value in _items(block.get("items"), "paths"):
        item = _mapping(value, "a path entry")
        items.append(
            {"path": _text(item.get("path"), "path"), "detail": _optional_text(item.get("detail"))}
        )
    return {"items": items}


def _lines(block: dict[str, Any]) -> dict[str, Any]:
    return {"lines": [_text(item, "line") for item in _items(block.get("lines"), "lines")]}


_BLOCKS = {
    "facts": _facts,
    "argv": _argv,
    "request": _request,
    "code": _code,
    "diff": _diff,
    "table": _table,
    "paths": _paths,
    "text": _lines,
}


def _choice(value: object, allowed: frozenset[str], what: str) -> str:
    # A list or a dict is no member of a set of strings, and must not raise TypeError asking.
    if not isinstance(value, str) or value not in allowed:
        raise StructuredRefused(f"{what} {str(value)[:20]!r} is not one of {sorted(allowed)}")
    return value


def _mapping(value: object, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise StructuredRefused(f"{what} must be an object")
    return value


def _items(value: object, what: str) -> list[Any]:
    if not isinstance(value, list | tuple):
        raise StructuredRefused(f"{what} must be a list")
    if len(value) > _MAX_ITEMS:
        raise StructuredRefused(f"{what} has more than {_MAX_ITEMS:,} entries")
    return list(value)


def _escaped_again(text: str) -> str:
    return make_visible(text, mark_bracket=False)


# How strings are written: escaped (a store keeping a new document) or as they are (a shape
# check only). A context variable, so concurrent checks in threads cannot mix the two.
_ESCAPE: ContextVar[Callable[[str], str]] = ContextVar("_ESCAPE", default=make_visible)


def _text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise StructuredRefused(f"{what} must be a string")
    return _ESCAPE.get()(value)


def _optional_text(value: object) -> str | None:
    return None if value is None else _text(value, "title")


def _int(value: object) -> int:
    if type(value) is not int or not -(2**53) < value < 2**53:
        raise StructuredRefused("counts and line numbers must be integers a browser can hold")
    return value


def _optional_int(value: object) -> int | None:
    return None if value is None else _int(value)
