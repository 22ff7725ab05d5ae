"""Content fingerprints: what a person approved, reduced to one sha256 digest.

An approval is bound to ``fingerprint(subject)``. The subject is encoded into a canonical,
type-tagged, length-prefixed byte stream (``docs/protocol.md``, section 1, is the exact
specification) that is fed piece by piece into one ``hashlib.sha256``. Bulk content (bytes,
array data, DataFrame columns, files) enters that stream as its own sha256 digest, so a
large subject costs about one sha256 pass and never needs a second copy in memory.

Only types with a defined encoding are accepted; anything else raises
:class:`~jupyter_approvals.core.errors.ApprovalUnfingerprintable` naming the type and where
in the subject it was found. numpy and pandas are optional: they are imported only when a
value whose type comes from them is met.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import re
import stat
from typing import Final

from jupyter_approvals.core._fingerprint_builtins import EXACT_ENCODERS, encode
from jupyter_approvals.core._fingerprint_encoding import (
    CHUNK,
    DOMAIN,
    MAX_DEPTH,
    Refused,
    Sink,
    put_digest,
)

__all__ = [
    "DOMAIN",
    "FINGERPRINT_PREFIX",
    "MAX_DEPTH",
    "FileContent",
    "fingerprint",
    "is_fingerprint",
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
    sink = Sink(hasher, set())
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


def is_fingerprint(text: object) -> bool:
    """True exactly when ``text`` is a str: ``"sha256:"`` then 64 lowercase hex digits."""
    return type(text) is str and _FINGERPRINT_RE.fullmatch(text) is not None


class FileContent:
    """The current content of the file at ``path``, read when it is fingerprinted.

    The encoding covers the content only (its size and sha256), never the path: put the
    path next to it when it matters, e.g. ``{"path": p, "content": FileContent(p)}``.
    A missing file is the distinct state "absent"; symlinks are followed (a dangling one is
    absent); directories and other non-regular files are refused.
    """

    __slots__ = ("path",)

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path: pathlib.Path = pathlib.Path(path)

    def __repr__(self) -> str:
        return f"FileContent({str(self.path)!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is FileContent and other.path == self.path

    def __hash__(self) -> int:
        return hash((FileContent, self.path))


def _encode_file_content(value: FileContent, sink: Sink, depth: int) -> None:
    sink.out += b"K"
    read = _read_file_digest(value.path)
    if read is None:
        sink.out += b"a"
    else:
        sink.out += b"f"
        put_digest(sink.out, *read)


def _read_file_digest(path: pathlib.Path) -> tuple[int, bytes] | None:
    """Size and sha256 of a regular file's content, or None when nothing exists there."""
    # O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused after fstat.
    flags = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        if path.is_dir():
            raise Refused(FileContent, f"{str(path)!r} is a directory") from None
        raise Refused(FileContent, f"cannot open {str(path)!r}: {exc.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise Refused(FileContent, f"{str(path)!r} is a directory")
        if not stat.S_ISREG(mode):
            raise Refused(FileContent, f"{str(path)!r} is not a regular file")
        if flags & getattr(os, "O_NONBLOCK", 0):
            os.set_blocking(fd, True)
        handle = open(fd, "rb", buffering=0)  # noqa: SIM115 (owns fd from here; closed below)
    except BaseException:
        os.close(fd)
        raise
    with handle:
        hasher = hashlib.sha256()
        buffer = bytearray(CHUNK)
        view = memoryview(buffer)
        size = 0
        while count := handle.readinto(buffer):
            hasher.update(view[:count])
            size += count
    return size, hasher.digest()


EXACT_ENCODERS[FileContent] = _encode_file_content
