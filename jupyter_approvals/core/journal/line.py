"""One journal entry as one bounded line of JSON: the entry format, its limits, the encoding.

:func:`_build_line` turns an event and the caller's fields into the bytes
:class:`~jupyter_approvals.core.journal.writer.Journal` appends: every value made JSON-safe by
:class:`_Sanitizer`, strings and containers clipped to :data:`MAX_STRING_CHARS`,
:data:`MAX_ITEMS` and :data:`MAX_DEPTH`, and the whole line kept within
:data:`MAX_LINE_BYTES` by retrying with tighter limits and, at last, only the identifying
fields. Nothing here touches the disk.
"""

from __future__ import annotations

import json
import math
import numbers
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from itertools import islice
from pathlib import PurePath
from typing import Any, Final

from jupyter_approvals.core.protocol import JOURNAL_EVENTS

__all__ = [
    "EVENTS",
    "MAX_DEPTH",
    "MAX_ITEMS",
    "MAX_LINE_BYTES",
    "MAX_STRING_CHARS",
    "SCHEMA_VERSION",
]

#: Value of the ``"v"`` key of every journal entry.
SCHEMA_VERSION: Final = 1

#: The events the rest of the system writes. Listed for readers; ``append`` accepts any
#: non-empty event name so that a new event never costs a lost record.
EVENTS: Final = JOURNAL_EVENTS

#: Hard upper bound of one encoded line, newline included.
MAX_LINE_BYTES: Final = 32 * 1024
#: Longest string value (in characters) kept whole on the first attempt.
MAX_STRING_CHARS: Final = 4096
#: Most items kept from one list or mapping (and most top-level fields).
MAX_ITEMS: Final = 64
#: Deepest nesting of lists and mappings kept.
MAX_DEPTH: Final = 8

# Keys the journal owns; a caller field with one of these names is renamed.
_RESERVED: Final = frozenset({"v", "time", "event", "clipped"})
# Fields kept by the last-resort entry, so the record still correlates with its request.
_IDENTIFYING: Final = ("request_id", "action", "code")
_IDENTIFYING_CHARS: Final = 128
_MAX_KEY_CHARS: Final = 256
_MAX_REPR_CHARS: Final = 200
# Integers wider than this are written as a marker: they bloat lines and no JSON reader
# keeps their precision anyway.
_MAX_INT_BITS: Final = 256
_SMALL_INT: Final = 1 << 62


@dataclass(frozen=True)
class _Limits:
    string_chars: int
    items: int
    depth: int


# First the documented limits; if a line is still too large, much tighter ones.
_TIERS: Final = (_Limits(MAX_STRING_CHARS, MAX_ITEMS, MAX_DEPTH), _Limits(256, 16, 4))


class _Sanitizer:
    """Turns arbitrary values into JSON-safe ones within limits; never raises."""

    def __init__(self, limits: _Limits) -> None:
        self.limits = limits
        self.clipped = False

    def text(self, value: str, limit: int | None = None) -> str:
        limit = self.limits.string_chars if limit is None else limit
        # str.__str__ drops str subclasses (whose __str__ may do anything) to a plain str.
        value = str.__str__(value)
        if len(value) > limit:
            value = f"{value[:limit]}...<clipped {len(value) - limit} chars>"
            self.clipped = True
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            # Lone surrogates (from surrogateescape'd paths) cannot be written as UTF-8.
            value = value.encode("utf-8", "backslashreplace").decode("utf-8")
        return value

    def marker(self, value: object) -> str:
        """A readable stand-in for a value JSON cannot hold."""
        try:
            kind = type(value).__name__
        except Exception:
            kind = "object"
        if isinstance(value, bytes | bytearray | memoryview):
            # repr of a large buffer would be enormous; say how big it is instead.
            size = value.nbytes if isinstance(value, memoryview) else len(value)
            return self.text(f"<unserializable {kind}: {size} bytes>")
        try:
            shown = repr(value)
        except Exception:
            shown = "<repr failed>"
        if len(shown) > _MAX_REPR_CHARS:
            shown = shown[:_MAX_REPR_CHARS] + "..."
        return self.text(f"<unserializable {kind}: {shown}>")

    def key(self, value: object) -> str:
        if type(value) is str and len(value) <= _MAX_KEY_CHARS and value.isascii():
            return value  # the common case: a field name
        if isinstance(value, str):
            return self.text(value, _MAX_KEY_CHARS)
        # The same spellings json.dumps uses for non-string keys.
        if value is None:
            return "null"
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int | float):
            return self.text(repr(self.value(value, 0)), _MAX_KEY_CHARS)
        return self.marker(value)

    def value(self, value: object, depth: int) -> Any:
        # Most fields are short ASCII text and small ints: kept as they are, without the
        # checks below (exact types only: a subclass may do anything in its methods).
        if type(value) is str:
            if len(value) <= self.limits.string_chars and value.isascii():
                return value
        elif type(value) is int and -_SMALL_INT < value < _SMALL_INT:
            return value
        try:
            return self._value(value, depth)
        except Exception:
            return self.marker(value)

    def _value(self, value: object, depth: int) -> Any:
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, numbers.Integral):
            # numbers.Integral also admits IntEnum and numpy integers.
            number = int(value)
            if number.bit_length() > _MAX_INT_BITS:
                self.clipped = True
                return self.text(f"<int of {number.bit_length()} bits>")
            return number
        if isinstance(value, numbers.Real):
            real = float(value)
            return real if math.isfinite(real) else self.marker(value)
        if isinstance(value, PurePath):
            return self.text(str(value))
        if isinstance(value, os.PathLike):
            path = os.fspath(value)
            if isinstance(path, bytes):
                path = path.decode("utf-8", "surrogateescape")
            return self.text(path)
        if isinstance(value, Mapping | list | tuple | set | frozenset):
            if depth >= self.limits.depth:
                self.clipped = True
                return self.text(f"<clipped: nested deeper than {self.limits.depth}>")
            return self._container(value, depth)
        return self.marker(value)

    def _container(self, value: object, depth: int) -> Any:
        cap = self.limits.items
        if isinstance(value, Mapping):
            pairs = list(islice(value.items(), cap + 1))
            out: dict[str, Any] = {}
            for k, v in pairs[:cap]:
                out[self.key(k)] = self.value(v, depth + 1)
            if len(pairs) > cap:
                self.clipped = True
                out["<clipped>"] = f"{len(value) - cap} more items"
            return out
        if isinstance(value, set | frozenset):
            try:
                # A stable order makes equal sets produce equal lines.
                items: list[Any] = sorted(value)
            except Exception:
                items = list(value)
        else:
            assert isinstance(value, list | tuple)
            items = list(value[: cap + 1])
        result = [self.value(v, depth + 1) for v in items[:cap]]
        if len(value) > cap:
            self.clipped = True
            result.append(f"<clipped: {len(value) - cap} more items>")
        return result


