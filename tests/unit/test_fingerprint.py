"""Fingerprint encoding: frozen vectors, non-collision, canonical forms, refusals, files.

The vectors below were computed once by the implementation and then frozen: a change to any
of them is a change of the fingerprint protocol (docs/protocol.md, section 1) and needs a new
domain version, not an edited expectation.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import enum
import hashlib
import http
import importlib.util
import itertools
import json
import os
import pathlib
import struct
import subprocess
import sys
import textwrap
import tracemalloc
import zoneinfo
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import pytest

from jupyter_approvals.core.errors import ApprovalUnfingerprintable
from jupyter_approvals.core.fingerprint import (
    DOMAIN,
    FINGERPRINT_PREFIX,
    MAX_DEPTH,
    FileContent,
    encoding,
    fingerprint,
    is_fingerprint,
    short_fingerprint,
)

REPO = Path(__file__).resolve().parents[2]
PARIS = zoneinfo.ZoneInfo("Europe/Paris")
NAN = float("nan")


# -- a minimal, independent reference of the documented byte layout ---------------------


def u64(n: int) -> bytes:
    return struct.pack(">Q", n)


def text(s: str) -> bytes:
    data = s.encode("utf-8", "surrogatepass")
    return u64(len(data)) + data


def intp(n: int) -> bytes:
    """An integer payload (no tag): length, then big-endian two's complement."""
    size = n.bit_length() // 8 + 1
    return u64(size) + n.to_bytes(size, "big", signed=True)


def digest_of(encoded: bytes) -> str:
    return "sha256:" + hashlib.sha256(DOMAIN + encoded).hexdigest()


def obj_frame(data: dict[str, Any], index: pd.Index | None = None) -> pd.DataFrame:
    """A DataFrame whose column labels are an object Index on every pandas version."""
    frame = pd.DataFrame(data, index=index)
    frame.columns = pd.Index(list(data), dtype=object)
    return frame


# -- frozen test vectors --------------------------------------------------------------

