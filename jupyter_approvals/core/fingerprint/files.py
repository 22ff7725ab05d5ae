"""Files in a subject: :class:`FileContent`, fingerprinted as the file's current content.

The file is read when the subject is fingerprinted, in chunks, into one sha256: its content
enters the encoding as its size and digest, never as a copy in memory.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import stat

from .encoding import CHUNK, Refused, Sink, put_digest


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


def encode_file_content(value: FileContent, sink: Sink, depth: int) -> None:
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


# Its public home is the package: error messages and reprs name it there.
FileContent.__module__ = "jupyter_approvals.core.fingerprint"
