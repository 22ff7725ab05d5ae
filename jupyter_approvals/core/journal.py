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
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import math
import numbers
import os
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from itertools import islice
from pathlib import Path, PurePath
from typing import IO, Any, Final

from jupyter_approvals.core.project import (
    default_state_dir,
    ensure_outside_project,
    journal_path,
    project_key,
    project_root_for,
)

if sys.platform != "win32":
    import fcntl

__all__ = [
    "EVENTS",
    "MAX_DEPTH",
    "MAX_ITEMS",
    "MAX_LINE_BYTES",
    "MAX_STRING_CHARS",
    "SCHEMA_VERSION",
    "Journal",
    "JournalPage",
    "default_state_dir",
    "ensure_outside_project",
    "journal_path",
    "project_key",
    "project_root_for",
    "read_entries",
]

_log = logging.getLogger(__name__)

#: Value of the ``"v"`` key of every entry written by this module.
SCHEMA_VERSION: Final = 1

#: The events the rest of the system writes. Listed for readers; ``append`` accepts any
#: non-empty event name so that a new event never costs a lost record.
EVENTS: Final = frozenset(
    {
        "requested",
        "approved",
        "rejected",
        "withdrawn",
        "timed_out",
        "expired",
        "refused",
        "auto_answered",
        "dismissed",
        "executed",
        "failed",
        "not_from_frontend",
    }
)

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

# Longest wait for the advisory lock that guards the torn-tail repair.
_LOCK_WAIT: Final = 0.5

_READ_BLOCK: Final = 64 * 1024
# Any line longer than this is not ours (ours are <= MAX_LINE_BYTES); it is skipped as
# corrupt without being held in memory.
_MAX_READ_LINE: Final = 1024 * 1024

_O_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_O_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
# A FIFO planted at the journal path would block a write-open forever; O_NONBLOCK makes it
# fail instead and has no effect on regular files.
_O_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)
# Windows would otherwise turn "\n" into "\r\n" inside the descriptor.
_O_BINARY: Final = getattr(os, "O_BINARY", 0)
# O_RDWR rather than O_WRONLY: append reads the last byte to repair a torn tail.
_APPEND_FLAGS: Final = (
    os.O_RDWR | os.O_APPEND | os.O_CREAT | _O_NOFOLLOW | _O_CLOEXEC | _O_NONBLOCK | _O_BINARY
)
_READ_FLAGS: Final = os.O_RDONLY | _O_NOFOLLOW | _O_CLOEXEC | _O_NONBLOCK | _O_BINARY
_POSIX: Final = os.name == "posix"


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


def _encode(record: Mapping[str, Any]) -> bytes:
    text = json.dumps(
        record, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False
    )
    return (text + "\n").encode("utf-8")


