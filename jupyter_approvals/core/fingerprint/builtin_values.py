"""The fingerprint encoding of builtin values.

``BUILTIN_ENCODERS`` maps each builtin type with an encoding, by exact type, to its encoder:
None, bool, int, float, complex, str, bytes, memoryview, list, tuple, dict, set, frozenset,
paths, dates and times, timedeltas and decimals; :func:`encode_enum` encodes enum members.
Nested values are encoded through the sink (:meth:`.encoding.Sink.encode`), so this module
never imports the dispatch. The time zone writer :func:`put_zone` is shared with the pandas
part. ``docs/protocol.md`` section 1 is the specification of every byte written here.
"""

from __future__ import annotations

import datetime as dt
import decimal
import enum
import hashlib
import itertools
import pathlib
import struct
from collections.abc import Callable, Mapping
from operator import itemgetter
from types import MappingProxyType
from typing import Any, Final

from .encoding import (
    CHUNK,
    FLUSH_AT,
    U64,
    Refused,
    Sink,
    enter,
    key_segment,
    put_digest,
    put_int,
    put_text,
    text_bytes,
    type_name,
)

_F64 = struct.Struct(">d").pack
_DATE = struct.Struct(">HBB").pack
_TIME = struct.Struct(">BBBIB").pack
_CANONICAL_NAN = b"\x7f\xf8\x00\x00\x00\x00\x00\x00"
_ONE_MICROSECOND = dt.timedelta(microseconds=1)

#: An encoder appends the encoding of its value to the sink; the int is the nesting depth.
Encoder = Callable[[Any, Sink, int], None]


def _f64(number: float) -> bytes:
    return _CANONICAL_NAN if number != number else _F64(number)


def _enc_none(value: None, sink: Sink, depth: int) -> None:
    sink.out += b"N"


def _enc_bool(value: bool, sink: Sink, depth: int) -> None:
    sink.out += b"B\x01" if value else b"B\x00"


def _enc_int(value: int, sink: Sink, depth: int) -> None:
    sink.out += b"I"
    put_int(sink.out, value)


def _enc_float(value: float, sink: Sink, depth: int) -> None:
    sink.out += b"F"
    sink.out += _f64(value)


def _enc_complex(value: complex, sink: Sink, depth: int) -> None:
    sink.out += b"J"
    sink.out += _f64(value.real)
    sink.out += _f64(value.imag)


def _enc_str(value: str, sink: Sink, depth: int) -> None:
    data = text_bytes(value)
    sink.out += b"S"
    sink.out += U64(len(data))
    if len(data) >= FLUSH_AT:
        sink.big(data)
    else:
        sink.out += data


def _enc_bytes(value: bytes | bytearray, sink: Sink, depth: int) -> None:
    sink.out += b"Y"
    put_digest(sink.out, len(value), hashlib.sha256(value).digest())


def _enc_memoryview(value: memoryview, sink: Sink, depth: int) -> None:
    try:
        size, digest = _memoryview_digest(value)
    except ValueError as exc:  # released
        raise Refused(memoryview, f"unreadable memoryview ({exc})") from None
    sink.out += b"Y"
    put_digest(sink.out, size, digest)


