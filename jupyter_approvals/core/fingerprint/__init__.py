"""Content fingerprints: what a person approved, reduced to one sha256 digest.

An approval is bound to ``fingerprint(subject)``. The subject is encoded into a canonical,
type-tagged, length-prefixed byte stream (``docs/protocol.md``, section 1, is the exact
specification) that is fed piece by piece into one ``hashlib.sha256``. Bulk content (bytes,
array data, DataFrame columns, files) enters that stream as its own sha256 digest, so a
large subject costs about one sha256 pass and never needs a second copy in memory.

Only types with a defined encoding are accepted; anything else raises
:class:`~jupyter_approvals.core.errors.ApprovalUnfingerprintable` naming the type and where
in the subject it was found. numpy and pandas are optional: they are imported only when a
value whose type comes from them is met. Another package gives a type of its own an
encoding with :func:`register` (the ready SQL operations do, for their database handle).

Modules: :mod:`.encoding` (the byte layer), :mod:`.builtin_values`, :mod:`.files`,
:mod:`.numpy_values`, :mod:`.pandas_values` (the encoders) and :mod:`.dispatch` (which
encoder a value gets).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from typing import Final

from .dispatch import encode, register
from .encoding import DOMAIN, MAX_DEPTH, Refused, Sink
from .files import FileContent

__all__ = [
    "DOMAIN",
    "FINGERPRINT_PREFIX",
    "MAX_DEPTH",
    "FileContent",
    "fingerprint",
    "is_fingerprint",
    "register",
    "same_fingerprint",
    "short_fingerprint",
]

FINGERPRINT_PREFIX: Final = "sha256:"

_FINGERPRINT_RE = re.compile(r"sha256:[0-9a-f]{64}")


def fingerprint(subject: object) -> str:
    """Return ``"sha256:<64 hex>"`` for ``subject``.

    Raises ApprovalUnfingerprintable when some part of ``subject`` has no defined encoding;
    its details carry ``type`` and, for a nested part, ``path`` (e.g. ``arguments.df.b[3]``).
    """
    hasher = hashlib.sha256(DOMAIN)
    sink = Sink(hasher, set(), encode)
    try:
        encode(subject, sink, 0)
    except Refused as refused:
        raise refused.to_error() from None
    hasher.update(sink.out)
    return FINGERPRINT_PREFIX + hasher.hexdigest()


def short_fingerprint(fp: str) -> str:
    """The first 12 hex digits of a fingerprint, for display; ValueError if ``fp`` is not one."""
    if not is_fingerprint(fp):
        raise ValueError(f"not a fingerprint: {fp!r:.80}")
    return fp[len(FINGERPRINT_PREFIX) : len(FINGERPRINT_PREFIX) + 12]


def same_fingerprint(a: str, b: str) -> bool:
    """Whether two fingerprints are the same: the one comparison used everywhere (in constant
    time, so no comparison tells by its duration how much of a fingerprint matched)."""
    return hmac.compare_digest(a.encode(), b.encode())


def is_fingerprint(text: object) -> bool:
    """True exactly when ``text`` is a str: ``"sha256:"`` then 64 lowercase hex digits."""
    return type(text) is str and _FINGERPRINT_RE.fullmatch(text) is not None
