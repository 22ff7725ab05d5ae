"""What the file operations approve, read once and handed from the subject to the preview.

The gate computes a call's subject (what the fingerprint covers) right before it renders
the preview of a new request, in the same thread. A preview that read the file system a
second time could show something else than what was fingerprinted if a file changed in
between; so the subject keeps what it read (``kernel.handoff``) and the preview of the same
call takes it, reading anew only when nothing was kept for that call.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from typing import Any

from ...core.fingerprint import FileContent

#: Bytes read per call while hashing a file.
CHUNK = 1 << 20


@dataclass(frozen=True)
class FileState:
    """A file as one read found it: absent (``size`` None), or its mode, size and sha256.

    ``data`` is the content itself when it is at most the ``keep`` bytes asked for.
    ``irregular`` marks something that is not a regular file (a FIFO, a device).
    """

    mode: int | None
    size: int | None = None
    sha256: str = ""
    data: bytes | None = None
    irregular: bool = False

    def subject(self, path: str) -> dict[str, Any]:
        """What an approval covers: content (size and sha256) and permission bits."""
        if self.irregular:
            # FileContent refuses it with its usual error (APPROVAL_UNFINGERPRINTABLE).
            return {"content": FileContent(path), "mode": self.mode}
        content = None if self.size is None else {"size": self.size, "sha256": self.sha256}
        return {"content": content, "mode": self.mode}


def read_state(path: str, keep: int) -> FileState:
    """Read the file at ``path`` once: its mode, size and sha256, and its bytes up to ``keep``."""
    # O_NONBLOCK: opening a FIFO must not wait for a writer; it is marked after fstat.
    flags = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except (FileNotFoundError, NotADirectoryError):
        return FileState(mode=None)
    try:
        info = os.fstat(fd)
        mode = stat.S_IMODE(info.st_mode)
        if not stat.S_ISREG(info.st_mode):
            return FileState(mode=mode, irregular=True)
        hasher = hashlib.sha256()
        parts: list[bytes] | None = []
        size = 0
        while chunk := os.read(fd, CHUNK):
            hasher.update(chunk)
            size += len(chunk)
            if parts is not None and size <= keep:
                parts.append(chunk)
            else:
                parts = None
    finally:
        os.close(fd)
    data = b"".join(parts) if parts is not None else None
    return FileState(mode=mode, size=size, sha256=hasher.hexdigest(), data=data)