def _memoryview_digest(view: memoryview) -> tuple[int, bytes]:
    hasher = hashlib.sha256()
    if view.c_contiguous:
        hasher.update(view)
    elif view.nbytes:
        # Logical C order, a bounded number of leading-axis rows at a time.
        rows = view.shape[0] if view.shape else 1
        step = max(1, CHUNK // (view.nbytes // rows))
        for start in range(0, rows, step):
            hasher.update(view[start : start + step].tobytes())
    return view.nbytes, hasher.digest()


def _sequence_encoder(tag: bytes, *, mutable: bool) -> Encoder:
    def encode_sequence(value: list[Any] | tuple[Any, ...], sink: Sink, depth: int) -> None:
        enter(value, sink, depth, mutable=mutable)
        index = 0
        try:
            sink.out += tag
            sink.out += U64(len(value))
            dispatch, inner = sink.dispatch, depth + 1  # bound once: the loop runs per item
            for index, item in enumerate(value):  # noqa: B007 (index is used on error)
                dispatch(item, sink, inner)
                sink.spill()
        except Refused as refused:
            raise refused.at(f"[{index}]") from None
        finally:
            sink.active.discard(id(value))

    return encode_sequence


def _enc_dict(value: dict[Any, Any], sink: Sink, depth: int) -> None:
    enter(value, sink, depth, mutable=True)
    try:
        entries: list[tuple[bytes, Any, Any]] = []
        dispatch, inner = sink.dispatch, depth + 1  # bound once: the loops run per entry
        for key, item in list(value.items()):
            if type(key) is str:
                # The bytes _enc_str writes (into a collecting sink, big or not), without
                # the sink and the dispatch: most keys are names of arguments and columns.
                data = text_bytes(key)
                entries.append((b"S" + U64(len(data)) + data, key, item))
                continue
            key_sink = sink.child()
            try:
                dispatch(key, key_sink, inner)
            except Refused as refused:
                raise refused.at("[<key>]") from None
            entries.append((bytes(key_sink.out), key, item))
        entries.sort(key=itemgetter(0))
        for before, after in itertools.pairwise(entries):
            if before[0] == after[0]:
                raise Refused(dict, "two keys have the same encoding (e.g. two NaN keys)")
        sink.out += b"D"
        sink.out += U64(len(entries))
        for encoded_key, key, item in entries:
            sink.out += encoded_key
            try:
                dispatch(item, sink, inner)
            except Refused as refused:
                raise refused.at(key_segment(key)) from None
            sink.spill()
    finally:
        sink.active.discard(id(value))


def _set_encoder(tag: bytes) -> Encoder:
    def encode_set(value: set[Any] | frozenset[Any], sink: Sink, depth: int) -> None:
        enter(value, sink, depth, mutable=False)
        encoded: list[bytes] = []
        for element in value:
            element_sink = sink.child()
            try:
                element_sink.dispatch(element, element_sink, depth + 1)
            except Refused as refused:
                raise refused.at("[<element>]") from None
            encoded.append(bytes(element_sink.out))
        encoded.sort()
        sink.out += tag
        sink.out += U64(len(encoded))
        for element_bytes in encoded:
            sink.out += element_bytes
            sink.spill()

    return encode_set


def _path_encoder(flavour: bytes) -> Encoder:
    def encode_path(value: pathlib.PurePath, sink: Sink, depth: int) -> None:
        sink.out += b"P" + flavour
        put_text(sink.out, str(value))

    return encode_path


def put_zone(out: bytearray, tz: dt.tzinfo | None) -> None:
    """Time zone identity: naive, a fixed ``datetime.timezone`` or a named IANA zone."""
    if tz is None:
        out += b"\x00"
        return
    tz_type = type(tz)
    module = getattr(tz_type, "__module__", "")
    if tz_type is dt.timezone:
        fixed = tz.utcoffset(None) or dt.timedelta(0)
        out += b"\x01"
        put_int(out, fixed // _ONE_MICROSECOND)
        put_text(out, tz.tzname(None) or "")
        return
    key = getattr(tz, "key", None) if module == "zoneinfo" else None
    if key is None and module.partition(".")[0] == "pytz":
        key = getattr(tz, "zone", None)
    if not isinstance(key, str):
        raise Refused(
            tz_type, "only datetime.timezone and named zoneinfo (or pytz) zones are supported"
        )
    out += b"\x02"
    put_text(out, key)


def _enc_date(value: dt.date, sink: Sink, depth: int) -> None:
    sink.out += b"d" + _DATE(value.year, value.month, value.day)


def _enc_time(value: dt.time, sink: Sink, depth: int) -> None:
    sink.out += b"h"
    sink.out += _TIME(value.hour, value.minute, value.second, value.microsecond, value.fold)
    try:
        put_zone(sink.out, value.tzinfo)
    except Refused as refused:
        raise refused.at(".tzinfo") from None


def _enc_datetime(value: dt.datetime, sink: Sink, depth: int) -> None:
    sink.out += b"t" + _DATE(value.year, value.month, value.day)
    sink.out += _TIME(value.hour, value.minute, value.second, value.microsecond, value.fold)
    try:
        put_zone(sink.out, value.tzinfo)
    except Refused as refused:
        raise refused.at(".tzinfo") from None
    if value.tzinfo is not None:
        offset = value.utcoffset()
        if offset is None:
            raise Refused(type(value.tzinfo), "the time zone gives no UTC offset")
        put_int(sink.out, offset // _ONE_MICROSECOND)


def _enc_timedelta(value: dt.timedelta, sink: Sink, depth: int) -> None:
    sink.out += b"e"
    put_int(sink.out, value // _ONE_MICROSECOND)


def _enc_decimal(value: decimal.Decimal, sink: Sink, depth: int) -> None:
    sign, digits, exponent = value.as_tuple()
    sink.out += b"R" + (b"\x01" if sign else b"\x00")
    if isinstance(exponent, int):
        sink.out += b"f"
    else:  # "n" quiet NaN, "N" signalling NaN, "F" infinity
        sink.out += exponent.encode("ascii")
        exponent = 0
    put_text(sink.out, "".join(map(str, digits)))
    put_int(sink.out, exponent)


#: Types an enum's members may also be (``class E(str, Enum)``): the member's own data of
#: that type, read by the type's C method, never by one the enum class could define.
_MIXIN_DATA: Final[Mapping[type, Callable[[Any], object]]] = MappingProxyType(
    {
        int: lambda member: int.__getnewargs__(member)[0],
        float: lambda member: float.__getnewargs__(member)[0],
        complex: lambda member: complex(*complex.__getnewargs__(member)),  # type: ignore[attr-defined]
        str: lambda member: str.__getnewargs__(member)[0],
        bytes: lambda member: bytes.__getnewargs__(member)[0],
        tuple: lambda member: tuple.__getnewargs__(member)[0],  # type: ignore[attr-defined]
    }
)


def enum_value(member: enum.Enum) -> object:
    """What an enum member stands for: ``_value_``, what the enum machinery stored (``value``
    is a property a class can shadow). A member that is also of a builtin type (a ``str`` or
    ``int`` enum) is passed as that data: it must be ``_value_`` exactly, else the member is
    refused (APPROVAL_UNSUPPORTED_ARGUMENT), since the card would show other data than the
    function receives."""
    stored = member._value_
    mixin = getattr(type(member), "_member_type_", object)
    if mixin is object:
        return stored
    read = next((read for base, read in _MIXIN_DATA.items() if issubclass(mixin, base)), None)
    if read is None:
        raise Refused(
            type(member),
            f"its members are also {type_name(mixin)} values, whose data the fingerprint "
            "cannot read itself; pass member.value (plain data) instead",
            unsupported=True,
        )
    data = read(member)
    both_nan = data != data and stored != stored
    if type(data) is not type(stored) or not (data == stored or both_nan):
        raise Refused(
            type(member),
            f"the member is the {type_name(type(data))} {data!r:.80} but its value is "
            f"{stored!r:.80}; a function would receive the first, a card would show the "
            "second: pass the plain data you mean instead",
            unsupported=True,
        )
    return stored


def encode_enum(value: enum.Enum, sink: Sink, depth: int) -> None:
    enter(value, sink, depth, mutable=False)
    sink.out += b"M"
    put_text(sink.out, type_name(type(value)))
    stored = enum_value(value)
    try:
        sink.dispatch(stored, sink, depth + 1)
    except Refused as refused:
        raise refused.at(".value") from None


#: The encoder of each builtin type, by exact type (a subclass is not its base).
BUILTIN_ENCODERS: Final[Mapping[type, Encoder]] = MappingProxyType(
    {
        type(None): _enc_none,
        bool: _enc_bool,
        int: _enc_int,
        float: _enc_float,
        complex: _enc_complex,
        str: _enc_str,
        bytes: _enc_bytes,
        bytearray: _enc_bytes,
        memoryview: _enc_memoryview,
        list: _sequence_encoder(b"L", mutable=True),
        tuple: _sequence_encoder(b"T", mutable=False),
        dict: _enc_dict,
        set: _set_encoder(b"E"),
        frozenset: _set_encoder(b"Z"),
        pathlib.PurePosixPath: _path_encoder(b"p"),
        pathlib.PosixPath: _path_encoder(b"p"),
        pathlib.PureWindowsPath: _path_encoder(b"w"),
        pathlib.WindowsPath: _path_encoder(b"w"),
        dt.date: _enc_date,
        dt.time: _enc_time,
        dt.datetime: _enc_datetime,
        dt.timedelta: _enc_timedelta,
        decimal.Decimal: _enc_decimal,
    }
)