VECTORS: list[tuple[str, Callable[[], object], str]] = [
    # builtins
    ("none", lambda: None, "7815a8c8c386ae58e71f53d1c1b3a46b642e6f29a6b088a2f9daf4b2a5dd31bf"),
    ("true", lambda: True, "e949fcd7f89243729b55d93982b3f60411f93224b25bd01a97194e6eb53ef9f5"),
    ("false", lambda: False, "c5bf811c5886acf1a8cd77619f46c11ea35f0d843aded8fbc00d65742b01bb4a"),
    ("int_0", lambda: 0, "52c65ff1ac3782d76ccbc558b5b30c863bbc5e2245e079a3147e3fed1c986d96"),
    ("int_1", lambda: 1, "06c14b6675d88b7c2e6cb52263ad0f36200907d6cb233ecbea1689c036000a34"),
    ("int_minus_1", lambda: -1, "803acaec97458a66da26f85e1b1bcb7a67295e23741a2dcf8e24651202206a2c"),
    ("int_255", lambda: 255, "015119497036c8dcf553993406857b122c94316a94f808113c4bcb88201976b9"),
    (
        "int_2_pow_100",
        lambda: 2**100,
        "f47fadac474e9f48f9ac7c270d246adc34dbe3ad347914dd528c1777cf25af5a",
    ),
    (
        "int_minus_2_pow_100",
        lambda: -(2**100),
        "dafe946496b797d95156b602c9b797e757f5a6fa493e15830996423ab5472931",
    ),
    ("float_1", lambda: 1.0, "d2c4ffe1af8cd2e1e52c779d7781d3d98668139d355614ce3762bc1e382719f1"),
    ("float_0_1", lambda: 0.1, "f4b2037a3bb4e102ecf32c6f651f4c7bdcedba6260369cc870395079491ae9ce"),
    (
        "float_minus_0",
        lambda: -0.0,
        "c361c3f88c516b319167e2381ac8bd4c034d46dc200a4fb8f177e8cb578d3ab8",
    ),
    ("float_nan", lambda: NAN, "30ac132418a07962e2fa537cc93214be090fac30d4975b75bf7f098a76356b71"),
    (
        "float_inf",
        lambda: float("inf"),
        "e432a31046087c00d28104cb918a07734da4b624c4cda78fdb9a156ceb84941d",
    ),
    (
        "float_minus_inf",
        lambda: float("-inf"),
        "bfa1236c3dc53222a069a141efc6c1ef77808f2bd360aab2e53e7adaa2f20af8",
    ),
    ("complex", lambda: 1 + 2j, "231b62e5874c21c5633e5e2ff24c301e3dabbe8f5f8dbf89984bb8957b6c2a8b"),
    ("str_empty", lambda: "", "3a88a71f0452fb30a7ee75258d2163cd6a479b73e571657063b6c333c2fb86f4"),
    ("str_1", lambda: "1", "47bcce824bbe4c30281d79db86b49eea6f3e66f6390be34e38291ecef5ff933c"),
    (
        "str_unicode",
        lambda: "h\u00e9llo \u2713",
        "f94dd95f85eb12bfaa02674b14c59689a6d9a9f027ae0adde9d55b7679e9b066",
    ),
    (
        "str_lone_surrogate",
        lambda: "\ud800",
        "336497a0c1c383763e28cab0797bc85c8d3a977ed41e1c1c1e1fe808c9631021",
    ),
    (
        "bytes_empty",
        lambda: b"",
        "f809137cf6a0275190f4f9f844881d80f5c4f35026b205271da1f1a1fcc0f688",
    ),
    (
        "bytes_abc",
        lambda: b"abc",
        "61f0a1f90347277dbe9603ca731f023586af98e45467c54af79c6f0f387ac278",
    ),
    (
        "list",
        lambda: [1, "a", None],
        "aa961a87253b666471e4f60557fce2df42b6b0bb6c066c730657df3ed6950ad2",
    ),
    ("list_empty", lambda: [], "37ab489f8ecb06f7e0cb109fdfc070882cb39526843565302c7dba0ae3a0d8f9"),
    (
        "tuple",
        lambda: (1, "a", None),
        "33673dbeabc7016f29fc25b69e73a0ab7ccc1da3b2ffc1beb8ef94d4cc0c66e6",
    ),
    (
        "dict",
        lambda: {"b": 1, "a": [1, 2]},
        "f87008a793a6560480564ae79d42e48945f4ad19dfb4cbed11af73e109695437",
    ),
    (
        "dict_mixed_keys",
        lambda: {1: "int", "1": "str", (1,): "tuple", None: 0},
        "73b550fdf6f1d599fe94d78e3e1458745575e10288f0d61a7cb4127048ac651a",
    ),
    ("set", lambda: {3, 1, 2}, "ae0f9ecb4f7329a043d425985a3f2d24c8baf19dba7c65b0d4a679923c1a7d73"),
    (
        "frozenset",
        lambda: frozenset({"a", "b"}),
        "752044795fa75b4d51a78d4359ca315818e6655ba21718b6d88ff3b94f3788cc",
    ),
    (
        "posix_path",
        lambda: pathlib.PurePosixPath("/data/in.csv"),
        "3a8f7b729b2acd1d967da69bc7411bd5e400b8cd229b6469f91552f8756469fc",
    ),
    (
        "windows_path",
        lambda: pathlib.PureWindowsPath("C:\\data\\in.csv"),
        "4dcab133f55722a18e629f88219d4868836201fccfe933c87dbf7408099a1de1",
    ),
    (
        "date",
        lambda: dt.date(2024, 2, 29),
        "3da08f83095e3e2d672e2c784e547c9f15ed382bc649c6d449d56c675b41da9f",
    ),
    (
        "time",
        lambda: dt.time(12, 30, 15, 250),
        "fbec5210ade51f2dbd6c5076e92fa669dd72cb001a8ac13466fa9567480fa008",
    ),
    (
        "time_utc",
        lambda: dt.time(12, 0, tzinfo=dt.timezone.utc),
        "d6943a3874e4e17773066ed26b0a72d8fbcca4407c19f8205ea52e38fee6718a",
    ),
    (
        "datetime_naive",
        lambda: dt.datetime(2024, 2, 29, 12, 30, 15, 250),
        "47ad1234811843bc4af2d3091568acb8ee1c4faadaa993f87301d3cd4292b737",
    ),
    (
        "datetime_utc",
        lambda: dt.datetime(2024, 2, 29, 12, 30, tzinfo=dt.timezone.utc),
        "4c4371df662587bfc7cd13327cc96d03981b34c8870fbe423f89c15499f469af",
    ),
    (
        "datetime_paris_fold",
        lambda: dt.datetime(2024, 10, 27, 2, 30, tzinfo=PARIS, fold=1),
        "33c36804d978782fd0b00cea12dae2d067be001471bc13a9e0524a6355d62de1",
    ),
    (
        "timedelta",
        lambda: dt.timedelta(days=1, seconds=2, microseconds=3),
        "105b3b6c0b8a17f385e971fde6c62114e0ab49fb337bc05ff6f200c8d58288cc",
    ),
    (
        "decimal",
        lambda: decimal.Decimal("1.10"),
        "e293c23c55991f39002350a74146c81edad514df2219b25c287701f03671e6a7",
    ),
    (
        "decimal_nan",
        lambda: decimal.Decimal("NaN"),
        "7cfa9c79e097fa3e2e70eae1ea08b33bc59d1b6dabbf280b204903b27cee4b58",
    ),
    (
        "decimal_minus_inf",
        lambda: decimal.Decimal("-Infinity"),
        "95d0fb89f8433d7849e77b124c1a5a9ecf020f98d20ad510c58143a87f893a9b",
    ),
    (
        "enum_member",
        lambda: http.HTTPStatus.OK,
        "af984ea135450c6c2b41b59875e5276afb366d2405d27ea5c68a4820b1dd7fac",
    ),
    (
        "file_absent",
        lambda: FileContent("/nonexistent/jupyter-approvals/none.txt"),
        "969c73158bc8f84f34404dd790a86150b0555f815283db276a621fb65d8a492d",
    ),
    # numpy (explicit byte order, so the vectors hold on any machine)
    (
        "np_int64_1",
        lambda: np.int64(1),
        "214e1b5048972c8a4091a1ea7eb25f21a2968cac4005e6f093b23183bed34266",
    ),
    (
        "np_int32_1",
        lambda: np.int32(1),
        "88ba53f50d2cdfae0d5fe80fe51fb1f751d4df7b13c62c29c13f3e582efdd8dc",
    ),
    (
        "np_float64_1",
        lambda: np.float64(1.0),
        "cadcfd51638704c74c82d90f002326c501e43e17faebd23181f6c8e8c0d77c24",
    ),
    (
        "np_bool_true",
        lambda: np.bool_(True),
        "41b1b3a7cfbaab68c465bce68d613b435a2495b8b7a04312fe68b5efe352262c",
    ),
    (
        "np_datetime64",
        lambda: np.datetime64("2024-02-29", "D"),
        "2a9816faeca444c028871f9dc81d6c81d5646d3c7ab6b6fa8a5301d5195c1190",
    ),
    (
        "np_str",
        lambda: np.str_("ab"),
        "4498dbd0a113a5c8d4af0405b4f257963973148df280159679253a9d4ebdd7f0",
    ),
    (
        "np_dtype",
        lambda: np.dtype("<f8"),
        "395fa22739b3d8739118956e84d20777ffb48b06c97dfcd686f4f95137b22e6f",
    ),
    (
        "np_array_f8",
        lambda: np.array([1.0, 2.0, 3.0], dtype="<f8"),
        "bdb7e4841b2059afa3a2dba84220129cf11cee7dbe2145b29fff1446e60dceeb",
    ),
    (
        "np_array_0d",
        lambda: np.array(1.5, dtype="<f8"),
        "3a0b49cc78a6ab14693d5855a364b3ae77927638c17588995f53301b9b9d0a23",
    ),
    (
        "np_array_2d_i4",
        lambda: np.arange(6, dtype="<i4").reshape(2, 3),
        "9fc363198e31bcc05ad665e9e6b02ecbaca66d1ddf3a7d7e8730c6eec48a6ca4",
    ),
    (
        "np_array_big_endian",
        lambda: np.array([1.0], dtype=">f8"),
        "83b34dcecac851ff02ef791102b5223ac5dc8cd451df6da56922a4932cec6610",
    ),
    (
        "np_array_object",
        lambda: np.array([1, "a", None], dtype=object),
        "01a816e5fd2a7f174ca0d9b331dea076133f8437c23bc603e31456256f165de2",
    ),
    # pandas (explicit dtypes, so the vectors do not depend on pandas' inference defaults)
    (
        "pd_frame_numeric",
        lambda: obj_frame(
            {"x": np.array([1.0, 2.5], dtype="<f8"), "y": np.array([1, 2], dtype="<i8")}
        ),
        "792c99ff3d08bb0bc94f11d846475f6cff051c82123d3b178c2c7e114314eab9",
    ),
    (
        "pd_frame_mixed",
        lambda: obj_frame(
            {
                "obj": pd.Series([1, "a", None], dtype=object),
                "string": pd.array(["x", None, "z"], dtype="string"),
                "cat": pd.Categorical([1, 2, 1]),
                "when": pd.Series(
                    np.array(["2024-01-01", "NaT", "2024-03-01"], dtype="M8[ns]")
                ).dt.tz_localize(PARIS),
                "nullable": pd.array([1, None, 3], dtype="Int64"),
            },
            index=pd.Index(np.array([10, 20, 30], dtype="<i8"), name="id"),
        ),
        "615c1d4caffcf9573baaabb116200c03cc992f2dfedddaf8ef37d8bfb86e8152",
    ),
    (
        "pd_series",
        lambda: pd.Series(
            np.array([1.0, NAN], dtype="<f8"),
            index=pd.Index(np.array([10, 20], dtype="<i8")),
            name="s",
        ),
        "0b16e3edb874041ef0cf8205537d0d1a5b7af4ff7b333594a9707f2baf6068df",
    ),
    (
        "pd_index",
        lambda: pd.Index(np.array([3, 1, 2], dtype="<i8"), name="k"),
        "e652bf613349e7d6ed8e91dc2a272955f2d121d3d5ffbdbf920a874646eae37e",
    ),
    (
        "pd_range_index",
        lambda: pd.RangeIndex(0, 10, 2, name="r"),
        "d141bea3e45f4b50dd699926a26edc33b5eddb8fb12ed5fac61463c4105310a8",
    ),
    (
        "pd_multiindex",
        lambda: pd.MultiIndex.from_arrays(
            [np.array([1, 1, 2], dtype="<i8"), pd.Index(["a", "b", "a"], dtype=object)],
            names=["n", "s"],
        ),
        "bf9f99614a299e8572975d9fd95d019a672eff3387f338ca68d42006057f6efb",
    ),
    (
        "pd_timestamp",
        lambda: pd.Timestamp(np.datetime64("2024-02-29T12:00:00", "ns")),
        "2d0a4f87e7bfb93f930a97157b9c188a4c6d4386c871ef0c67b53caa83ed9f5b",
    ),
    (
        "pd_timestamp_paris",
        lambda: pd.Timestamp(np.datetime64("2024-02-29T12:00:00", "ns")).tz_localize(PARIS),
        "e675065d663e51cbf030c7e37c9c32422ddc6077327710e25f470f273b3cd6c7",
    ),
    (
        "pd_timedelta",
        lambda: pd.Timedelta(np.timedelta64(90, "s").astype("m8[ns]")),
        "20def8b02515e74895094f89128ca31ab0c213dc68aca465285c07f4e0898bd9",
    ),
    ("pd_nat", lambda: pd.NaT, "07dbccf47631f5b7323f9f48edf547c5dd1d3d00cef8edbeb07c0a2346e249b3"),
    ("pd_na", lambda: pd.NA, "303ca7b57a45790a90c7f614abd15479c686cb53084894bd46ff5e312da60402"),
    (
        "pd_categorical",
        lambda: pd.Categorical([1, 2, 1]),
        "c2408cf99be4d47f558b722cfe6d6506c761b4cde19b4827862ba87a879e340c",
    ),
]


