"""pandas part of the fingerprint encoding; imported only once a pandas value is met.

A DataFrame is its column labels, its row index and each column's values; a Series is its
name, index and values. Values with a numpy dtype go through the numpy array encoding
(zero-copy for contiguous columns); categorical, tz-aware datetime and masked (nullable)
columns have a vectorised encoding; any other extension column is encoded element by
element. ``attrs``, ``flags`` and index ``freq`` are not part of the fingerprint.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pandas as pd

from .builtin_values import put_zone
from .encoding import (
    Refused,
    Sink,
    enter,
    key_segment,
    put_int,
    put_kind,
    put_text,
    put_u64,
)
from .numpy_values import ELEMENT_KINDS, encode_array, raw_digest

_MASKED_ARRAYS = (pd.arrays.IntegerArray, pd.arrays.FloatingArray, pd.arrays.BooleanArray)


def encode_pandas(value: Any, sink: Sink, depth: int) -> None:
    value_type = type(value)
    out = sink.out
    if value_type is pd.DataFrame:
        _encode_frame(value, sink, depth)
    elif value_type is pd.Series:
        _encode_series(value, sink, depth)
    elif isinstance(value, pd.Index):
        encode_index(value, sink, depth)
    elif value_type is pd.Timestamp:
        put_kind(out, "pandas.Timestamp")
        _put_datetime64(out, value.asm8)
        put_zone(out, value.tzinfo)
    elif value_type is pd.Timedelta:
        put_kind(out, "pandas.Timedelta")
        _put_datetime64(out, value.asm8)
    elif value is pd.NaT:
        put_kind(out, "pandas.NaT")
    elif value is pd.NA:
        put_kind(out, "pandas.NA")
    elif isinstance(value, pd.api.extensions.ExtensionArray):
        enter(value, sink, depth, mutable=True)
        try:
            put_kind(out, "pandas.array")
            encode_values(value, sink, depth + 1)
        finally:
            sink.active.discard(id(value))
    else:
        raise Refused(value_type, "no fingerprint encoding is defined for this pandas type")


def _put_datetime64(out: bytearray, value: np.datetime64 | np.timedelta64) -> None:
    put_text(out, value.dtype.str)
    put_int(out, int(value.view("i8")))


def _encode_frame(frame: pd.DataFrame, sink: Sink, depth: int) -> None:
    enter(frame, sink, depth, mutable=True)
    try:
        put_kind(sink.out, "pandas.DataFrame")
        try:
            encode_index(frame.columns, sink, depth + 1)
        except Refused as refused:
            raise refused.at(".columns") from None
        try:
            encode_index(frame.index, sink, depth + 1)
        except Refused as refused:
            raise refused.at(".index") from None
        width = frame.shape[1]
        put_u64(sink.out, width)
        hashed = _raw_columns_hashed_in_parallel(frame)
        for position in range(width):
            try:
                if position in hashed:
                    array, digest = hashed.pop(position)
                    sink.out += b"n"  # as encode_values writes a plain numpy column
                    encode_array(array, sink, depth + 1, digest)
                else:
                    encode_values(frame.iloc[:, position], sink, depth + 1)
            except Refused as refused:
                label = frame.columns[position]
                if isinstance(label, np.generic):
                    label = label.item()
                raise refused.at(key_segment(label)) from None
            sink.spill()
    finally:
        sink.active.discard(id(frame))


def _encode_series(series: pd.Series, sink: Sink, depth: int) -> None:
    enter(series, sink, depth, mutable=True)
    try:
        put_kind(sink.out, "pandas.Series")
        try:
            sink.dispatch(series.name, sink, depth + 1)
        except Refused as refused:
            raise refused.at(".name") from None
        try:
            encode_index(series.index, sink, depth + 1)
        except Refused as refused:
            raise refused.at(".index") from None
        encode_values(series, sink, depth + 1)
    finally:
        sink.active.discard(id(series))


def _pandas_own(value: object, what: str) -> None:
    """Refuse a pandas container of another package's class: its data would be read through
    methods that class defines, which may show one thing and hold another."""
    module = getattr(type(value), "__module__", "")
    if not isinstance(module, str) or module.partition(".")[0] != "pandas":
        raise Refused(
            type(value),
            f"a {what} of a class pandas does not define; its data is read only through its "
            "own methods. Pass plain data (a list, a numpy array, or a column of a pandas "
            "dtype) instead",
            unsupported=True,
        )


def encode_index(index: pd.Index, sink: Sink, depth: int) -> None:
    _pandas_own(index, "pandas Index")
    enter(index, sink, depth, mutable=False)
    out = sink.out
    if type(index) is pd.RangeIndex:
        put_kind(out, "pandas.RangeIndex")
        _encode_name(index.name, sink, depth)
        for number in (index.start, index.stop, index.step):
            put_int(out, int(number))
    elif type(index) is pd.MultiIndex:
        put_kind(out, "pandas.MultiIndex")
        put_u64(out, index.nlevels)
        for level in range(index.nlevels):
            _encode_name(index.names[level], sink, depth)
            try:
                encode_values(index.get_level_values(level), sink, depth + 1)
            except Refused as refused:
                raise refused.at(f".get_level_values({level})") from None
    else:
        put_kind(out, "pandas.Index")
        _encode_name(index.name, sink, depth)
        encode_values(index, sink, depth + 1)


def _encode_name(name: object, sink: Sink, depth: int) -> None:
    try:
        sink.dispatch(name, sink, depth + 1)
    except Refused as refused:
        raise refused.at(".name") from None


#: Below this many bytes of plain numeric columns, hashing them on one thread is fast enough.
PARALLEL_MIN_BYTES = 32 << 20


def _raw_columns_hashed_in_parallel(frame: pd.DataFrame) -> dict[int, tuple[Any, bytes]]:
    """The sha256 of each plain numpy column of a large frame, computed on several threads.

    hashlib releases the GIL while it hashes large buffers, so columns hash side by side;
    the encoding stays exactly the one of hashing them one after another.
    """
    workers = min(_usable_cpus(), 8)
    if workers < 2:
        return {}
    arrays: dict[int, Any] = {}
    for position in range(frame.shape[1]):
        dtype = frame.dtypes.iloc[position]
        if isinstance(dtype, np.dtype) and dtype.kind not in ELEMENT_KINDS:
            arrays[position] = frame.iloc[:, position].to_numpy()
    if len(arrays) < 2 or sum(a.nbytes for a in arrays.values()) < PARALLEL_MIN_BYTES:
        return {}
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="fingerprint")
    try:
        digests = list(pool.map(raw_digest, arrays.values()))
    except BaseException:
        # Ctrl-C or a failure: columns not started yet are not hashed for nothing.
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return {position: (arrays[position], d) for position, d in zip(arrays, digests, strict=True)}


def _usable_cpus() -> int:
    """CPUs this process may run on (its affinity where the system tells it)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)


