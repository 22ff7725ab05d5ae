"""Fingerprints of numpy arrays and pandas objects: logical content, not memory layout."""

from __future__ import annotations

import datetime as dt
import hashlib
import importlib.util
import tracemalloc
import zoneinfo
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from jupyter_approvals.core.fingerprint import (
    encoding,
    fingerprint,
)

from .fingerprint_reference import digest_of, obj_frame, text, u64

REPO = Path(__file__).resolve().parents[2]
PARIS = zoneinfo.ZoneInfo("Europe/Paris")
NAN = float("nan")


# -- numpy ------------------------------------------------------------------------------


def test_numpy_scalars_keep_their_dtype() -> None:
    # Given the "same" one in builtin and numpy types / Then all apart
    values = [1, np.int64(1), np.int32(1), np.int8(1), np.uint64(1), 1.0, np.float64(1.0)]
    values += [np.float32(1.0), True, np.bool_(True), "1", np.str_("1")]
    assert len({fingerprint(v) for v in values}) == len(values)
    assert fingerprint(np.float64(2.5)) == fingerprint(np.float64(2.5))


def test_array_encoding_covers_dtype_shape_and_data() -> None:
    base = np.arange(6, dtype="<i8")
    variants = [
        base,
        base.reshape(2, 3),
        base.reshape(3, 2),
        base.astype("<i4"),
        base.astype(">i8"),
        base.astype("<f8"),
        base + 1,
        base.tolist(),
    ]
    assert len({fingerprint(v) for v in variants}) == len(variants)


def test_array_layout_does_not_matter_only_logical_content() -> None:
    # Given the same logical array C-ordered, F-ordered, strided and as a view
    grid = np.arange(10_000, dtype="<f8").reshape(100, 100)
    expected = fingerprint(grid.copy())
    assert fingerprint(np.asfortranarray(grid)) == expected
    wide = np.zeros((100, 200), dtype="<f8")
    wide[:, ::2] = grid
    assert fingerprint(wide[:, ::2]) == expected
    assert fingerprint(grid[::-1][::-1]) == expected
    assert fingerprint(grid.T) == fingerprint(np.ascontiguousarray(grid.T))


def test_array_data_digest_is_sha256_of_tobytes() -> None:
    values = np.array(["2024-01-01", "NaT"], dtype="M8[ns]")
    encoded = (
        b"X"
        + text("numpy.ndarray")
        + text("<M8[ns]")
        + u64(1)
        + u64(2)
        + b"r"
        + u64(16)
        + hashlib.sha256(values.tobytes()).digest()
    )
    assert fingerprint(values) == digest_of(encoded)


def test_large_non_contiguous_array_is_chunked_with_bounded_memory() -> None:
    # Given an 8 MiB strided view / When fingerprinted / Then at most ~one chunk is copied
    wide = np.random.default_rng(3).random((1 << 17, 16))
    view = wide[:, ::2]
    tracemalloc.start()
    try:
        result = fingerprint(view)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result == fingerprint(np.ascontiguousarray(view))
    assert peak < 2 * encoding.CHUNK


def test_contiguous_array_is_hashed_without_a_copy() -> None:
    array = np.random.default_rng(4).random(4 << 20)  # 32 MiB
    tracemalloc.start()
    try:
        fingerprint(array)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 256 * 1024


def test_rows_larger_than_a_chunk_and_oversized_items() -> None:
    rows = np.arange(2 * (1 << 18), dtype="<f8").reshape(2, 1 << 18)  # 2 MiB rows
    view = np.stack([rows, rows], axis=1)[:, 0]  # strided rows
    assert fingerprint(view) == fingerprint(np.ascontiguousarray(view))
    huge_items = np.array([b"a" * (2 << 20), b"b"], dtype="S2097152")[::-1]
    assert fingerprint(huge_items) == fingerprint(np.ascontiguousarray(huge_items))


def test_object_arrays_go_element_by_element() -> None:
    # Given object arrays (their memory holds pointers, not values)
    objects = np.array(["a", "bc"], dtype=object)
    # Then equal elements agree and the dtype still counts
    assert fingerprint(objects) == fingerprint(np.array(["a", "bc"], dtype=object))
    assert fingerprint(objects) != fingerprint(np.array(["a", "bd"], dtype=object))
    assert fingerprint(objects) != fingerprint(np.array(["a", "bc"]))  # fixed-width <U2
    assert fingerprint(objects) != fingerprint(["a", "bc"])


STRING_DTYPE = getattr(getattr(np, "dtypes", None), "StringDType", None)


@pytest.mark.skipif(STRING_DTYPE is None, reason="numpy < 2 has no StringDType")
def test_numpy_string_dtype_goes_element_by_element() -> None:
    assert STRING_DTYPE is not None
    strings = np.array(["a", "bc"], dtype=STRING_DTYPE())
    assert fingerprint(strings) == fingerprint(np.array(["a", "bc"], dtype=STRING_DTYPE()))
    assert fingerprint(strings) != fingerprint(np.array(["a", "bd"], dtype=STRING_DTYPE()))
    assert fingerprint(strings) != fingerprint(np.array(["a", "bc"], dtype=object))


def test_memmap_is_an_array(tmp_path: Path) -> None:
    mapped = np.memmap(tmp_path / "m.bin", dtype="<f8", mode="w+", shape=(4,))
    mapped[:] = [1, 2, 3, 4]
    assert fingerprint(mapped) == fingerprint(np.array([1, 2, 3, 4], dtype="<f8"))