@pytest.mark.parametrize(
    ("build", "expected"), [(b, e) for _, b, e in VECTORS], ids=[name for name, _, _ in VECTORS]
)
def test_vector(build: Callable[[], object], expected: str) -> None:
    # Given a fixed input / When it is fingerprinted / Then the frozen digest comes out
    assert fingerprint(build()) == FINGERPRINT_PREFIX + expected


def test_vectors_are_pairwise_distinct() -> None:
    # Given every frozen vector / Then no two share a digest
    digests = [expected for _, _, expected in VECTORS]
    assert len(set(digests)) == len(digests)


# -- the documented byte layout, checked against the independent reference above ---------


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        (None, b"N"),
        (True, b"B\x01"),
        (0, b"I" + u64(1) + b"\x00"),
        (-1, b"I" + u64(1) + b"\xff"),
        (255, b"I" + u64(2) + b"\x00\xff"),
        (-128, b"I" + u64(2) + b"\xff\x80"),
        (1.0, b"F" + struct.pack(">d", 1.0)),
        (NAN, b"F\x7f\xf8" + b"\x00" * 6),
        (-NAN, b"F\x7f\xf8" + b"\x00" * 6),
        (1 + 2j, b"J" + struct.pack(">dd", 1.0, 2.0)),
        ("1", b"S" + text("1")),
        ("\ud800", b"S" + u64(3) + b"\xed\xa0\x80"),
        (b"abc", b"Y" + u64(3) + hashlib.sha256(b"abc").digest()),
        ([1, "a"], b"L" + u64(2) + b"I" + u64(1) + b"\x01" + b"S" + text("a")),
        ((), b"T" + u64(0)),
        (
            {"b": 1, "a": 2},
            b"D"
            + u64(2)
            + b"S"
            + text("a")
            + b"I"
            + u64(1)
            + b"\x02"
            + b"S"
            + text("b")
            + b"I"
            + u64(1)
            + b"\x01",
        ),
        ({2, 1}, b"E" + u64(2) + b"I" + u64(1) + b"\x01" + b"I" + u64(1) + b"\x02"),
        (pathlib.PurePosixPath("a/b"), b"Pp" + text("a/b")),
        (pathlib.PureWindowsPath("a/b"), b"Pw" + text("a\\b")),
        (dt.date(2024, 2, 29), b"d" + struct.pack(">HBB", 2024, 2, 29)),
        (
            dt.datetime(2024, 2, 29, 12, tzinfo=dt.timezone.utc),
            b"t"
            + struct.pack(">HBBBBBIB", 2024, 2, 29, 12, 0, 0, 0, 0)
            + b"\x01"
            + intp(0)
            + text("UTC")
            + intp(0),
        ),
        (dt.timedelta(seconds=1), b"e" + u64(3) + b"\x0f\x42\x40"),
        (decimal.Decimal("-1.50"), b"R\x01f" + text("150") + intp(-2)),
        (http.HTTPStatus.OK, b"M" + text("http.HTTPStatus") + b"I" + u64(2) + b"\x00\xc8"),
        (FileContent("/nonexistent/x"), b"Ka"),
        (np.int32(1), b"X" + text("numpy.scalar") + text("<i4") + u64(4) + b"\x01\x00\x00\x00"),
        (np.dtype("<f8"), b"X" + text("numpy.dtype") + text("<f8")),
        (
            np.array([[1, 2]], dtype="<i2"),
            b"X"
            + text("numpy.ndarray")
            + text("<i2")
            + u64(2)
            + u64(1)
            + u64(2)
            + b"r"
            + u64(4)
            + hashlib.sha256(b"\x01\x00\x02\x00").digest(),
        ),
        (
            np.array([None], dtype=object),
            b"X" + text("numpy.ndarray") + text("|O") + u64(1) + u64(1) + b"e" + b"N",
        ),
        (pd.NA, b"X" + text("pandas.NA")),
    ],
    ids=repr,
)
def test_encoding_matches_the_documented_bytes(value: object, encoded: bytes) -> None:
    # Given a value and its encoding written out by hand from docs/protocol.md
    # When it is fingerprinted / Then the digest is sha256(DOMAIN + those bytes)
    assert fingerprint(value) == digest_of(encoded)


