"""The file formats of ``write_table``: CSV and Parquet, chosen by name or by file suffix.

Reading the existing file back is only for the preview, so it is bounded: a file larger than
:data:`READ_LIMIT_BYTES` is not loaded (for Parquet its schema and row count still come from
the file's footer), and any failure to read becomes a sentence for the preview instead of an
error — the write itself stays possible.

A CSV file keeps text, not types: read back with type guessing, the string key ``"001"``
becomes the number 1 and an unnamed index column becomes ``Unnamed: 0``. So a CSV is
compared as text on both sides: the existing file is read with every cell as text
(:data:`CSV_READ`), and the new table is compared as the file it will write reads back
with the same options (:func:`csv_names`, :func:`csv_frame`).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...previews.table_file_change import CSV_READ, TABLE_SUFFIXES
from ..common.extras import require

#: Formats by name, and the suffixes that choose them when no format is given.
FORMATS = ("csv", "parquet")
SUFFIXES = TABLE_SUFFIXES

#: Names shown to people.
LABELS = {"csv": "CSV", "parquet": "Parquet"}

#: An existing file larger than this is not loaded for the preview's comparison.
READ_LIMIT_BYTES = 256 * 1024 * 1024


def format_for(path: Path, format: str | None) -> str | None:
    """The format named by ``format`` (any case), else the one ``path``'s suffix implies."""
    if format is not None:
        name = format.lower()
        return name if name in FORMATS else None
    return SUFFIXES.get(path.suffix.lower())


def require_pandas(fmt: str) -> Any:
    """pandas (and pyarrow for Parquet), or APPROVAL_MISSING_DEPENDENCY naming the extra."""
    pd = require("pandas", "write tables")
    if fmt == "parquet":
        require("pyarrow", "write Parquet files")
    return pd


def write_frame(df: Any, path: str, fmt: str, index: bool) -> None:
    """Write ``df`` to the file named ``path`` in ``fmt``.

    A file name, not a Python file object: pyarrow then writes Parquet natively instead of
    through Python calls (measured about 25% faster for 1 GiB).
    """
    if fmt == "csv":
        df.to_csv(path, index=index)
    else:
        df.to_parquet(path, index=index)


@dataclass(frozen=True)
class Existing:
    """What the preview learned about the file being replaced.

    ``frame`` is its content when it could be loaded; otherwise ``problem`` says why not,
    and ``dtypes`` / ``rows`` may still be known (from a Parquet footer).
    """

    size: int
    frame: Any = None
    dtypes: dict[Any, str] | None = None
    rows: int | None = None
    problem: str | None = None


def read_existing(
    pd: Any, path: Path, fmt: str, index: bool, size: int, data: bytes | None
) -> Existing:
    """Parse the file's content for comparison: ``data``, the bytes the fingerprint covered.

    ``data`` is None when the file was larger than READ_LIMIT_BYTES; then only a Parquet
    file's footer is read, for its schema and row count.
    """
    label = LABELS[fmt]
    if data is None:
        problem = (
            f"the existing file is too large to compare in the preview "
            f"(over {READ_LIMIT_BYTES // (1024 * 1024)} MiB); row changes are not shown"
        )
        if fmt == "parquet":
            return _parquet_footer(path, size, problem)
        return Existing(size=size, problem=problem)
    try:
        if fmt == "csv":
            frame = pd.read_csv(io.BytesIO(data), **CSV_READ)
        else:
            frame = pd.read_parquet(io.BytesIO(data))
            if index and not _is_default_index(pd, frame.index):
                frame = frame.reset_index()
    except Exception as exc:  # any parser failure only changes what the preview says
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return Existing(
            size=size, problem=f"the existing file could not be read as {label}: {reason}"
        )
    return Existing(
        size=size,
        frame=frame,
        dtypes={name: str(dtype) for name, dtype in frame.dtypes.items()},
        rows=len(frame),
    )


def _parquet_footer(path: Path, size: int, problem: str) -> Existing:
    """Schema and row count of a large Parquet file from its footer alone."""
    try:
        parquet = require("pyarrow.parquet", "write Parquet files")
        metadata = parquet.read_metadata(path)
        schema = metadata.schema.to_arrow_schema()
        dtypes = {field.name: str(field.type) for field in schema}
        return Existing(size=size, dtypes=dtypes, rows=metadata.num_rows, problem=problem)
    except Exception as exc:  # a damaged footer only changes what the preview says
        return Existing(size=size, problem=f"{problem}; its footer could not be read: {exc}")


def _is_default_index(pd: Any, index: Any) -> bool:
    return isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1


def csv_names(pd: Any, df: Any, index: bool) -> list[Any]:
    """The column names the CSV file written from ``df`` reads back with, index columns first."""
    header = df.head(0).to_csv(index=index)
    return list(pd.read_csv(io.StringIO(header), **CSV_READ).columns)


def csv_frame(pd: Any, df: Any, index: bool) -> Any:
    """``df`` as the CSV file written from it reads back with :data:`CSV_READ` (all text)."""
    return pd.read_csv(io.StringIO(df.to_csv(index=index)), **CSV_READ)
