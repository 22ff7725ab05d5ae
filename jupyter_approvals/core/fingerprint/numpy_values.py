"""numpy part of the fingerprint encoding; imported only once a numpy value is met.

Arrays contribute their dtype, shape and the sha256 of their raw C-order bytes. A
C-contiguous array is hashed in place (no copy); any other layout is copied in bounded
chunks into one reused buffer. Arrays whose memory holds references (object dtype, the
numpy 2 StringDType) are encoded element by element instead.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import numpy.typing as npt

from .encoding import (
    Refused,
    Sink,
    enter,
    put_digest,
    put_kind,
    put_text,
    put_u64,
)

#: Upper bound of one copied chunk when an array is not C-contiguous.
ARRAY_CHUNK = 1 << 20
#: dtype kinds whose items are references, not values: encoded element by element.
ELEMENT_KINDS = "OT"


def encode_numpy(value: Any, sink: Sink, depth: int) -> None:
    value_type = type(value)
    if value_type is np.ndarray or value_type is np.memmap:
        encode_array(value, sink, depth)
    elif isinstance(value, np.generic) and value_type is getattr(value.dtype, "type", None):
        # Exactly numpy's own scalar type: a subclass (whatever ``__module__`` it claims) could
        # show one value and compute with another.
        check_dtype(value.dtype, value_type)
        raw = value.tobytes()
        put_kind(sink.out, "numpy.scalar")
        put_text(sink.out, value.dtype.str)
        put_u64(sink.out, len(raw))
        sink.out += raw
    elif isinstance(value, np.dtype):
        check_dtype(value, value_type)
        put_kind(sink.out, "numpy.dtype")
        put_text(sink.out, value.str)
    else:
        raise Refused(
            value_type,
            "no fingerprint encoding is defined for this numpy type "
            "(plain numpy.ndarray, numpy.memmap, numpy scalars and dtypes have one)",
        )


def check_dtype(dtype: np.dtype[Any], value_type: type) -> None:
    if dtype.fields is not None or dtype.subdtype is not None:
        raise Refused(value_type, f"structured dtype {dtype} has no fingerprint encoding")
    if dtype.char in "gG":
        raise Refused(
            value_type,
            f"dtype {dtype} (long double) has platform padding bytes; convert it to "
            "float64/complex128 first",
        )


def encode_array(
    array: npt.NDArray[Any], sink: Sink, depth: int, digest: bytes | None = None
) -> None:
    """Encode ``array``; ``digest`` is its :func:`raw_digest` when already computed."""
    dtype = array.dtype
    check_dtype(dtype, type(array))
    out = sink.out
    put_kind(out, "numpy.ndarray")
    put_text(out, dtype.str)
    put_u64(out, array.ndim)
    for length in array.shape:
        put_u64(out, length)
    if dtype.kind in ELEMENT_KINDS:
        out += b"e"
        _encode_elements(array, sink, depth)
    else:
        out += b"r"
        put_digest(out, array.nbytes, digest if digest is not None else raw_digest(array))


def raw_digest(array: npt.NDArray[Any]) -> bytes:
    """sha256 of the array's bytes in C order, as ``array.tobytes()`` would give them."""
    hasher = hashlib.sha256()
    _feed(hasher, array)
    return hasher.digest()


def _feed(hasher: hashlib._Hash, array: npt.NDArray[Any]) -> None:
    if array.nbytes == 0:
        return
    if array.flags.c_contiguous:
        hasher.update(array.reshape(-1).view(np.uint8).data)
        return
    rows = array.shape[0]
    row_bytes = array.nbytes // rows
    if row_bytes > ARRAY_CHUNK:
        for index in range(rows):
            _feed(hasher, array[index : index + 1] if array.ndim == 1 else array[index])
        return
    step = max(1, ARRAY_CHUNK // row_bytes)
    buffer = np.empty((min(step, rows), *array.shape[1:]), dtype=array.dtype)
    for start in range(0, rows, step):
        part = array[start : start + step]
        target = buffer[: part.shape[0]]
        np.copyto(target, part)
        hasher.update(target.reshape(-1).view(np.uint8).data)


def _encode_elements(array: npt.NDArray[Any], sink: Sink, depth: int) -> None:
    enter(array, sink, depth, mutable=True)
    index = 0
    try:
        for index, item in enumerate(array.reshape(-1)):  # noqa: B007 (index is used on error)
            sink.dispatch(item, sink, depth + 1)
            sink.spill()
    except Refused as refused:
        raise refused.at(index_segment(array.shape, index)) from None
    finally:
        sink.active.discard(id(array))


def index_segment(shape: tuple[int, ...], flat_index: int) -> str:
    if len(shape) == 1:
        return f"[{flat_index}]"
    return "[" + ", ".join(str(int(i)) for i in np.unravel_index(flat_index, shape)) + "]"