def test_domain_prefix_is_versioned() -> None:
    assert DOMAIN == b"jupyter-approvals/fingerprint/v1\n"


# -- format helpers -------------------------------------------------------------------


def test_fingerprint_has_the_exact_format() -> None:
    # When anything is fingerprinted / Then the result is "sha256:" + 64 lowercase hex
    result = fingerprint({"a": [1, 2.0, "x"]})
    assert result.startswith("sha256:")
    assert len(result) == 71
    assert is_fingerprint(result)


def test_short_fingerprint_is_the_first_12_hex_digits() -> None:
    full = "sha256:" + "0123456789abcdef" * 4
    assert short_fingerprint(full) == "0123456789ab"


@pytest.mark.parametrize(
    "bad",
    ["", "sha256:", "sha256:" + "0" * 63, "sha256:" + "A" * 64, "sha1:" + "0" * 64],
)
def test_short_fingerprint_refuses_non_fingerprints(bad: str) -> None:
    with pytest.raises(ValueError, match="not a fingerprint"):
        short_fingerprint(bad)


@pytest.mark.parametrize(
    ("candidate", "expected"),
    [
        ("sha256:" + "0" * 64, True),
        ("sha256:" + "0123456789abcdef" * 4, True),
        ("sha256:" + "0" * 64 + "\n", False),
        (" sha256:" + "0" * 64, False),
        ("SHA256:" + "0" * 64, False),
        ("sha256:" + "0" * 63 + "g", False),
        ("sha256:" + "0" * 63 + "F", False),
        ("sha256:" + "0" * 65, False),
        (b"sha256:" + b"0" * 64, False),
        (None, False),
        (12, False),
    ],
)
def test_is_fingerprint_checks_the_exact_format(candidate: object, expected: bool) -> None:
    assert is_fingerprint(candidate) is expected


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
        (np.zeros(2).view(MyArray), "MyArray"),
        (np.zeros(2).view(np.recarray), "recarray"),
        (np.ma.masked_array([1, 2], mask=[0, 1]), "MaskedArray"),
        (np.zeros(2, dtype=[("a", "<i4")]), "numpy.ndarray"),
        (np.zeros(2, dtype=np.longdouble), "numpy.ndarray"),
        (pd.Period("2024-01", freq="M"), "Period"),
    ]


