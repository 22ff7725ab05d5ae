"""The body of ``GET pending`` (docs/protocol.md 6.1), rendered from the server's copy.

A row's JSON text is kept while the row is unchanged (same kernel listing, kernel state and
session notebook), so a poll that changed nothing encodes no row again: with many kernels
the encoding, not the lookup, is what a poll costs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..mirror.kernels import Row


class PendingRows:
    """Renders the pending list, reusing the text of the rows that did not change."""

    def __init__(self) -> None:
        self._texts: dict[tuple[object, ...], str] = {}

    def body(
        self,
        held: list[dict[str, Any]],
        rows: list[tuple[tuple[object, ...], Row]],
        listing: dict[str, Any],
        decorate: Callable[[dict[str, Any]], None],
    ) -> str:
        """The JSON text of the answer: ``held`` (the server's own requests) and the kernel
        ``rows`` (each with its full key; ``decorate`` completes a row's item before it is
        first encoded) in one list, oldest first, then the fields of ``listing``."""
        texts: dict[tuple[object, ...], str] = {}
        entries = [(str(item.get("created_at", "")), json.dumps(item)) for item in held]
        for key, row in rows:
            text = self._texts.get(key)
            if text is None:
                decorate(row.item)
                text = json.dumps(row.item)
            texts[key] = text
            entries.append((str(row.item.get("created_at", "")), text))
        self._texts = texts  # rows that went are forgotten
        entries.sort(key=lambda entry: entry[0])
        pending = '{"pending": [' + ", ".join(text for _, text in entries) + "]"
        rest = json.dumps(listing)
        return pending + ("}" if rest == "{}" else ", " + rest[1:])
