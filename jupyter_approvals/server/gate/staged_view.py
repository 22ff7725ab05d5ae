"""An agent's contents reads answered as its sandboxed code reads the project.

Under the ``sandbox`` policy what an agent saves, renames or deletes over the contents API
waits in an upper folder (:mod:`.staged_writes`), not in the project. Its REST reads then see
the project through that folder, as its sandboxed kernel does: a file it saved reads with the
staged bytes, a file it deleted is not found, a folder lists what it staged in it. Existence
checks the contents manager makes for it (``file_exists``, ``dir_exists``: a new untitled
file's name, a copy's target folder) see the same, so a second untitled file never lands on
the first.

Nothing here writes. Models are built as jupyter_server's file manager builds them, from the
staged entry's own status.
"""

from __future__ import annotations

import base64
import functools
import mimetypes
import os
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NoReturn

import nbformat
from tornado import web

from ..sandbox.upper_view import list_staged, look_up, read_staged

#: A model, or a change to the model the contents manager returned.
Finish = Callable[[Any], Any]


def _time(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, tz=timezone.utc)


def _entry_model(api_path: str, info: os.stat_result, kind: str) -> dict[str, Any]:
    name = api_path.rsplit("/", 1)[-1]
    is_file = kind != "directory"
    if kind == "file" and name.endswith(".ipynb"):
        kind = "notebook"
    return {
        "name": name,
        "path": api_path,
        "type": kind,
        "writable": True,
        "created": _time(info.st_ctime),
        "last_modified": _time(info.st_mtime),
        "mimetype": (mimetypes.guess_type(name)[0] or "text/plain") if kind == "file" else None,
        "content": None,
        "format": None,
        "size": info.st_size if is_file else None,
        "hash": None,
        "hash_algorithm": None,
    }


def _raise(error: Exception) -> NoReturn:
    raise error


def _not_found(api_path: str) -> web.HTTPError:
    return web.HTTPError(404, f"file or directory does not exist: {api_path!r}")


class StagedView:
    """The project as an agent's staged changes over it show it."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _project_entry(self, api_path: str) -> Path | None:
        target = self.root / api_path
        return target if os.path.lexists(target) else None

    def kind(self, upper: Path, api_path: str) -> str | None:
        """``"file"``, ``"directory"`` or None: what ``api_path`` is in the agent's view."""
        found = look_up(upper, api_path)
        if found.gone:
            return None
        if found.entry == "file":
            return "file"
        if found.entry == "folder":
            return "directory"
        target = self._project_entry(api_path)
        if target is None:
            return None
        return "directory" if target.is_dir() else "file" if target.is_file() else None

    def changes_reads(self, upper: Path, api_path: str) -> bool:
        """Whether the upper folder changes what a read of ``api_path`` returns."""
        found = look_up(upper, api_path)
        return found.entry is not None or found.hidden_above

    def get(
        self, upper: Path, api_path: str, content: bool, kind: str | None, fmt: str | None
    ) -> tuple[Callable[[], dict[str, Any]] | None, Finish | None]:
        """How a ``get`` of ``api_path`` is answered: by a model built here (a callable, run
        off the event loop), or by the contents manager's own model changed by the second
        callable; (None, None): the project's model as it is."""
        found = look_up(upper, api_path)
        if found.gone:
            return functools.partial(_raise, _not_found(api_path)), None
        if found.entry == "file":
            return functools.partial(self._file, upper, api_path, content, kind, fmt), None
        if found.entry == "folder":
            if kind not in (None, "directory"):
                error = web.HTTPError(400, f"{api_path} is a directory, not a {kind}")
                return functools.partial(_raise, error), None
            in_project = self._project_entry(api_path)
            if found.hides_listing or in_project is None or not in_project.is_dir():
                return functools.partial(self._folder, upper, api_path, content), None
            return None, functools.partial(self._merge, upper, api_path)
        return None, None

    def _file(
        self, upper: Path, api_path: str, content: bool, kind: str | None, fmt: str | None
    ) -> dict[str, Any]:
        try:
            data, info = read_staged(upper, api_path)
        except FileNotFoundError:
            raise _not_found(api_path) from None
        if kind == "directory":
            raise web.HTTPError(400, f"{api_path} is not a directory")
        as_notebook = api_path.endswith(".ipynb") and kind in (None, "notebook")
        model = _entry_model(api_path, info, "notebook" if as_notebook else "file")
        model["type"] = "notebook" if as_notebook else "file"
        model["mimetype"] = None if as_notebook else model["mimetype"] or "text/plain"
        if not content:
            return model
        if as_notebook:
            try:
                model["content"] = nbformat.reads(data.decode("utf-8"), as_version=4)  # type: ignore[no-untyped-call]
            except Exception as exc:  # nbformat raises several kinds for unreadable JSON
                raise web.HTTPError(400, f"Unreadable Notebook: {api_path} {exc!r}") from exc
            model["format"] = "json"
            return model
        if fmt != "base64":
            try:
                model["content"], model["format"] = data.decode("utf-8"), "text"
                return model
            except UnicodeDecodeError:
                if fmt == "text":
                    raise web.HTTPError(
                        400, f"{api_path} is not UTF-8 encoded", reason="bad format"
                    ) from None
        model["content"] = base64.encodebytes(data).decode("ascii")
        model["format"] = "base64"
        model["mimetype"] = mimetypes.guess_type(api_path)[0] or "application/octet-stream"
        return model

    def _listing(self, upper: Path, api_path: str) -> dict[str, dict[str, Any]]:
        entries: dict[str, dict[str, Any]] = {}
        for name, (entry, info) in list_staged(upper, api_path).items():
            child = f"{api_path}/{name}" if api_path else name
            if entry == "file":
                entries[name] = _entry_model(child, info, "file")
            elif entry == "folder":
                entries[name] = _entry_model(child, info, "directory")
            else:  # a whiteout hides the project's entry; a link or a pipe is never shown
                entries[name] = {}
        return entries

    def _folder(self, upper: Path, api_path: str, content: bool) -> dict[str, Any]:
        info = os.stat(upper)
        model = _entry_model(api_path, info, "directory")
        if content:
            listing = self._listing(upper, api_path)
            model["content"] = [entry for _, entry in sorted(listing.items()) if entry]
            model["format"] = "json"
        return model

    def _merge(self, upper: Path, api_path: str, model: Any) -> Any:
        if not isinstance(model, dict) or not isinstance(model.get("content"), list):
            return model
        staged = self._listing(upper, api_path)
        kept = [e for e in model["content"] if e.get("name") not in staged]
        shown = {e.get("name") for e in model["content"]}
        for name, entry in sorted(staged.items()):
            # Hidden names stay as the contents manager listed them (or did not).
            if entry and (not name.startswith(".") or name in shown):
                kept.append(entry)
        model["content"] = kept
        return model
