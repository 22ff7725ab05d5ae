"""Tables: ``write_table`` (table.write), a DataFrame to CSV or Parquet; extra ``tables``.

The operation lives in :mod:`.write`, the file formats in :mod:`.formats` and its preview in
:mod:`.preview`; this package is their public home.
"""

from __future__ import annotations

from .write import write_table

__all__ = ["write_table"]
