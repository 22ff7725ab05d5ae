"""From a value to its encoder: exact types first, then what a value's type resolves to.

The table of exact types is built once from the builtin encoders and :class:`.files.FileContent`
and never changed; types of other packages are added through :func:`register` (the package's
public ``register``), which refuses to change an encoding that exists. Values of any other type
resolve by their type: numpy and pandas values go to their parts (imported only once such a
value is met), enum members get the enum encoding, and everything else is refused with the
reason a person can act on.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import enum
import pathlib
import threading
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final

from ..errors import ApprovalInvalidArgument
from .builtin_values import BUILTIN_ENCODERS, Encoder, encode_enum
from .encoding import Refused, Sink, type_name
from .files import FileContent, encode_file_content

#: Encoders of the types this package defines an encoding for, by exact type.
_EXACT: Final[dict[type, Encoder]] = {**BUILTIN_ENCODERS, FileContent: encode_file_content}
CORE_ENCODERS: Final[Mapping[type, Encoder]] = MappingProxyType(_EXACT)

#: Types registered by other packages -> what a value of theirs is fingerprinted as.
_registered: dict[type, Callable[[Any], object]] = {}
_registering = threading.Lock()

_BUILTIN_BASES: tuple[type, ...] = (
    *(int, float, complex, str, bytes, bytearray, list, tuple, dict, set, frozenset),
    *(dt.datetime, dt.date, dt.time, dt.timedelta, decimal.Decimal, pathlib.PurePath),
)


def register(value_type: type, as_data: Callable[[Any], object]) -> None:
    """Fingerprint every value of exactly ``value_type`` as the plain data ``as_data`` returns.

    The returned data is encoded in the value's place, as if the subject held it (so a
    registered value and its data fingerprint alike: include a marker in the data if the two
    must differ). Registering the same pair again does nothing; a type that already has an
    encoding, or a second function for a registered type, is refused with
    APPROVAL_INVALID_ARGUMENT: an approval must mean what it meant when it was given.
    """
    if not isinstance(value_type, type) or not callable(as_data):
        raise ApprovalInvalidArgument(
            "register(value_type, as_data) needs a type and a function.", argument="value_type"
        )
    with _registering:
        if value_type in CORE_ENCODERS or issubclass(value_type, enum.Enum):
            raise ApprovalInvalidArgument(
                f"{type_name(value_type)} has a fingerprint encoding of its own; it cannot be "
                "registered.",
                argument="value_type",
                type=type_name(value_type),
            )
        known = _registered.get(value_type)
        if known is not None and known is not as_data:
            raise ApprovalInvalidArgument(
                f"{type_name(value_type)} is registered already, with another function.",
                argument="value_type",
                type=type_name(value_type),
            )
        _registered[value_type] = as_data


def encode(value: object, sink: Sink, depth: int) -> None:
    """Append the canonical encoding of ``value`` (found at nesting level ``depth``)."""
    encoder = _EXACT.get(type(value))  # a plain dict: the lookup of every value
    if encoder is None:
        encoder = _resolve(value)
    encoder(value, sink, depth)


def _encode_registered(value: object, sink: Sink, depth: int) -> None:
    data = _registered[type(value)](value)
    if type(data) in _registered:
        raise Refused(type(value), "its registered function returned a registered type again")
    encode(data, sink, depth)


def _encode_numpy(value: object, sink: Sink, depth: int) -> None:
    from . import numpy_values

    numpy_values.encode_numpy(value, sink, depth)


def _encode_pandas(value: object, sink: Sink, depth: int) -> None:
    from . import pandas_values

    pandas_values.encode_pandas(value, sink, depth)


def _resolve(value: object) -> Encoder:
    value_type = type(value)
    if value_type in _registered:
        return _encode_registered
    module = getattr(value_type, "__module__", None)
    package = module.partition(".")[0] if isinstance(module, str) else ""
    if package == "numpy":
        return _encode_numpy
    if package == "pandas":
        return _encode_pandas
    if isinstance(value, enum.Enum):
        return encode_enum
    for base in value_type.__mro__[1:]:
        base_package = str(getattr(base, "__module__", "")).partition(".")[0]
        if base_package in ("numpy", "pandas"):
            raise Refused(
                value_type,
                f"a subclass of {type_name(base)} defined outside {base_package}: its data "
                "is read only through its own methods, which may show one thing and hold "
                f"another. Pass a plain {type_name(base)} (or plain data) instead",
                unsupported=True,
            )
    reason = "no fingerprint encoding is defined for this type"
    if dataclasses.is_dataclass(value):
        reason += "; convert it to plain data first (e.g. dataclasses.asdict)"
    else:
        for base in _BUILTIN_BASES:
            if isinstance(value, base):
                reason += (
                    f"; a subclass of {type_name(base)} is not treated as its base type: "
                    f"convert the value to a plain {base.__name__} first"
                )
                break
    raise Refused(value_type, reason)
