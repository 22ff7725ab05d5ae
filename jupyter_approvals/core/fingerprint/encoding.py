"""The byte-level layer of the fingerprint encoding, shared by every encoder.

It holds the constants of the format, the :class:`Sink` that streams encoded pieces into
the hasher (and encodes nested values through the dispatch it was given), :class:`Refused`
(a value with no encoding, and where it was found), the writers of length-prefixed pieces and
the depth and cycle guard of containers. It knows no value types: :mod:`.builtin_values`,
:mod:`.files`, :mod:`.numpy_values` and :mod:`.pandas_values` encode them, :mod:`.dispatch`
picks one per value, and the package's ``__init__`` holds the public API.
``docs/protocol.md`` section 1 is the specification of every byte written here.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable
from typing import Any, Final

from ..errors import ApprovalUnfingerprintable, ApprovalUnsupportedArgument

#: Domain prefix hashed before the encoded subject; a new encoding gets a new version.
DOMAIN: Final = b"jupyter-approvals/fingerprint/v1\n"
#: Containers may be nested this deep (the subject itself is level 0).
MAX_DEPTH: Final = 100
#: Size of one read, or of one copied chunk, when bulk content is streamed.
CHUNK: Final = 1 << 20
#: The sink streams its buffer into the hasher once it holds this many bytes; a piece at
#: least this large is worth passing with :meth:`Sink.big` instead of copying it.
FLUSH_AT: Final = 1 << 16
#: Packs a length or a count: each one is an unsigned 64-bit big-endian integer.
U64: Final = struct.Struct(">Q").pack


class Refused(Exception):
    """Internal: a value has no encoding; containers add their path segment on the way up."""

    def __init__(self, value_type: type, reason: str, unsupported: bool = False) -> None:
        super().__init__(reason)
        self.type_name = type_name(value_type)
        self.reason = reason
        #: The value's data is there but readable only through its own methods
        #: (APPROVAL_UNSUPPORTED_ARGUMENT), rather than of a type without an encoding.
        self.unsupported = unsupported
        self.segments: list[str] = []

    def at(self, segment: str) -> Refused:
        """Add where the refused value sits in its container (on the way up); return self.

        The one way every container reports a path: ``raise refused.at("[3]")``.
        """
        self.segments.append(segment)
        return self

    def to_error(self) -> ApprovalUnfingerprintable:
        path = "".join(reversed(self.segments)).removeprefix(".")
        where = f" at {path}" if path else ""
        message = f"cannot fingerprint {self.type_name}{where}: {self.reason}"
        details: dict[str, Any] = {"type": self.type_name, "reason": self.reason}
        if path:
            details["path"] = path
        if self.unsupported:
            return ApprovalUnsupportedArgument(message, **details)
        return ApprovalUnfingerprintable(message, **details)


class Sink:
    """Buffers small pieces and streams them into the hasher (or only collects them).

    ``dispatch`` encodes one value into a sink; containers call :meth:`encode` for their
    items, so no encoder module needs to import the dispatch (which imports them).
    """

    __slots__ = ("active", "dispatch", "hasher", "out")

    def __init__(
        self,
        hasher: hashlib._Hash | None,
        active: set[int],
        dispatch: Callable[[object, Sink, int], None],
    ) -> None:
        self.out = bytearray()
        self.hasher = hasher
        self.active = active  # ids of the mutable containers being encoded (cycle guard)
        self.dispatch = dispatch

    def encode(self, value: object, depth: int) -> None:
        """Append the encoding of ``value``, found at nesting level ``depth``."""
        self.dispatch(value, self, depth)

    def spill(self) -> None:
        if self.hasher is not None and len(self.out) >= FLUSH_AT:
            self.hasher.update(self.out)
            self.out.clear()

    def big(self, data: bytes) -> None:
        """Append a large piece without copying it into the buffer."""
        if self.hasher is None:
            self.out += data
        else:
            self.hasher.update(self.out)
            self.out.clear()
            self.hasher.update(data)

    def child(self) -> Sink:
        """A collecting sink, for keys and set elements that are sorted by their encoding."""
        return Sink(None, self.active, self.dispatch)


def type_name(value_type: type) -> str:
    module = getattr(value_type, "__module__", None)
    qualname = getattr(value_type, "__qualname__", None) or getattr(value_type, "__name__", "?")
    return f"{module}.{qualname}" if isinstance(module, str) else str(qualname)


def enter(value: object, sink: Sink, depth: int, *, mutable: bool) -> None:
    """Check depth (and cycles for mutable containers) before encoding a container."""
    if depth >= MAX_DEPTH:
        raise Refused(type(value), f"nested deeper than {MAX_DEPTH} levels")
    if mutable:
        if id(value) in sink.active:
            raise Refused(type(value), "the value contains itself (reference cycle)")
        sink.active.add(id(value))


def put_u64(out: bytearray, number: int) -> None:
    out += U64(number)


def put_kind(out: bytearray, kind: str) -> None:
    """Header of an extension value (numpy, pandas): tag ``X`` and the kind name."""
    out += b"X"
    put_text(out, kind)


def put_text(out: bytearray, text: str) -> None:
    data = text_bytes(text)
    out += U64(len(data))
    out += data


def text_bytes(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: each one as its own 3-byte sequence
        return text.encode("utf-8", "surrogatepass")


def put_int(out: bytearray, number: int) -> None:
    size = number.bit_length() // 8 + 1
    out += U64(size)
    out += number.to_bytes(size, "big", signed=True)


def put_digest(out: bytearray, size: int, digest: bytes) -> None:
    out += U64(size)
    out += digest


def key_segment(key: object) -> str:
    """Path segment for the value under a dict key (display only, never hashed)."""
    if type(key) is str:
        if key.isidentifier():
            return "." + key
        return "[" + repr(key)[:60] + "]"
    if type(key) in (int, float, bool, type(None)):
        return f"[{key!r}]"
    return f"[<{type_name(type(key))}>]"
