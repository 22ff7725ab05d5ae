"""The first rows of the new table on a table.write card: how many rows and columns are shown,
and those rows as the card's text lines (their structured table is
:func:`.structured.add_head`)."""

from __future__ import annotations

from typing import Any

#: Rows and columns of the new table shown as its first rows.
HEAD_ROWS = 5
HEAD_COLUMNS = 12


def head_lines(pd: Any, frame: Any) -> list[str]:
    """The first rows of ``frame`` as pandas prints them, indented (wide tables cut)."""
    head = frame.iloc[:HEAD_ROWS, :HEAD_COLUMNS]
    with pd.option_context("display.width", 10_000, "display.max_colwidth", 30):
        lines = head.to_string(index=False).splitlines()
    if frame.shape[1] > HEAD_COLUMNS:
        lines.append(f"  (first {HEAD_COLUMNS} of {frame.shape[1]:,} columns)")
    return ["  " + line for line in lines]