@pytest.mark.parametrize(("value", "type_suffix"), unsupported_values(), ids=repr)
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


# -- FileContent ------------------------------------------------------------------------


FILE_HELLO_DIGEST = "bcfcd8b8f2267f724df516a46e09a2e56fd795d94c4be0e83ec77bd75d1586dc"


def file_encoding(content: bytes) -> bytes:
    return b"Kf" + u64(len(content)) + hashlib.sha256(content).digest()


def test_file_content_vector(tmp_path: Path) -> None:
    # Given a file holding "hello\n" / Then the frozen digest (the path plays no part)
    path = tmp_path / "hello.txt"
    path.write_bytes(b"hello\n")
    assert fingerprint(FileContent(path)) == digest_of(file_encoding(b"hello\n"))
    assert fingerprint(FileContent(str(path))) == FINGERPRINT_PREFIX + FILE_HELLO_DIGEST


def test_file_larger_than_the_chunk_is_streamed(tmp_path: Path) -> None:
    # Given a file of 3.5 read chunks / When fingerprinted
    content = np.random.default_rng(7).bytes(encoding.CHUNK * 3 + encoding.CHUNK // 2)
    path = tmp_path / "big.bin"
    path.write_bytes(content)
    tracemalloc.start()
    try:
        result = fingerprint(FileContent(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Then it matches size + sha256 of the whole content, read with one chunk buffer
    assert result == digest_of(file_encoding(content))
    assert peak < encoding.CHUNK + 256 * 1024


def test_file_content_changes_change_the_fingerprint(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    path.write_text("a,b\n1,2\n")
    before = fingerprint(FileContent(path))
    path.write_text("a,b\n1,3\n")
    assert fingerprint(FileContent(path)) != before
    path.write_text("a,b\n1,2\n")
    assert fingerprint(FileContent(path)) == before


def test_file_content_covers_the_content_not_the_path(tmp_path: Path) -> None:
    # Given two paths with the same bytes / Then FileContent agrees; the caller adds paths
    (tmp_path / "one").write_bytes(b"same")
    (tmp_path / "two").write_bytes(b"same")
    one, two = FileContent(tmp_path / "one"), FileContent(tmp_path / "two")
    assert fingerprint(one) == fingerprint(two)
    subject_one = {"path": one.path, "content": one}
    subject_two = {"path": two.path, "content": two}
    assert fingerprint(subject_one) != fingerprint(subject_two)


def test_absent_file_is_its_own_state(tmp_path: Path) -> None:
    missing = tmp_path / "missing.txt"
    absent = fingerprint(FileContent(missing))
    assert absent == digest_of(b"Ka")
    assert absent == fingerprint(FileContent(tmp_path / "other-missing"))
    assert absent == fingerprint(FileContent(tmp_path / "missing.txt" / "below"))
    # And it differs from an empty file, and from the file once created
    missing.write_bytes(b"")
    assert fingerprint(FileContent(missing)) == digest_of(file_encoding(b""))
    assert fingerprint(FileContent(missing)) != absent


def test_symlinks_are_followed_and_dangling_ones_are_absent(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.write_bytes(b"data")
    link = tmp_path / "link"
    link.symlink_to(target)
    assert fingerprint(FileContent(link)) == fingerprint(FileContent(target))
    target.unlink()
    assert fingerprint(FileContent(link)) == digest_of(b"Ka")


def test_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ApprovalUnfingerprintable, match="is a directory") as caught:
        fingerprint({"out": FileContent(tmp_path)})
    assert caught.value.details["path"] == "out"
    assert caught.value.details["type"] == "jupyter_approvals.core.fingerprint.FileContent"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(ApprovalUnfingerprintable, match="not a regular file"):
        fingerprint(FileContent(fifo))


def test_file_content_value_semantics(tmp_path: Path) -> None:
    content = FileContent(str(tmp_path / "x"))
    assert content.path == tmp_path / "x"
    assert isinstance(content.path, pathlib.Path)
    assert content == FileContent(tmp_path / "x")
    assert hash(content) == hash(FileContent(tmp_path / "x"))
    assert "x" in repr(content)


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


# -- processes and imports ---------------------------------------------------------------

CROSS_PROCESS_SCRIPT = textwrap.dedent(
    """
    import datetime as dt, json, pathlib, sys
    import numpy as np, pandas as pd
    from jupyter_approvals.core.fingerprint import FileContent, fingerprint

    def subjects(path):
        frame = pd.DataFrame(
            {"x": np.linspace(0.0, 1.0, 1000), "s": pd.Series(["a", "b"] * 500, dtype=object)}
        )
        return {
            "builtins": {"b": [1, 2.5, None, True], "a": ("x", b"y"), "set": {"p", "q", "r"}},
            "array": np.arange(100_000, dtype="<f8").reshape(1000, 100)[:, ::3],
            "frame": frame,
            "file": FileContent(path),
            "mixed": {"when": dt.datetime(2024, 1, 1), "path": pathlib.PurePosixPath(path)},
        }

    path = sys.argv[1]
    print(json.dumps({k: fingerprint(v) for k, v in subjects(path).items()}))
    """
)


def test_same_fingerprints_in_another_process(tmp_path: Path) -> None:
    # Given a structure with an array, a DataFrame and a FileContent of a temp file
    path = tmp_path / "content.bin"
    path.write_bytes(bytes(range(256)) * 5000)
    namespace: dict[str, Any] = {}
    exec(CROSS_PROCESS_SCRIPT.split("path = sys.argv[1]")[0], namespace)
    here = {k: fingerprint(v) for k, v in namespace["subjects"](str(path)).items()}
    # When another interpreter (another hash seed) computes them
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONHASHSEED": "12345"}
    result = subprocess.run(
        [sys.executable, "-c", CROSS_PROCESS_SCRIPT, str(path)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
    )
    # Then they are identical
    assert json.loads(result.stdout) == here


def test_importing_the_core_imports_no_numpy_pandas_or_jupyter(tmp_path: Path) -> None:
    # Given a fresh interpreter that loads only the core package (not jupyter_approvals/__init__)
    script = textwrap.dedent(
        f"""
        import sys, types, json
        package = types.ModuleType("jupyter_approvals")
        package.__path__ = [{str(REPO / "jupyter_approvals")!r}]
        sys.modules["jupyter_approvals"] = package
        from jupyter_approvals.core.fingerprint import FileContent, fingerprint
        fingerprint({{"a": [1, 2.0, "x", b"y", None], "f": FileContent({str(tmp_path)!r} + "/x")}})
        heavy = ("numpy", "pandas", "ipykernel", "traitlets", "ipywidgets", "jupyter_client")
        print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in heavy)))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    # Then fingerprinting plain data loaded none of them
    assert json.loads(result.stdout) == []


def test_protocol_doc_vectors_are_the_frozen_ones() -> None:
    # Given the worked vectors in docs/protocol.md section 1.11
    doc = (REPO / "docs" / "protocol.md").read_text(encoding="utf-8")
    section = doc.split("### 1.11 Test vectors", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    documented = [row.rstrip(" |").rsplit("`", 2)[-2] for row in rows]
    # Then each one is a frozen vector of this file
    frozen = {expected for _, _, expected in VECTORS} | {FILE_HELLO_DIGEST}
    assert len(documented) >= 5
    assert set(documented) <= frozen


def test_columns_hashed_on_several_threads_give_the_same_fingerprint(monkeypatch):
    import numpy as np
    import pandas as pd

    from jupyter_approvals.core.fingerprint import pandas_values as _fingerprint_pandas

    # Given frames of every layout: mixed blocks, Fortran order, row slices, a refused dtype
    rng = np.random.default_rng(3)
    mixed = pd.DataFrame(
        {
            "f": rng.random(50),
            "i": np.arange(50),
            "b": rng.random(50) > 0.5,
            "t": pd.date_range("2026-01-01", periods=50, freq="h"),
            "z": pd.date_range("2026-01-01", periods=50, freq="h", tz="Europe/Berlin"),
            "c": pd.Categorical(["a", "b"] * 25),
            "n": pd.array(range(50), dtype="Int64"),
            "o": ["x"] * 50,
        }
    )
    frames = [
        mixed,
        mixed.iloc[::2],
        pd.DataFrame(np.asfortranarray(rng.random((40, 6)))),
        pd.DataFrame(rng.random((40, 6))).T.T,
    ]

    def both_ways(frame):
        monkeypatch.setattr(_fingerprint_pandas, "PARALLEL_MIN_BYTES", 0)
        monkeypatch.setattr(_fingerprint_pandas, "_usable_cpus", lambda: 4)
        parallel = fingerprint({"df": frame})
        monkeypatch.setattr(_fingerprint_pandas, "_usable_cpus", lambda: 1)
        sequential = fingerprint({"df": frame})
        return parallel, sequential

    # When each is fingerprinted with columns hashed side by side and one after another
    for frame in frames:
        parallel, sequential = both_ways(frame)
        # Then the fingerprints are identical
        assert parallel == sequential
    # And a dtype without an encoding is refused the same way, naming the column
    if hasattr(np, "longdouble") and np.dtype(np.longdouble).itemsize > 8:
        bad = pd.DataFrame({"x": np.zeros(4, dtype=np.longdouble), "y": np.zeros(4)})
        monkeypatch.setattr(_fingerprint_pandas, "_usable_cpus", lambda: 4)
        with pytest.raises(ApprovalUnfingerprintable, match=r"df\.x"):
            fingerprint({"df": bad})
