"""The text of a pandas Series or DataFrame in a card: every cell as the value it holds.

pandas prints text cells bare, so ``'1'`` looks like ``1``, ``'a '`` like ``'a'`` and ``None``
like ``NaN``. A card must not show two different values alike, so text columns (object and
string dtypes) are printed with each cell's Python ``repr``; numbers come out exact through
:func:`~jupyter_approvals.core.fixed_format.fixed_formatting`. A long table shows its first and
last rows and says how many it leaves out, as pandas does.
"""

from __future__ import annotations

from typing import Any

#: A table longer than this shows only its first and last rows.
MAX_ROWS_SHOWN = 60
#: Rows shown at each end of a longer table.
END_ROWS = 5


def _is_text(dtype: Any, pd: Any) -> bool:
    return getattr(dtype, "kind", None) == "O" or isinstance(dtype, pd.StringDtype)


def _quoted(column: Any, pd: Any) -> Any:
    return column.map(repr) if _is_text(column.dtype, pd) else column


def table_text(value: Any, pd: Any) -> str | None:
    """``value``'s text with text cells quoted, or None when it holds no text column (pandas'
    own text is exact then) or is no Series or DataFrame. Call inside fixed formatting."""
    if isinstance(value, pd.Series):
        if not _is_text(value.dtype, pd):
            return None
        return _ends(value, lambda part: _quoted(part, pd).to_string(name=True, dtype=False)) + (
            f"\ndtype: {value.dtype}"
        )
    if isinstance(value, pd.DataFrame):
        if not any(_is_text(dtype, pd) for dtype in value.dtypes):
            return None
        max_columns = pd.get_option("display.max_columns")
        width = pd.get_option("display.width")

        def frame_text(part: Any) -> str:
            quoted = pd.concat([_quoted(column, pd) for _, column in part.items()], axis=1)
            quoted.columns = part.columns
            text: str = quoted.to_string(max_cols=max_columns, line_width=width)
            return text

        rows, columns = value.shape
        return _ends(value, frame_text) + f"\n\n[{rows} rows x {columns} columns]"
    return None


def _ends(value: Any, render: Any) -> str:
    rows = len(value)
    if rows <= MAX_ROWS_SHOWN:
        return str(render(value))
    head = str(render(value.iloc[:END_ROWS]))
    tail = str(render(value.iloc[rows - END_ROWS :]))
    return f"{head}\n… {rows - 2 * END_ROWS:,} rows not shown …\n{tail}"
