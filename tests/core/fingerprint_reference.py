"""A minimal reference of the documented byte layout of fingerprints (docs/protocol.md 1),
written independently of the implementation, for the fingerprint tests."""

from __future__ import annotations

import hashlib
import struct
from typing import Any

import pandas as pd

from jupyter_approvals.core.fingerprint import DOMAIN


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