# One encoder for every line: json.dumps with options builds a new one per call.
_ENCODER: Final = json.JSONEncoder(
    sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False
)


def _encode(record: Mapping[str, Any]) -> bytes:
    return (_ENCODER.encode(record) + "\n").encode("utf-8")


def _format_time(epoch_seconds: float) -> str:
    moment = datetime.fromtimestamp(epoch_seconds, tz=timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _plain(name: object, value: object) -> bool:
    """Whether a field needs none of the sanitizer's work: an ASCII name of the caller's,
    and None, a bool, or a short ASCII str or small int of exactly those types."""
    if type(name) is not str or len(name) > _MAX_KEY_CHARS or not name.isascii():
        return False
    if name in _RESERVED:
        return False
    if value is None or value is True or value is False:
        return True
    if type(value) is str:
        return len(value) <= MAX_STRING_CHARS and value.isascii()
    return type(value) is int and -_SMALL_INT < value < _SMALL_INT


def _build_line(event: str, fields: Mapping[str, Any], when: str) -> bytes:
    """The encoded line for one entry, guaranteed to fit in :data:`MAX_LINE_BYTES`."""
    if (
        len(fields) <= MAX_ITEMS
        and type(event) is str
        and event.isascii()
        and len(event) <= MAX_STRING_CHARS
        and all(_plain(name, value) for name, value in fields.items())
    ):
        # The common entry: every value kept as it is, as the sanitizer would keep it.
        line = _encode({**fields, "v": SCHEMA_VERSION, "time": when, "event": event})
        if len(line) <= MAX_LINE_BYTES:
            return line
    for limits in _TIERS:
        sanitizer = _Sanitizer(limits)
        record: dict[str, Any] = {}
        names = list(fields)
        for name in names[: limits.items]:
            key = f"caller_{name}" if name in _RESERVED else name
            record[sanitizer.key(key)] = sanitizer.value(fields[name], 0)
        if len(names) > limits.items:
            sanitizer.clipped = True
        record["v"] = SCHEMA_VERSION
        record["time"] = when
        record["event"] = sanitizer.text(event)
        if sanitizer.clipped:
            record["clipped"] = True
        line = _encode(record)
        if len(line) <= MAX_LINE_BYTES:
            return line
    # Last resort: the entry still records that the event happened, and for which request.
    sanitizer = _Sanitizer(_Limits(_IDENTIFYING_CHARS, 0, 0))
    last: dict[str, Any] = {
        "v": SCHEMA_VERSION,
        "time": when,
        "event": sanitizer.text(event),
        "clipped": True,
        "dropped_fields": len(fields),
    }
    for name in _IDENTIFYING:
        value = fields.get(name)
        if isinstance(value, str):
            last[name] = sanitizer.text(value)
    return _encode(last)
