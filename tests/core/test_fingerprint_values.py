"""Fingerprints of builtin values: non-collision, canonical forms, paths, times, refusals."""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import enum
import http
import itertools
import pathlib
import struct
import zoneinfo
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import pytest

from jupyter_approvals.core.errors import ApprovalUnfingerprintable
from jupyter_approvals.core.fingerprint import (
    MAX_DEPTH,
    FileContent,
    fingerprint,
    is_fingerprint,
)

from .fingerprint_reference import digest_of, obj_frame, u64

REPO = Path(__file__).resolve().parents[2]
PARIS = zoneinfo.ZoneInfo("Europe/Paris")
NAN = float("nan")


# -- non-collision --------------------------------------------------------------------


class Small(enum.IntEnum):
    ONE = 1


def lookalikes() -> list[object]:
    """Values that print alike (or are equal in Python) but must fingerprint apart."""
    return [
        *("1", 1, 1.0, True, 1 + 0j, decimal.Decimal("1"), decimal.Decimal("1.0")),
        *(np.int64(1), np.int32(1), np.uint8(1), np.float64(1.0), np.bool_(True), np.str_("1")),
        *(b"1", [1], (1,), {1}, frozenset({1}), {"a": 1}, [("a", 1)], (("a", 1),)),
        *({"a": "1"}, {1: 1}, {"1": 1}, [[1]], [(1,)], [1, 1], ["1"], [b"1"]),
        *(None, "", b"", [], (), {}, set(), frozenset(), "None", "null", 0, False, 0.0, -0.0),
        *(np.array([1]), np.array(1), np.array([1.0]), np.array([[1]]), np.array(["1"])),
        *(pathlib.PurePosixPath("1"), pathlib.PureWindowsPath("1"), FileContent("/nonexistent")),
        *(dt.timedelta(microseconds=1), dt.date(1, 1, 1), dt.datetime(1, 1, 1)),
        *(dt.time(0, 0, 1), dt.time(0, 0, 1, tzinfo=dt.timezone.utc)),
        *(pd.Series([1]), pd.Index([1]), pd.RangeIndex(1, 2), pd.DataFrame({"a": [1]})),
        *(pd.Series([1.0]), pd.Series([1], name="a"), pd.Series(["1"], dtype=object)),
        *(pd.Timestamp("2024-01-01"), dt.datetime(2024, 1, 1), pd.Timedelta(1), pd.NaT, pd.NA),
        *(Small.ONE, http.HTTPStatus.OK, NAN, float("inf"), float("-inf")),
    ]


def test_lookalike_values_are_pairwise_distinct() -> None:
    # Given values that print alike across types / When fingerprinted / Then all differ
    values = lookalikes()
    digests = [fingerprint(v) for v in values]
    clashes = [
        (values[i], values[j])
        for i, j in itertools.combinations(range(len(values)), 2)
        if digests[i] == digests[j]
    ]
    assert clashes == []


def test_bytes_bytearray_and_memoryview_are_the_same_content() -> None:
    # Given the same bytes held three ways / Then they fingerprint alike (content, not type)
    data = bytes(range(256)) * 10
    assert fingerprint(data) == fingerprint(bytearray(data)) == fingerprint(memoryview(data))


def test_memoryview_of_any_layout_is_its_logical_bytes() -> None:
    # Given strided, multi-dimensional and typed memoryviews
    grid = np.arange(48, dtype="<f8").reshape(6, 8)
    strided = memoryview(grid)[::2]
    transposed = memoryview(grid.T)
    typed = memoryview(grid).cast("B").cast("d", (6, 8))
    # Then each fingerprints like bytes of its C-order content
    assert fingerprint(strided) == fingerprint(strided.tobytes())
    assert fingerprint(transposed) == fingerprint(grid.T.tobytes())
    assert fingerprint(typed) == fingerprint(grid.tobytes())


def test_large_strided_memoryview_is_hashed_in_chunks() -> None:
    big = np.arange(3 * 1024 * 1024, dtype="<u4").reshape(-1, 4)
    view = memoryview(big)[::3]
    assert fingerprint(view) == fingerprint(view.tobytes())


def test_released_memoryview_is_refused() -> None:
    view = memoryview(b"abc")
    view.release()
    with pytest.raises(ApprovalUnfingerprintable, match="memoryview"):
        fingerprint(view)


# -- canonical forms: order, NaN, zero, integers, strings -----------------------------