def _format_time(epoch_seconds: float) -> str:
    moment = datetime.fromtimestamp(epoch_seconds, tz=timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _build_line(event: str, fields: Mapping[str, Any], when: str) -> bytes:
    """The encoded line for one entry, guaranteed to fit in :data:`MAX_LINE_BYTES`."""
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


def _make_dirs(directory: Path) -> bool:
    """Create ``directory`` and any missing ancestors with mode 0700; True if any was made."""
    missing: list[Path] = []
    current = directory
    while not os.path.lexists(current):
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    created = False
    for path in reversed(missing):
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue  # another process made it first
        if _POSIX:
            # mkdir's mode passes through the umask; say 0700 exactly.
            os.chmod(path, 0o700)
        created = True
    return created


def _fsync_dir(directory: Path) -> None:
    """Best effort: make a new directory entry durable (POSIX only; some filesystems refuse)."""
    if not _POSIX:
        return
    try:
        fd = os.open(directory, os.O_RDONLY | _O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _try_lock(fd: int) -> bool:
    """Take the journal's advisory lock, waiting at most :data:`_LOCK_WAIT`; False if not.

    The lock only guards the torn-tail repair below: the append itself stays one
    ``O_APPEND`` write. A writer stuck holding the lock (a stopped process) must not stall
    the kernel, so after the wait the entry is written without the repair.
    """
    if sys.platform == "win32":
        return False
    deadline = time.monotonic() + _LOCK_WAIT
    pause = 0.0001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(pause)
            pause = min(pause * 2, 0.01)
        except OSError:
            return False  # a filesystem without flock
        else:
            return True


def _unlock(fd: int) -> None:
    if sys.platform != "win32":
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)


def _tail_is_torn(fd: int) -> bool:
    """Whether the file ends inside a line (a crash or short write cut the last one).

    Only meaningful under the lock: otherwise another writer's line still being copied in
    looks torn too.
    """
    if sys.platform == "win32":
        return False
    size = os.fstat(fd).st_size
    return size > 0 and os.pread(fd, 1, size - 1) != b"\n"


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
        parent = self.path.parent
        created_dirs = _make_dirs(parent)
        if self._private_dir and _POSIX:
            dir_st = os.lstat(parent)
            # Only a real directory is tightened; chmod through a symlink would change
            # whatever it points at.
            if stat.S_ISDIR(dir_st.st_mode) and dir_st.st_mode & 0o077:
                os.chmod(parent, stat.S_IMODE(dir_st.st_mode) & 0o700)
        fd = os.open(self.path, _APPEND_FLAGS, 0o600)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise OSError(errno.EINVAL, "not a regular file", str(self.path))
            if _POSIX and st.st_mode & 0o077:
                os.fchmod(fd, 0o600)
            locked = _try_lock(fd)
            try:
                # A crash or short write can leave a final line without its newline; start
                # on a fresh line so this entry is not glued to (and lost with) the torn one.
                data = b"\n" + line if locked and _tail_is_torn(fd) else line
                written = os.write(fd, data)
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
        if created_dirs or st.st_size == 0:
            _fsync_dir(parent)


@dataclass(frozen=True)
class JournalPage:
    """One page of journal entries, newest first, for display (never for authorization).

    ``has_more`` says whether matching entries exist beyond this page. ``corrupt_lines``
    counts unreadable lines seen while reading (torn, not JSON, not an object); unless
    ``total_matching`` was requested, reading stops after the page, so lines older than
    the page are not counted. ``total_matching`` is None unless asked for.
    """

    entries: list[dict[str, Any]] = field(default_factory=list)
    has_more: bool = False
    corrupt_lines: int = 0
    total_matching: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form for the server API."""
        return {
            "entries": list(self.entries),
            "has_more": self.has_more,
            "corrupt_lines": self.corrupt_lines,
            "total_matching": self.total_matching,
        }


def _iter_lines_reversed(
    f: IO[bytes],
    end: int,
    *,
    block_size: int = _READ_BLOCK,
    max_line: int = _MAX_READ_LINE,
) -> Iterator[bytes | None]:
    """Lines of ``f[:end]`` from last to first, without newlines and without blank lines.

    ``None`` stands for an unusable line: the unterminated tail (a torn or in-progress
    write) or a line longer than ``max_line`` (dropped without being held in memory).
    """
    pos = end
    carry = b""  # the known end part of the current line; its start lies further back
    dropped = False  # the current line is already over max_line
    terminated = False  # a newline follows the current line (false only for the tail)

    def finish(head: bytes) -> Iterator[bytes | None]:
        if dropped or len(head) + len(carry) > max_line:
            yield None
            return
        line = head + carry
        if not line:
            return  # a blank line, or a file ending with "\n"
        yield line if terminated else None

    while pos > 0:
        start = max(0, pos - block_size)
        f.seek(start)
        chunk = f.read(pos - start)
        pos = start
        pieces = chunk.split(b"\n")
        for head in reversed(pieces[1:]):
            yield from finish(head)
            carry, dropped, terminated = b"", False, True
        if not dropped:
            if len(pieces[0]) + len(carry) > max_line:
                carry, dropped = b"", True
            else:
                carry = pieces[0] + carry
    yield from finish(b"")


def read_entries(
    path: str | os.PathLike[str],
    *,
    limit: int = 50,
    offset: int = 0,
    event: str | None = None,
    action: str | None = None,
    count_total: bool = False,
) -> JournalPage:
    """Read a page of entries, newest first, for DISPLAY ONLY: never use it to authorize.

    Anything running as the user can edit the file, so an entry proves nothing.
    ``event``/``action`` keep only entries whose field equals the value; ``offset`` skips
    that many matching entries. The file is read backwards in blocks and reading stops
    once the page is full (plus one entry to set ``has_more``), so a large journal is not
    loaded; ``count_total=True`` reads the rest to fill ``total_matching``. Unreadable
    lines are skipped and counted. A missing file is an empty page; other OS errors (for
    example, the path being a symlink, which is not followed) raise ``OSError``.
    """
    if limit < 0 or offset < 0:
        raise ValueError(f"limit and offset must be >= 0, got limit={limit}, offset={offset}")
    try:
        fd = os.open(path, _READ_FLAGS)
    except FileNotFoundError:
        return JournalPage(total_matching=0 if count_total else None)
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
        entries: list[dict[str, Any]] = []
        matched = 0
        corrupt = 0
        has_more = False
        # st_size fixes the snapshot: entries appended while reading are left for next time.
        for raw in _iter_lines_reversed(f, st.st_size):
            if raw is None:
                corrupt += 1
                continue
            try:
                entry = json.loads(raw.decode("utf-8"))
            except (ValueError, RecursionError):
                corrupt += 1
                continue
            if not isinstance(entry, dict):
                corrupt += 1
                continue
            if event is not None and entry.get("event") != event:
                continue
            if action is not None and entry.get("action") != action:
                continue
            matched += 1
            if matched <= offset:
                continue
            if len(entries) < limit:
                entries.append(entry)
                continue
            has_more = True
            if not count_total:
                break
    return JournalPage(
        entries=entries,
        has_more=has_more,
        corrupt_lines=corrupt,
        total_matching=matched if count_total else None,
    )
