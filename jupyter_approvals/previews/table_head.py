"""How much of the new table a table.write card shows as its first rows (the rows themselves
are :func:`.table_structured.add_head`; the card's text is rendered from that table)."""

from __future__ import annotations

#: Rows and columns of the new table shown as its first rows.
HEAD_ROWS = 5
HEAD_COLUMNS = 12