def test_dict_order_does_not_matter() -> None:
    # Given the same entries inserted in every order / Then one fingerprint
    items = [(1, "int"), ("1", "str"), ((1,), "tuple"), (None, 0), (b"k", [1]), (2.5, {})]
    digests = {fingerprint(dict(order)) for order in itertools.permutations(items)}
    assert len(digests) == 1


def test_dict_values_and_keys_both_count() -> None:
    assert fingerprint({"a": 1}) != fingerprint({"a": 2})
    assert fingerprint({"a": 1}) != fingerprint({"b": 1})
    assert fingerprint({"a": 1, "b": 2}) != fingerprint({"a": 2, "b": 1})


def test_set_order_does_not_matter() -> None:
    # Given sets built in different orders (and frozen ones) / Then equal sets agree
    assert fingerprint({"x", "y", "z", 1, (2, 3)}) == fingerprint({(2, 3), 1, "z", "y", "x"})
    assert fingerprint(frozenset("abc")) == fingerprint(frozenset("cba"))
    assert fingerprint({1, 2}) != fingerprint(frozenset({1, 2}))


def test_dict_with_two_keys_of_the_same_encoding_is_refused() -> None:
    # Given two distinct NaN objects as keys (Python keeps both) / Then refused, not guessed
    with pytest.raises(ApprovalUnfingerprintable, match="same encoding") as caught:
        fingerprint({float("nan"): 1, float("nan"): 2})
    assert caught.value.details["type"] == "builtins.dict"


def test_nan_has_one_canonical_encoding() -> None:
    # Given NaNs with different signs and payloads
    payload_nan = struct.unpack(">d", b"\x7f\xf0\x00\x00\x00\x00\x00\x01")[0]
    negative_nan = struct.unpack(">d", b"\xff\xf8\x00\x00\x00\x00\x00\x00")[0]
    # Then all fingerprint alike, and unlike infinities or None
    assert fingerprint(NAN) == fingerprint(payload_nan) == fingerprint(negative_nan)
    assert fingerprint([NAN]) == fingerprint([float("nan")])
    assert fingerprint(NAN) not in {fingerprint(float("inf")), fingerprint(None)}
    assert fingerprint(complex(NAN, 0)) == fingerprint(complex(negative_nan, 0))


def test_negative_zero_differs_from_zero() -> None:
    assert fingerprint(-0.0) != fingerprint(0.0)
    assert fingerprint(complex(0.0, -0.0)) != fingerprint(complex(0.0, 0.0))


@pytest.mark.parametrize(
    "number", [2**63 - 1, 2**63, 2**64, -(2**63), -(2**63) - 1, 2**4096 + 1, -(10**1000)]
)
def test_big_ints_are_exact(number: int) -> None:
    # Given a big int / Then it fingerprints as its exact two's complement, unlike neighbours
    size = number.bit_length() // 8 + 1
    encoded = b"I" + u64(size) + number.to_bytes(size, "big", signed=True)
    assert fingerprint(number) == digest_of(encoded)
    assert fingerprint(number) != fingerprint(number + 1)
    if abs(number) < 2**1000:
        assert fingerprint(number) != fingerprint(float(number))


def test_strings_with_surrogates_are_encoded_injectively() -> None:
    # Given lone surrogates, a surrogate pair as two code points, and the real character
    lone = "a\udcff"
    pair_as_code_points = "\ud83d\ude00"
    real = "\U0001f600"
    # Then they fingerprint, and all apart (and apart from the replacement character)
    digests = {fingerprint(s) for s in (lone, pair_as_code_points, real, "a\ufffd", "a")}
    assert len(digests) == 5


def test_list_and_tuple_differ_but_nest_consistently() -> None:
    assert fingerprint([1, 2]) != fingerprint((1, 2))
    assert fingerprint([[1], [2]]) != fingerprint([[1, 2]])
    assert fingerprint(["ab", "c"]) != fingerprint(["a", "bc"])
    assert fingerprint([1, [2, 3]]) == fingerprint([1, [2, 3]])


def test_large_strings_and_many_items_stream() -> None:
    # Given values larger than the internal buffer / Then equal values agree, and differ
    big = "x" * (1 << 20)
    assert fingerprint(big) == fingerprint("x" * (1 << 20))
    assert fingerprint(big) != fingerprint(big + "x")
    many = list(range(100_000))
    assert fingerprint(many) == fingerprint(list(range(100_000)))
    assert fingerprint({"k": big}) != fingerprint({"k": big[:-1]})


