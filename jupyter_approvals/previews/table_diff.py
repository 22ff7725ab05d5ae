"""Differences between two tables: columns added, removed or retyped; rows by key.

Rows are compared through one 64-bit hash per row over the columns both tables have
(``pandas.util.hash_pandas_object``, vectorised), and keys are matched with a hash-table
lookup of one key index in the other. Which columns of a changed row differ is worked out
only for the few example rows a preview shows, so the cost stays near one pass over each
table. NaN equals NaN, as a person reading the two files would expect. pandas is passed in
by the caller (this module never imports it), so it stays an optional dependency.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: Example keys kept per kind of row change.
EXAMPLES = 5


@dataclass(frozen=True)
class ColumnDiff:
    """Columns of ``new`` absent from ``old`` (and the reverse), and columns whose dtype changed."""

    added: list[tuple[Hashable, str]] = field(default_factory=list)
    removed: list[tuple[Hashable, str]] = field(default_factory=list)
    retyped: list[tuple[Hashable, str, str]] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        """True when both tables have the same columns with the same dtypes."""
        return not (self.added or self.removed or self.retyped)


@dataclass(frozen=True)
class RowDiff:
    """Rows added, removed and changed between two tables matched by key.

    Counts cover every row; the ``example_*`` lists hold at most :data:`EXAMPLES` keys each
    (a key is a scalar for a one-column key, else a tuple). ``example_changed`` pairs a key
    with the compared columns whose values differ. A key occurring more than once in a table
    is counted in ``duplicate_old`` / ``duplicate_new`` (keys, not rows); rows are then
    matched by the first row of each key and the later rows are not compared.

    ``added_rows``, ``removed_rows`` and ``changed_rows`` are where the example rows are, as
    positions (``iloc``): in ``new`` for added rows, in ``old`` for removed ones, and
    ``(old, new)`` pairs for changed ones, in the order of the ``example_*`` lists; a preview
    reads the values it shows from there.
    """

    compared_columns: list[Hashable]
    added: int
    removed: int
    changed: int
    unchanged: int
    example_added: list[Any]
    example_removed: list[Any]
    example_changed: list[tuple[Any, list[Hashable]]]
    duplicate_old: int = 0
    duplicate_new: int = 0
    example_duplicate_old: list[Any] = field(default_factory=list)
    example_duplicate_new: list[Any] = field(default_factory=list)
    added_rows: list[int] = field(default_factory=list)
    removed_rows: list[int] = field(default_factory=list)
    changed_rows: list[tuple[int, int]] = field(default_factory=list)


def diff_columns(old: Any, new: Any) -> ColumnDiff:
    """Columns added, removed and retyped from DataFrame ``old`` to DataFrame ``new``."""
    old_types = {name: str(dtype) for name, dtype in old.dtypes.items()}
    new_types = {name: str(dtype) for name, dtype in new.dtypes.items()}
    return ColumnDiff(
        added=[(name, kind) for name, kind in new_types.items() if name not in old_types],
        removed=[(name, kind) for name, kind in old_types.items() if name not in new_types],
        retyped=[
            (name, old_types[name], kind)
            for name, kind in new_types.items()
            if name in old_types and old_types[name] != kind
        ],
    )


def diff_rows(
    pd: Any, old: Any, new: Any, key: Sequence[Hashable], examples: int = EXAMPLES
) -> RowDiff:
    """Rows added, removed and changed from ``old`` to ``new``, matched on the ``key`` columns.

    ``pd`` is the pandas module. Both frames must have every key column. Values are compared
    on the non-key columns present in both frames; a column whose dtype differs is compared
    by value (as numbers when both sides are numeric, else as text), so ``1`` equals ``1.0``.
    """
    key = list(key)
    compared = [c for c in new.columns if c in old.columns and c not in key]
    old_cmp, new_cmp = _comparable(pd, old, new, compared)
    old_hash = _row_hashes(pd, old_cmp)
    new_hash = _row_hashes(pd, new_cmp)

    old_keys = _key_index(pd, old, key)
    new_keys = _key_index(pd, new, key)
    old_first, old_dups, old_dup_examples = _first_rows(old_keys, examples)
    new_first, new_dups, new_dup_examples = _first_rows(new_keys, examples)
    if old_first is not None:
        old_keys, old_hash = old_keys[old_first], old_hash[old_first]
        old_rows: np.ndarray = np.flatnonzero(old_first)
    else:
        old_rows = np.arange(len(old_keys))
    if new_first is not None:
        new_keys, new_hash = new_keys[new_first], new_hash[new_first]
        new_rows: np.ndarray = np.flatnonzero(new_first)
    else:
        new_rows = np.arange(len(new_keys))

    # For each new key, the position of the same key among the old keys (-1: none).
    position = old_keys.get_indexer(new_keys)
    matched = position >= 0
    added_at = np.flatnonzero(~matched)
    matched_at = np.flatnonzero(matched)
    old_matched = position[matched_at]
    differs = old_hash[old_matched] != new_hash[matched_at]
    changed_at = matched_at[differs]
    seen_old = np.zeros(len(old_keys), dtype=bool)
    seen_old[old_matched] = True
    removed_at = np.flatnonzero(~seen_old)

    shown_changed = changed_at[:examples]
    changed_rows = [
        (int(old_rows[position[new_pos]]), int(new_rows[new_pos])) for new_pos in shown_changed
    ]
    differing = _differing_columns(old_cmp, new_cmp, compared, changed_rows)
    example_changed = [
        (_key_value(new_keys[new_pos]), columns)
        for new_pos, columns in zip(shown_changed, differing, strict=True)
    ]

    return RowDiff(
        compared_columns=compared,
        added=len(added_at),
        removed=len(removed_at),
        changed=len(changed_at),
        unchanged=len(matched_at) - len(changed_at),
        example_added=[_key_value(new_keys[i]) for i in added_at[:examples]],
        example_removed=[_key_value(old_keys[i]) for i in removed_at[:examples]],
        example_changed=example_changed,
        duplicate_old=old_dups,
        duplicate_new=new_dups,
        example_duplicate_old=old_dup_examples,
        example_duplicate_new=new_dup_examples,
        added_rows=[int(new_rows[i]) for i in added_at[:examples]],
        removed_rows=[int(old_rows[i]) for i in removed_at[:examples]],
        changed_rows=changed_rows,
    )


def _differing_columns(
    old: Any, new: Any, compared: list[Hashable], rows: list[tuple[int, int]]
) -> list[list[Hashable]]:
    """For each ``(old, new)`` row pair, the compared columns whose values differ.

    The example rows are taken out of both frames once, so the cost is one small selection
    per frame and one short list per column, however wide the table.
    """
    if not rows or not compared:
        return [[] for _ in rows]
    old_part = old.iloc[[at for at, _ in rows]]
    new_part = new.iloc[[at for _, at in rows]]
    differing: list[list[Hashable]] = [[] for _ in rows]
    for column in compared:
        pairs = zip(old_part[column].tolist(), new_part[column].tolist(), strict=True)
        for number, (left, right) in enumerate(pairs):
            if not _same_value(left, right):
                differing[number].append(column)
    return differing


def _comparable(pd: Any, old: Any, new: Any, columns: list[Hashable]) -> tuple[Any, Any]:
    """The compared columns of both frames, retyped columns brought to one dtype."""
    old_part = old[columns] if columns else pd.DataFrame(index=old.index)
    new_part = new[columns] if columns else pd.DataFrame(index=new.index)
    retyped = [c for c in columns if old_part[c].dtype != new_part[c].dtype]
    if not retyped:
        return old_part, new_part
    old_part = old_part.copy(deep=False)
    new_part = new_part.copy(deep=False)
    for name in retyped:
        old_part[name], new_part[name] = _common_type(pd, old_part[name], new_part[name])
    return old_part, new_part


def _common_type(pd: Any, old: Any, new: Any) -> tuple[Any, Any]:
    """Two series of different dtypes as one comparable dtype: float64 if numeric, else str."""
    is_number = pd.api.types.is_numeric_dtype
    is_bool = pd.api.types.is_bool_dtype
    if is_number(old.dtype) and is_number(new.dtype) and not (is_bool(old) or is_bool(new)):
        return old.astype("float64"), new.astype("float64")
    return old.astype("str"), new.astype("str")


def _row_hashes(pd: Any, frame: Any) -> np.ndarray:
    """One uint64 per row over all columns of ``frame`` (zeros when it has none)."""
    if len(frame.columns) == 0:
        return np.zeros(len(frame), dtype=np.uint64)
    hashes = pd.util.hash_pandas_object(frame, index=False)
    return np.asarray(hashes, dtype=np.uint64)


def _key_index(pd: Any, frame: Any, key: list[Hashable]) -> Any:
    """An Index (one key column) or MultiIndex (several) of the key values, in row order."""
    if len(key) == 1:
        return pd.Index(frame[key[0]])
    return pd.MultiIndex.from_frame(frame[key])


def _first_rows(keys: Any, examples: int) -> tuple[np.ndarray | None, int, list[Any]]:
    """Mask of first occurrences (None if keys are unique), duplicated key count, examples."""
    if keys.is_unique:
        return None, 0, []
    repeated = keys.duplicated(keep="first")
    duplicate_keys = keys[repeated].unique()
    return (
        ~repeated,
        len(duplicate_keys),
        [_key_value(k) for k in duplicate_keys[:examples]],
    )


def _key_value(value: Any) -> Any:
    """A key as plain Python values for display (numpy scalars unwrapped)."""
    if isinstance(value, tuple):
        return tuple(_key_value(part) for part in value)
    item = getattr(value, "item", None)
    return item() if callable(item) and np.ndim(value) == 0 else value


def _same_value(left: Any, right: Any) -> bool:
    """Equality of two cells where a missing value equals a missing value."""
    left_missing = _is_missing(left)
    right_missing = _is_missing(right)
    if left_missing or right_missing:
        return left_missing and right_missing
    try:
        return bool(left == right)
    except (TypeError, ValueError):
        return repr(left) == repr(right)


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        missing = value != value  # NaN, NaT and pd.NA compare unequal (or NA) to themselves
    except (TypeError, ValueError):
        return False
    try:
        return bool(missing)
    except (TypeError, ValueError):
        return True  # pd.NA: its truth value is ambiguous, which only missing values do
