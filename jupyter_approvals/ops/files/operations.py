"""Protected file operations: write a file atomically, delete a path, move a path.

Each shows what will change before anything does: a write shows a unified diff against the
current content (sizes and sha256 for binary or very large content), a delete lists every
path it removes, a move names both ends and whether something is replaced. Each approval
covers the current state of what it touches (content and mode of the file written, the whole
tree deleted or moved, the destination), so a change after the preview refuses the run.
The preview shows what the approval covers: it is built from the same reading of the file
system as the fingerprint (see :mod:`..common.files_state`), not from a second one.

This module checks the arguments and does the work; what each operation's card reads and
shows (subject, summary, preview) is in :mod:`.previews`.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import os
import shutil
import stat
from typing import Any

from ...core.atomic import atomic_replace
from ...core.lease import require_lease
from ...kernel.gate import protected
from ...kernel.handoff import recall
from ..common.paths import path_text
from ..common.refusal import invalid_argument
from .previews import (
    delete_preview,
    delete_subject,
    delete_summary,
    move_preview,
    move_subject,
    move_summary,
    write_preview,
    write_subject,
    write_summary,
)

#: Bytes written per call, so a long write can be stopped between chunks.
CHUNK = 1 << 20


_invalid = invalid_argument


def _path_argument(value: object, name: str) -> str:
    """An absolute path from a str or path-like argument (read once)."""
    return os.path.abspath(path_text(value, name))


def _keep_last_link(path: str) -> str:
    """``path`` with its directories resolved but its last part kept (a link stays a link)."""
    parent, name = os.path.split(path)
    if not name:
        raise _invalid(f"{path!r} is a file-system root.", path=path)
    return os.path.join(os.path.realpath(parent), name)


def _bool_argument(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise _invalid(f"{name} must be True or False.", argument=name, type=type(value).__name__)
    return value


# -- write_file -------------------------------------------------------------------------------


def _prepare_write(path: object, data: object, encoding: object) -> dict[str, Any]:
    target = os.path.realpath(_path_argument(path, "path"))
    if os.path.isdir(target):
        raise _invalid(f"{target!r} is a directory; write_file writes files.", path=target)
    if os.path.exists(target) and not os.path.isfile(target):
        raise _invalid(f"{target!r} is not a regular file.", path=target)
    if not os.path.isdir(os.path.dirname(target)):
        raise _invalid(
            f"The directory of {target!r} does not exist.", path=target, reason="no such directory"
        )
    if not isinstance(encoding, str):
        raise _invalid("encoding must be a str such as 'utf-8'.", argument="encoding")
    if isinstance(data, str):
        try:
            codecs.lookup(encoding)
            # Encoded once here: the preview, the fingerprint and the write see the same bytes.
            data = data.encode(encoding)
        except LookupError:
            raise _invalid(f"Unknown encoding {encoding!r}.", argument="encoding") from None
        except UnicodeEncodeError as exc:
            raise _invalid(
                f"data cannot be encoded as {encoding}: {exc.reason} at character {exc.start}.",
                argument="data",
                encoding=encoding,
                position=exc.start,
            ) from None
    elif isinstance(data, (bytearray, memoryview)):
        data = bytes(data)  # a copy: changing the caller's buffer later changes nothing here
    elif not isinstance(data, bytes):
        raise _invalid(
            f"data must be str or bytes, not {type(data).__name__}.",
            argument="data",
            type=type(data).__name__,
        )
    return {"path": target, "data": data, "encoding": encoding}


@protected(
    "file.write",
    summary=write_summary,
    preview=write_preview,
    subject=write_subject,
    target="path",
    prepare=_prepare_write,
)
def write_file(path: str | os.PathLike[str], data: str | bytes, *, encoding: str = "utf-8") -> int:
    """Write ``data`` (str, encoded with ``encoding``, or bytes) to ``path`` all at once.

    The file holds its old content or the new one, never a part, even if the process dies
    mid-write; an existing file keeps its mode. Returns the number of bytes written.
    """
    require_lease("file.write")
    recall(("write", path))  # the reading write_subject kept is not needed any more
    content = data.encode(encoding) if isinstance(data, str) else bytes(data)
    view = memoryview(content)
    # The gate passes the real path it approved; a symlink put there since is refused.
    with atomic_replace(path, expected=os.path.abspath(path)) as handle:
        for start in range(0, len(view), CHUNK):
            handle.write(view[start : start + CHUNK])
    return len(content)


# -- delete_path ------------------------------------------------------------------------------


def _prepare_delete(path: object, recursive: object) -> dict[str, Any]:
    target = _keep_last_link(_path_argument(path, "path"))
    recursive = _bool_argument(recursive, "recursive")
    if not os.path.lexists(target):
        raise _invalid(f"Nothing exists at {target!r}.", path=target, reason="missing")
    if os.path.isdir(target) and not os.path.islink(target) and not recursive:
        raise _invalid(
            f"{target!r} is a directory; pass recursive=True to delete it with everything in it.",
            path=target,
            reason="directory",
        )
    return {"path": target, "recursive": recursive}


@protected(
    "file.delete",
    summary=delete_summary,
    preview=delete_preview,
    subject=delete_subject,
    target="path",
    prepare=_prepare_delete,
)
def delete_path(path: str | os.PathLike[str], *, recursive: bool = False) -> None:
    """Delete the file or symlink at ``path``; a directory with everything in it if ``recursive``.

    A symlink is removed itself; what it points to is left alone.
    """
    require_lease("file.delete")
    if stat.S_ISDIR(os.lstat(path).st_mode):
        if not recursive:
            raise IsADirectoryError(errno.EISDIR, "not deleting a directory without recursive")
        shutil.rmtree(path)
    else:
        os.unlink(path)


# -- move_path --------------------------------------------------------------------------------


def _prepare_move(source: object, destination: object, overwrite: object) -> dict[str, Any]:
    source = _keep_last_link(_path_argument(source, "source"))
    destination = _keep_last_link(_path_argument(destination, "destination"))
    overwrite = _bool_argument(overwrite, "overwrite")
    if not os.path.lexists(source):
        raise _invalid(f"Nothing exists at {source!r}.", path=source, reason="missing")
    if source == destination:
        raise _invalid("source and destination are the same path.", path=source)
    if destination.startswith(source + os.sep) and os.path.isdir(source):
        raise _invalid("A directory cannot be moved into itself.", path=destination)
    if not os.path.isdir(os.path.dirname(destination)):
        raise _invalid(
            f"The directory of {destination!r} does not exist.",
            path=destination,
            reason="no such directory",
        )
    if os.path.isdir(destination) and not os.path.islink(destination):
        raise _invalid(
            f"{destination!r} is an existing directory. Name the full new path (for example "
            f"{os.path.join(destination, os.path.basename(source))!r}); to replace a directory, "
            "delete it first with delete_path.",
            path=destination,
            reason="destination is a directory",
        )
    if os.path.lexists(destination) and not overwrite:
        raise _invalid(
            f"{destination!r} exists; pass overwrite=True to replace it.",
            path=destination,
            reason="destination exists",
        )
    return {"source": source, "destination": destination, "overwrite": overwrite}


def _move_target(source: str, destination: str, overwrite: bool) -> list[str]:
    return [source, destination]


@protected(
    "file.move",
    summary=move_summary,
    preview=move_preview,
    subject=move_subject,
    target=_move_target,
    prepare=_prepare_move,
)
def move_path(
    source: str | os.PathLike[str], destination: str | os.PathLike[str], *, overwrite: bool = False
) -> None:
    """Move ``source`` (file, symlink or directory) to exactly ``destination``.

    Within one file system this is one rename; across file systems the source is copied
    (a file atomically) and then removed. An existing destination is replaced only with
    ``overwrite=True``.
    """
    require_lease("file.move")
    if os.path.lexists(destination) and not overwrite:
        raise FileExistsError(errno.EEXIST, "destination exists", os.fspath(destination))
    try:
        _rename(source, destination)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        _move_across_devices(os.fspath(source), os.fspath(destination))


def _rename(source: str | os.PathLike[str], destination: str | os.PathLike[str]) -> None:
    os.replace(source, destination)


def _move_across_devices(source: str, destination: str) -> None:
    """Copy to the destination's file system, put it in place, then remove the source."""
    mode = os.lstat(source).st_mode
    if stat.S_ISREG(mode):
        if os.path.islink(destination):
            os.unlink(destination)  # replace the link itself, as a rename would
        with open(source, "rb") as original, atomic_replace(destination) as copy:
            shutil.copyfileobj(original, copy, CHUNK)
        shutil.copystat(source, destination)
        os.unlink(source)
        return
    temp = os.path.join(
        os.path.dirname(destination), f".{os.path.basename(destination)}.{os.getpid()}.jpa-move"
    )
    try:
        if stat.S_ISLNK(mode):
            os.symlink(os.readlink(source), temp)
        else:
            shutil.copytree(source, temp, symlinks=True)
        if stat.S_ISDIR(mode) and os.path.lexists(destination):
            os.unlink(destination)  # a file or link (directories are refused): rename needs room
        os.replace(temp, destination)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            if os.path.isdir(temp) and not os.path.islink(temp):
                shutil.rmtree(temp)
            else:
                os.unlink(temp)
        raise
    if stat.S_ISDIR(mode):
        shutil.rmtree(source)
    else:
        os.unlink(source)
