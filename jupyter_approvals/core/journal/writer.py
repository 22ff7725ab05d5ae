"""The decision journal: every approval outcome, one JSON object per line, append-only.

Writing
    :meth:`Journal.append` builds one complete line (``json.dumps`` with sorted keys,
    ``ensure_ascii=False``, compact separators, then ``"\\n"``) and hands it to the kernel
    in a single ``os.write`` on a descriptor opened with ``O_APPEND | O_CREAT |
    O_NOFOLLOW``, then ``fsync``\\ s it. On a local filesystem each ``O_APPEND`` write to a
    regular file lands at the end as one piece, so several kernels can append to the same
    journal at once without interleaving lines. That guarantee does not hold on NFS and
    similar network filesystems; keep the state directory local.

    One repair needs more than ``O_APPEND``: if a crash or a short write left the last line
    without its newline, the next entry is written on a fresh line instead of being glued to
    (and lost with) the torn one. Telling a torn tail from another writer's line still being
    copied in needs a brief advisory ``flock`` on POSIX; it is waited for at most half a
    second, and without it the entry is still appended, just without the repair.

    A write that a full disk or a file size limit cuts short (ENOSPC, RLIMIT_FSIZE) is taken
    back with ``ftruncate`` under the same lock, so the append fails without leaving a torn
    line behind.

    Lines are bounded: strings are clipped to :data:`MAX_STRING_CHARS`, containers to
    :data:`MAX_ITEMS` items and :data:`MAX_DEPTH` levels, and a line that still exceeds
    :data:`MAX_LINE_BYTES` is rebuilt with tighter limits, and at last with only the
    identifying fields. A clipped entry carries ``"clipped": true``. Small lines keep each
    append a single small write and let readers scan the file in fixed-size blocks.

    A journal that cannot be written never raises into the caller and never changes a
    decision: ``append`` returns ``False`` and records :attr:`Journal.last_error` and
    :attr:`Journal.failures` for the UI to show.

Reading
    :func:`read_entries` is for display only. The file is as writable as anything else
    the user owns, so nothing may treat its contents as proof that something was approved.

Entry format (version 1)
    ``{"v": 1, "time": "2025-01-02T03:04:05.678Z", "event": "approved", ...fields}``.
    The caller's fields are stored as given (after making them JSON-safe); a field named
    like a journal key (``v``, ``time``, ``event``, ``clipped``) is kept as ``caller_<name>``.

Layout
    This module holds the writer, :class:`Journal`, and is the import surface for the
    whole journal. The entry format and line building live in :mod:`.line`, reading in
    :mod:`.reader`, and the file-level primitives (open flags, directories, the lock, the
    torn-tail check) in :mod:`.files`; their public names are re-exported here.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jupyter_approvals.core.journal.files import (
    _APPEND_FLAGS,
    _POSIX,
    _tail_is_torn,
    _try_lock,
    _unlock,
    fsync_directory,
    make_private_dirs,
)
from jupyter_approvals.core.journal.line import _build_line, _format_time
from jupyter_approvals.core.journal.reader import JournalPage, read_entries
from jupyter_approvals.core.project import default_state_dir, journal_path

__all__ = ["Journal"]

_log = logging.getLogger(__name__)


def _describe(exc: BaseException, path: Path) -> str:
    if (
        isinstance(exc, OSError)
        and exc.errno in (errno.ELOOP, errno.EMLINK)
        and os.path.islink(path)
    ):
        return f"cannot write the decision journal {path}: it is a symbolic link (not followed)"
    return f"cannot write the decision journal {path}: {type(exc).__name__}: {exc}"


class Journal:
    """An append-only JSONL decision journal at ``path``; appends never raise.

    ``clock`` returns epoch seconds and stamps each entry (inject a fixed one in tests).
    One instance may be shared by threads; separate processes may each hold their own
    instance on the same path.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        clock: Callable[[], float] = time.time,
        *,
        private_dir: bool = False,
    ) -> None:
        """Open (lazily) the journal at ``path``; nothing touches the disk until ``append``.

        Missing parent directories are created with mode 0700. With ``private_dir`` the
        parent directory is also tightened to 0700 if it has group or other bits; it is off
        by default so that a journal placed in a shared directory never changes that
        directory. :meth:`for_project` turns it on for ``<state dir>/decisions``.
        """
        self.path = Path(path)
        self._clock = clock
        self._private_dir = private_dir
        self._lock = threading.Lock()
        self._last_error: str | None = None
        self._failures = 0
        self._last_append_ok: bool | None = None
        # Whether the parent directory was made (and tightened) by an earlier append: it is
        # checked once, not before every line, and again after a failure.
        self._dir_ready = False

    @classmethod
    def for_project(
        cls,
        project_root: str | os.PathLike[str],
        state_dir: str | os.PathLike[str] | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> Journal:
        """The journal of ``project_root`` under ``state_dir`` (default: :func:`default_state_dir`).

        This does not check that the state dir is outside the project; callers gate
        protected operations with :func:`ensure_outside_project`.
        """
        state = default_state_dir() if state_dir is None else Path(state_dir)
        return cls(journal_path(project_root, state), clock, private_dir=True)

    @property
    def last_error(self) -> str | None:
        """Text of the most recent failed append, or None if none failed; success keeps it."""
        with self._lock:
            return self._last_error

    @property
    def failures(self) -> int:
        """How many appends failed since this instance was created."""
        with self._lock:
            return self._failures

    @property
    def last_append_ok(self) -> bool | None:
        """Whether the most recent append succeeded (None before the first one).

        ``last_error`` outlives later successes on purpose; this tells a UI whether the
        journal is writable right now or only failed earlier.
        """
        with self._lock:
            return self._last_append_ok

    def append(self, event: str, /, **fields: Any) -> bool:
        """Append one entry; True once it is on disk, False (recorded, not raised) otherwise.

        ``event`` must be a non-empty string. The journal adds ``v`` and ``time``; the
        fields are made JSON-safe (paths become strings, other unknown values a readable
        ``<unserializable ...>`` marker) and clipped so the line stays bounded.
        """
        with self._lock:
            try:
                if not isinstance(event, str) or not event:
                    raise ValueError(f"event must be a non-empty string, got {event!r}")
                line = _build_line(event, fields, _format_time(self._clock()))
                self._write(line)
            except Exception as exc:
                self._dir_ready = False
                self._failures += 1
                self._last_error = _describe(exc, self.path)
                self._last_append_ok = False
                # A broken logging setup must not make append raise.
                with contextlib.suppress(Exception):
                    _log.warning("%s", self._last_error)
                return False
            self._last_append_ok = True
            return True

    def read(
        self,
        *,
        limit: int = 50,
        offset: int = 0,
        event: str | None = None,
        action: str | None = None,
        count_total: bool = False,
    ) -> JournalPage:
        """:func:`read_entries` on this journal's file (for display only)."""
        return read_entries(
            self.path,
            limit=limit,
            offset=offset,
            event=event,
            action=action,
            count_total=count_total,
        )

    def _write(self, line: bytes) -> None:
        created_dirs = False
        if not self._dir_ready:
            created_dirs = self._prepare_dir()
        try:
            fd = os.open(self.path, _APPEND_FLAGS, 0o600)
        except FileNotFoundError:
            if not self._dir_ready:
                raise
            # The directory went away after an earlier line: make it again, once.
            created_dirs = self._prepare_dir()
            fd = os.open(self.path, _APPEND_FLAGS, 0o600)
        try:
            locked = _try_lock(fd)
            try:
                # One fstat, under the lock: its size is the one the torn-tail check needs.
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode):
                    raise OSError(errno.EINVAL, "not a regular file", str(self.path))
                if _POSIX and st.st_mode & 0o077:
                    os.fchmod(fd, 0o600)
                # A crash or short write can leave a final line without its newline; start
                # on a fresh line so this entry is not glued to (and lost with) the torn one.
                torn = locked and _tail_is_torn(fd, st.st_size)
                data = b"\n" + line if torn else line
                written = os.write(fd, data)
                if written != len(data) and locked:
                    # A full disk or a file size limit (ENOSPC, RLIMIT_FSIZE) cut the line:
                    # take the part back, so no torn line stays for readers. Safe only
                    # under the lock, which every other writer waits for.
                    os.ftruncate(fd, st.st_size)
            finally:
                if locked:
                    _unlock(fd)
            if written != len(data):
                raise OSError(
                    errno.EIO, f"short write: {written} of {len(data)} bytes", str(self.path)
                )
            os.fsync(fd)
        finally:
            os.close(fd)
        self._dir_ready = True
        if created_dirs or st.st_size == 0:
            fsync_directory(self.path.parent)

    def _prepare_dir(self) -> bool:
        """Make the parent directory (0700) and, for a private journal, tighten it; True if
        a directory was created."""
        self._dir_ready = False
        parent = self.path.parent
        created = make_private_dirs(parent)
        if self._private_dir and _POSIX:
            dir_st = os.lstat(parent)
            # Only a real directory is tightened; chmod through a symlink would change
            # whatever it points at.
            if stat.S_ISDIR(dir_st.st_mode) and dir_st.st_mode & 0o077:
                os.chmod(parent, stat.S_IMODE(dir_st.st_mode) & 0o700)
        return created
