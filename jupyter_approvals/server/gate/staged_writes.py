"""Agents' file saves staged in a change set (policy ``sandbox``) instead of held one by one.

A file an agent saves over the contents API is written into the overlay upper folder of its
most recent running sandboxed kernel, or into a staging folder of its own
(:mod:`..sandbox.staging`), and waits there with everything else the agent changed: the
person applies or discards it in the change set. The agent gets the model the save would have
returned, marked as staged; the server's journal records it ``staged``.
"""

from __future__ import annotations

import functools
import hashlib
import mimetypes
import os
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tornado import web

from ...core import errors
from ...previews.source_encoding import refuse_misread_source
from ..sandbox.staging import stage_bytes, stage_removal, stage_stream
from ..sandbox.upper_view import look_up, merged_files
from .staged_view import StagedView

#: Where an agent's saves are staged: (the change set's id, its upper folder), or None.
UpperFor = Callable[[str], "tuple[str, Path] | None"]


class StagedWrites:
    """Stages agents' file saves, deletions, renames and copies, and records each."""

    def __init__(
        self,
        upper_for: UpperFor,
        journal: Callable[..., None],
        root: Path,
        most_bytes: int,
    ) -> None:
        self._upper_for = upper_for
        self._journal = journal
        self.root = root
        self._most_bytes = most_bytes
        self.view = StagedView(root)

    def upper_of(self, agent: str) -> Path | None:
        """The upper folder ``agent``'s changes are staged in, or None where they are not
        staged (another policy)."""
        found = self._upper_for(agent)
        return None if found is None else found[1]

    def stage_for(
        self, agent: str, api_path: str, data: bytes, copy_of: str | None = None
    ) -> Callable[[], dict[str, Any]] | None:
        """The staging of ``data`` at ``api_path`` for ``agent`` (a copy of ``copy_of``), or
        None where agents' saves are not staged (another policy): then they are held."""
        found = self._upper_for(agent)
        if found is None:
            return None
        change_set, upper = found
        return functools.partial(self._stage, agent, change_set, upper, api_path, data, copy_of)

    def removal_for(self, agent: str, api_path: str) -> Callable[[], None] | None:
        """The staged deletion of ``api_path`` for ``agent``, or None (not staged)."""
        found = self._upper_for(agent)
        if found is None:
            return None
        upper = found[1]
        # A project folder without a file has nothing to mark: a change set holds files, so
        # the empty folder's deletion is held for a person as before.
        if (
            self._in_project(upper, api_path)
            and (self.root / api_path).is_dir()
            and next(iter(merged_files(self.root, upper, api_path)), None) is None
        ):
            return None
        return functools.partial(self._remove, agent, *found, api_path)

    def rename_for(self, agent: str, old: str, new: str) -> Callable[[], None] | None:
        """The staged rename of ``old`` to ``new`` for ``agent``, or None (not staged)."""
        found = self._upper_for(agent)
        if found is None:
            return None
        return functools.partial(self._rename, agent, *found, old, new)

    def _stage(
        self,
        agent: str,
        change_set: str,
        upper: Path,
        api_path: str,
        data: bytes,
        copy_of: str | None,
    ) -> dict[str, Any]:
        # The person would read other text than Python runs: refused as a held write is.
        refuse_misread_source(api_path, data, shown_in="the change set")
        stage_bytes(str(upper), api_path, data)
        self._journal(
            "staged",
            None,
            action="file.copy" if copy_of is not None else "file.write",
            agent=agent,
            path=api_path,
            size=len(data),
            sha256=hashlib.sha256(data).hexdigest(),
            change_set=change_set,
            held_at="server",
            **({"source": copy_of} if copy_of is not None else {}),
        )
        now = datetime.now(timezone.utc)
        name = api_path.rsplit("/", 1)[-1]
        return {
            "name": name,
            "path": api_path,
            "type": "notebook" if copy_of is not None and name.endswith(".ipynb") else "file",
            "writable": True,
            "created": now,
            "last_modified": now,
            "mimetype": mimetypes.guess_type(name)[0] or "text/plain",
            "content": None,
            "format": None,
            "size": len(data),
            "hash": None,
            "hash_algorithm": None,
            # Not in the project yet: in the change set this id names (GET changes).
            "jupyter_approvals_staged_in": change_set,
        }

    def _in_project(self, upper: Path, api_path: str) -> bool:
        """Whether the project's own entry at ``api_path`` shows through ``upper``."""
        if look_up(upper, api_path).hidden_above:
            return False
        return os.path.lexists(self.root / api_path)

    def _remove_all(self, upper: Path, api_path: str) -> None:
        """Stage the deletion of ``api_path`` and all below it. A folder that only the upper
        folder has goes whole; the project's files each get a whiteout, so that discarding one
        brings it back and its folder stays, as applying leaves it (a change set holds files,
        not folders)."""
        if not self._in_project(upper, api_path):
            stage_removal(str(upper), api_path, in_project=False)
            return
        for below, _source in list(merged_files(self.root, upper, api_path)):
            stage_removal(str(upper), below, in_project=self._in_project(upper, below))

    def _remove(self, agent: str, change_set: str, upper: Path, api_path: str) -> None:
        if not api_path:
            raise web.HTTPError(400, "Can't delete root")
        if self.view.kind(upper, api_path) is None:
            raise web.HTTPError(404, f"file or directory does not exist: {api_path!r}")
        self._remove_all(upper, api_path)
        self._journal(
            "staged",
            None,
            action="file.delete",
            agent=agent,
            path=api_path,
            change_set=change_set,
            held_at="server",
        )

    def _rename(self, agent: str, change_set: str, upper: Path, old: str, new: str) -> None:
        kind = self.view.kind(upper, old)
        if kind is None:
            raise web.HTTPError(404, f"File or directory does not exist: {old}")
        if self.view.kind(upper, new) is not None:
            raise web.HTTPError(409, f"File already exists: {new}")
        parent = new.rpartition("/")[0]
        if parent and self.view.kind(upper, parent) != "directory":
            raise web.HTTPError(404, f"No such parent directory: {parent}")
        if kind == "directory" and (new + "/").startswith(old + "/"):
            raise web.HTTPError(400, f"Cannot move {old} into itself")
        files = list(merged_files(self.root, upper, old))
        size = sum(source.size for _, source in files)
        if size > self._most_bytes:
            raise errors.ApprovalSandboxLimit(
                f"Renaming {old} stages a copy of {size:,} bytes, more than "
                f"sandbox_overlay_bytes ({self._most_bytes:,}) allows. Ask the person to "
                "rename it. Nothing was changed.",
                path=old,
            )
        for below, source in files:
            target = new + below[len(old) :]
            with source.open() as chunks:
                stage_stream(str(upper), target, chunks, mode=source.mode)
        self._remove_all(upper, old)
        self._journal(
            "staged",
            None,
            action="file.rename",
            agent=agent,
            path=new,
            source=old,
            files=len(files),
            size=size,
            change_set=change_set,
            held_at="server",
        )