def encode_values(holder: Any, sink: Sink, depth: int) -> None:
    """The values of a Series, an Index or an ExtensionArray, with their dtype."""
    out = sink.out
    if isinstance(holder.dtype, np.dtype):
        out += b"n"
        array = holder if isinstance(holder, np.ndarray) else holder.to_numpy()
        encode_array(array, sink, depth)
        return
    array = holder if isinstance(holder, pd.api.extensions.ExtensionArray) else holder.array
    _pandas_own(array, "pandas extension array")
    dtype = array.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        out += b"c"
        out += b"\x01" if dtype.ordered else b"\x00"
        try:
            encode_index(dtype.categories, sink, depth + 1)
        except Refused as refused:
            raise refused.at(".cat.categories") from None
        encode_array(np.asarray(array.codes), sink, depth)
    elif isinstance(dtype, pd.DatetimeTZDtype):
        out += b"z"
        put_text(out, str(dtype.unit))
        put_zone(out, dtype.tz)
        encode_array(np.asarray(array.asi8), sink, depth)
    elif isinstance(array, _MASKED_ARRAYS):
        out += b"m"
        put_text(out, dtype.name)
        encode_array(np.asarray(array.isna()), sink, depth)
        fill = False if isinstance(array, pd.arrays.BooleanArray) else 0
        encode_array(array.to_numpy(dtype=dtype.numpy_dtype, na_value=fill), sink, depth)
    else:
        out += b"g"
        put_text(out, dtype.name)
        put_u64(out, len(array))
        if isinstance(dtype, pd.StringDtype):
            # Same items as iterating the array (str and its missing-value marker), faster.
            array = array.to_numpy(dtype=object)
        _encode_elements(array, sink, depth)


def _encode_elements(array: Any, sink: Sink, depth: int) -> None:
    position = 0
    try:
        for position, item in enumerate(array):  # noqa: B007 (position is used on error)
            sink.dispatch(item, sink, depth + 1)
            sink.spill()
    except Refused as refused:
        raise refused.at(f"[{position}]") from None