# -- paths, times, decimals, enums ------------------------------------------------------


def test_paths_are_their_text_and_flavour_not_their_content(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_text("one")
    before = fingerprint(target)
    target.write_text("two")
    # Then the content does not matter, the text and the flavour do
    assert fingerprint(target) == before
    assert fingerprint(pathlib.PurePosixPath(target)) == before
    assert fingerprint(pathlib.PurePosixPath("a/b")) != fingerprint(pathlib.PureWindowsPath("a/b"))
    assert fingerprint(pathlib.PurePosixPath("a/b")) != fingerprint("a/b")
    assert fingerprint(pathlib.PurePosixPath("a/b")) != fingerprint(FileContent("a/b"))


def test_naive_and_aware_times_differ() -> None:
    naive = dt.datetime(2024, 3, 1, 12)
    utc = naive.replace(tzinfo=dt.timezone.utc)
    zone_utc = naive.replace(tzinfo=zoneinfo.ZoneInfo("UTC"))
    named = naive.replace(tzinfo=dt.timezone(dt.timedelta(0), "GMT"))
    digests = {fingerprint(v) for v in (naive, utc, zone_utc, named)}
    assert len(digests) == 4
    assert fingerprint(dt.time(12)) != fingerprint(dt.time(12, tzinfo=dt.timezone.utc))


def test_fold_and_offset_of_an_ambiguous_local_time_count() -> None:
    # Given the same wall time in Paris before and after the clocks went back
    first = dt.datetime(2024, 10, 27, 2, 30, tzinfo=PARIS)
    second = first.replace(fold=1)
    assert first.utcoffset() != second.utcoffset()
    assert fingerprint(first) != fingerprint(second)


def test_dates_times_and_durations_are_distinct_kinds() -> None:
    values = [dt.date(2024, 1, 1), dt.datetime(2024, 1, 1), dt.time(0), dt.timedelta(0)]
    assert len({fingerprint(v) for v in values}) == 4
    assert fingerprint(dt.timedelta(days=1)) == fingerprint(dt.timedelta(hours=24))
    assert fingerprint(dt.timedelta(microseconds=-1)) != fingerprint(dt.timedelta(0))


def test_unknown_tzinfo_is_refused_at_its_path() -> None:
    class Custom(dt.tzinfo):
        def utcoffset(self, when: dt.datetime | None) -> dt.timedelta:
            return dt.timedelta(hours=1)

    with pytest.raises(ApprovalUnfingerprintable) as caught:
        fingerprint({"when": dt.datetime(2024, 1, 1, tzinfo=Custom())})
    assert caught.value.details["path"] == "when.tzinfo"
    assert caught.value.details["type"].endswith("Custom")


def test_decimals_keep_their_exponent_and_specials() -> None:
    values = ["1", "1.0", "1.00", "-1", "NaN", "-NaN", "sNaN", "Infinity", "-Infinity", "0", "-0"]
    assert len({fingerprint(decimal.Decimal(v)) for v in values}) == len(values)


def test_enum_members_are_their_class_and_value_not_their_base() -> None:
    # Given an IntEnum member (an int subclass)
    # Then it is neither the int 1 nor another enum's member with the same value
    assert fingerprint(Small.ONE) != fingerprint(1)
    assert fingerprint(Small.ONE) == fingerprint(Small(1))

    class Other(enum.Enum):
        ONE = 1

    assert fingerprint(Other.ONE) != fingerprint(Small.ONE)


# -- refusals ---------------------------------------------------------------------------


@dataclasses.dataclass
class Point:
    x: int
    y: int


class MyStr(str):
    pass


class MyArray(np.ndarray):  # type: ignore[type-arg]
    pass


class Pair(NamedTuple):
    a: int
    b: int


def unsupported_values() -> list[tuple[object, str]]:
    return [
        (object(), "builtins.object"),
        (Point(1, 2), "Point"),
        (lambda: 1, "builtins.function"),
        (MyStr("a"), "MyStr"),
        ((i for i in range(3)), "builtins.generator"),
        (Pair(1, 2), "Pair"),
        (range(3), "builtins.range"),
        (type, "builtins.type"),
        (np.zeros(2).view(np.recarray), "recarray"),
        (np.ma.masked_array([1, 2], mask=[0, 1]), "MaskedArray"),
        (np.zeros(2, dtype=[("a", "<i4")]), "numpy.ndarray"),
        (np.zeros(2, dtype=np.longdouble), "numpy.ndarray"),
        (pd.Period("2024-01", freq="M"), "Period"),
    ]


def _value_id(value: object) -> str:
    # An id without an address: parallel workers must collect the same test ids.
    return type(value).__qualname__ if "0x" in repr(value) else repr(value)


@pytest.mark.parametrize(("value", "type_suffix"), unsupported_values(), ids=_value_id)
def test_unsupported_types_are_refused_with_their_type(value: object, type_suffix: str) -> None:
    # Given a value with no defined encoding / When fingerprinted
    with pytest.raises(ApprovalUnfingerprintable) as caught:
        fingerprint(value)
    # Then the error names its type (module.qualname), with no path at the top level
    error = caught.value
    assert error.code == "APPROVAL_UNFINGERPRINTABLE"
    assert error.details["type"].endswith(type_suffix)
    assert "." in error.details["type"]
    assert error.details["type"] in error.message
    assert "path" not in error.details


def test_subclass_of_a_builtin_gets_a_hint() -> None:
    with pytest.raises(ApprovalUnfingerprintable, match="plain str") as caught:
        fingerprint(MyStr("a"))
    assert caught.value.details["type"] == f"{__name__}.MyStr"


def test_dataclass_gets_a_hint() -> None:
    with pytest.raises(ApprovalUnfingerprintable, match="asdict"):
        fingerprint(Point(1, 2))


@pytest.mark.parametrize(
    ("subject", "path"),
    [
        ({"args": {"df": [0, 1, 2, {"key": object()}]}}, "args.df[3].key"),
        ({"args": {"my key": [object()]}}, "args['my key'][0]"),
        ([{1: (None, object())}], "[0][1][1]"),
        ({"k": {object()}}, "k[<element>]"),
        ({"k": {(object(),): 1}}, "k[<key>][0]"),
        ({"arr": np.array([[1, 2], [3, object()]], dtype=object)}, "arr[1, 1]"),
        ({"s": pd.Series([1, object()], dtype=object)}, "s[1]"),
        ({"s": pd.Series([1], name=object())}, "s.name"),
        ({"df": obj_frame({"a": [1, 2], "b": pd.Series([1, object()], dtype=object)})}, "df.b[1]"),
        ({"df": pd.DataFrame({"a": [1]}, index=pd.Index([object()]))}, "df.index[0]"),
        ({"df": pd.DataFrame({"a": [pd.Period("2024-01", freq="M")]})}, "df.a[0]"),
        ({"e": enum.Enum("E", {"A": object()}).A}, "e.value"),
    ],
)
def test_nested_refusal_reports_the_path(subject: object, path: str) -> None:
    # Given an unsupported value deep inside a structure / When fingerprinted
    with pytest.raises(ApprovalUnfingerprintable) as caught:
        fingerprint(subject)
    # Then the error says where it is
    assert caught.value.details["path"] == path
    assert f" at {path}:" in caught.value.message


def test_reference_cycles_are_refused_not_followed() -> None:
    # Given self-referencing list, dict, object array and a two-list loop
    looped: list[Any] = [1]
    looped.append(looped)
    mapping: dict[str, Any] = {}
    mapping["self"] = mapping
    array = np.empty(1, dtype=object)
    array[0] = array
    first: list[Any] = []
    second: list[Any] = [first]
    first.append(second)
    for subject, path in [(looped, "[1]"), (mapping, "self"), (array, "[0]"), (first, "[0][0]")]:
        with pytest.raises(ApprovalUnfingerprintable, match="cycle") as caught:
            fingerprint(subject)
        assert caught.value.details["path"] == path


def test_shared_but_acyclic_references_are_fine() -> None:
    shared = [1, 2]
    assert fingerprint([shared, shared]) == fingerprint([[1, 2], [1, 2]])


def nested_lists(levels: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(levels - 1):
        value = [value]
    return value


def test_depth_is_bounded() -> None:
    # Given MAX_DEPTH nested containers / Then fine; one more / Then refused
    assert MAX_DEPTH == 100
    assert is_fingerprint(fingerprint(nested_lists(MAX_DEPTH)))
    with pytest.raises(ApprovalUnfingerprintable, match="deeper than 100") as caught:
        fingerprint(nested_lists(MAX_DEPTH + 1))
    assert caught.value.details["path"] == "[0]" * MAX_DEPTH


def test_very_deep_nesting_fails_fast_without_recursion_error() -> None:
    with pytest.raises(ApprovalUnfingerprintable):
        fingerprint(nested_lists(100_000))
