"""How much of a table a structured preview shows: the new table's first rows on a
table.write card (:func:`.table_structured.add_head`), and the changed, added and removed rows
of any table comparison. Kept apart from the comparison engine, which needs numpy, so that a
preview that only counts rows can name the limit without it."""

from __future__ import annotations

#: Rows and columns of the new table shown as its first rows.
HEAD_ROWS = 5
HEAD_COLUMNS = 12
#: Rows of each kind (changed, added, removed) and column changes a structured preview shows.
STRUCTURED_ROWS = 20
