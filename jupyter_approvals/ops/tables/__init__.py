"""Tables: ``write_table`` (table.write), a DataFrame to CSV or Parquet; extra ``tables``.

The operation lives in :mod:`.write`, the file formats in :mod:`.formats`; its preview's
comparison with the file replaced in :mod:`.preview`, the first rows shown in :mod:`.head` and
the structured preview's building in :mod:`.structured`. This package is their public home.
"""

from __future__ import annotations

from .write import write_table

__all__ = ["write_table"]
