"""Fingerprint encoding: the frozen test vectors, the documented byte layout, the format.

The vectors below were computed once by the implementation and then frozen: a change to any
of them is a change of the fingerprint protocol (docs/protocol.md, section 1) and needs a new
domain version, not an edited expectation.
"""

from __future__ import annotations

import datetime as dt
import decimal
import hashlib
import http
import pathlib
import struct
import zoneinfo
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from jupyter_approvals.core.fingerprint import (
    DOMAIN,
    FINGERPRINT_PREFIX,
    FileContent,
    fingerprint,
    is_fingerprint,
    short_fingerprint,
)

from .fingerprint_reference import digest_of, intp, obj_frame, text, u64

REPO = Path(__file__).resolve().parents[2]
PARIS = zoneinfo.ZoneInfo("Europe/Paris")
NAN = float("nan")


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