# -- pandas -----------------------------------------------------------------------------


def test_frame_fingerprint_does_not_depend_on_memory_layout() -> None:
    # Given the same frame from a 2-D array (one block) and from separate columns
    values = np.arange(12, dtype="<f8").reshape(4, 3)
    from_block = pd.DataFrame(values, columns=pd.Index(["a", "b", "c"], dtype=object))
    from_columns = obj_frame({k: values[:, i].copy() for i, k in enumerate("abc")})
    # Then they agree
    assert fingerprint(from_block) == fingerprint(from_columns)


def test_frame_fingerprint_covers_labels_index_dtypes_and_values() -> None:
    base = obj_frame({"a": [1.0, 2.0], "b": [3.0, 4.0]})
    variants = [
        base,
        base[["b", "a"]],
        base.rename(columns={"a": "A"}),
        base.set_axis(pd.Index([1, 0]), axis=0),
        base.astype({"a": "float32"}),
        base.assign(a=[1.0, 2.5]),
        base.rename_axis("idx"),
        base.iloc[:1],
        base["a"],
        base.to_numpy(),
    ]
    assert len({fingerprint(v) for v in variants}) == len(variants)


def test_frame_column_kinds_each_count() -> None:
    # Given one logical column in several pandas dtypes / Then all apart
    columns = [
        pd.Series([1, 2], dtype="int64"),
        pd.Series([1, 2], dtype="Int64"),
        pd.Series([1, 2], dtype=object),
        pd.Series([1.0, 2.0]),
        pd.Series(pd.Categorical([1, 2])),
        pd.Series(["1", "2"], dtype=object),
        pd.Series(["1", "2"], dtype="string"),
    ]
    assert len({fingerprint(obj_frame({"c": c})) for c in columns}) == len(columns)


def test_string_storage_does_not_matter_but_missing_marker_does() -> None:
    # Given the same strings in every available storage (pyarrow is optional for pandas)
    storages = ["python"] + (["pyarrow"] if importlib.util.find_spec("pyarrow") else [])
    series = [pd.Series(pd.array(["a", None], dtype=pd.StringDtype(s))) for s in storages]
    # Then they agree, and differ from the object column holding None
    assert len({fingerprint(s) for s in series}) == 1
    assert fingerprint(series[0]) != fingerprint(pd.Series(["a", None], dtype=object))


def test_nullable_values_under_the_mask_do_not_matter() -> None:
    one = pd.array([1, 2, 3], dtype="Int64")
    other = pd.array([1, 9, 3], dtype="Int64")
    one[1] = pd.NA
    other[1] = pd.NA
    assert fingerprint(one) == fingerprint(other)
    assert fingerprint(one) != fingerprint(pd.array([1, 0, 3], dtype="Int64"))


def test_tz_aware_columns_keep_their_zone() -> None:
    naive = pd.Series(pd.date_range("2024-01-01", periods=3, freq="D"))
    paris = naive.dt.tz_localize(PARIS)
    utc = paris.dt.tz_convert("UTC")
    assert len({fingerprint(s) for s in (naive, paris, utc)}) == 3


def test_categorical_covers_categories_order_and_codes() -> None:
    base = pd.Categorical(["a", "b", "a"], categories=["a", "b"])
    variants = [
        base,
        pd.Categorical(["a", "b", "a"], categories=["b", "a"]),
        pd.Categorical(["a", "b", "a"], categories=["a", "b"], ordered=True),
        pd.Categorical(["a", "b", "b"], categories=["a", "b"]),
        pd.Categorical(["a", "b", "a"], categories=["a", "b", "c"]),
    ]
    assert len({fingerprint(v) for v in variants}) == len(variants)


def test_index_kinds() -> None:
    # Given a RangeIndex, the same numbers materialised, and a MultiIndex
    assert fingerprint(pd.RangeIndex(3)) != fingerprint(pd.Index([0, 1, 2]))
    assert fingerprint(pd.RangeIndex(3)) == fingerprint(pd.RangeIndex(0, 3, 1))
    multi = pd.MultiIndex.from_tuples([(1, "a"), (2, "b")], names=["n", "s"])
    unused_levels = pd.MultiIndex.from_tuples([(1, "a"), (2, "b"), (3, "c")], names=["n", "s"])
    assert fingerprint(multi) == fingerprint(unused_levels[:2])  # level values, not codes
    assert fingerprint(multi) != fingerprint(multi.set_names(["n", "t"]))


def test_pandas_scalars() -> None:
    stamp = pd.Timestamp("2024-01-01 12:00")
    values = [
        stamp,
        stamp.to_pydatetime(),
        stamp.tz_localize("UTC"),
        stamp.tz_localize(PARIS),
        stamp + pd.Timedelta(1, "ns"),
        pd.Timedelta(1, "s"),
        dt.timedelta(seconds=1),
        pd.NaT,
        pd.NA,
        None,
        np.datetime64("NaT"),
    ]
    assert len({fingerprint(v) for v in values}) == len(values)


def test_numeric_frame_is_hashed_without_copying_columns() -> None:
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({f"c{i}": rng.random(1 << 20) for i in range(4)})  # 32 MiB
    tracemalloc.start()
    try:
        fingerprint(frame)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20
