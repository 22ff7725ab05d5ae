"""How the contents gate judges each call an agent's request makes into the contents manager.

One judge per wrapped method (named after it) turns the call's own arguments into a
:class:`Verdict`: let it through, hold it for a person (:mod:`.held_files`), or, under the
``sandbox`` policy, stage it in the agent's change set (:mod:`.staged_writes`) and answer its
reads from the staged view (:mod:`.staged_view`). :mod:`.contents` wraps the manager and
carries the verdicts out.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import os
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import held_files
from .notebook_trust import untrust_notebook
from .routes import forbidden, os_path, secret_path_reason
from .staged_view import Finish, StagedView
from .staged_writes import StagedWrites

#: The source of the copy being made (its ``save`` is held as ``file.copy``).
COPYING_FROM: ContextVar[str | None] = ContextVar("jupyter_approvals_copy_of", default=None)


@dataclass(frozen=True)
class Verdict:
    """What the gate makes of one call: hold it, or let it through (checked)."""

    #: Builds the held request (off the event loop); None lets the call through unheld.
    hold: Callable[[], held_files.HeldWrite] | None = None
    #: Whether the manager's own calls made inside this one pass (False: they are judged).
    nested_pass: bool = True
    #: The source of a copy, for the ``save`` it makes.
    copy_of: str | None = None
    #: Stages the change in a change set instead, or answers a read from the staged view (off
    #: the event loop), and returns what the manager would have: the manager is not called.
    stage: Callable[[], Any] | None = None
    #: Changes what the manager returned (a listing, to show what the agent staged in it).
    finish: Finish | None = None


def _clean(path: object) -> str:
    return str(path or "").strip("/")


def new_bytes(model: dict[str, Any], api_path: str) -> bytes:
    """The bytes a file save writes, decoded as jupyter_server's ``_save_file`` decodes them
    (``base64.decodebytes`` skips stray characters). Anything else is refused: what the gate
    cannot decode exactly as the manager would, it cannot show."""
    content, fmt = model.get("content"), model.get("format")
    if not isinstance(content, str) or fmt not in ("text", "base64"):
        raise forbidden(
            f"An agent's file save needs 'content' as a string and 'format' 'text' or "
            f"'base64' ({api_path!r} has format {fmt!r}). Nothing was written.",
            path=api_path,
        )
    try:
        if fmt == "base64":
            return base64.decodebytes(content.encode("ascii"))
        return content.encode("utf-8")
    except (binascii.Error, UnicodeError, ValueError):
        raise forbidden(
            f"The content for {api_path!r} does not decode as {fmt}. Nothing was written.",
            path=api_path,
        ) from None


class ContentsJudges:
    """The judges of :class:`.contents.ContentsHold`, one per wrapped method."""

    root: Path
    _staging: StagedWrites | None
    _secret_dirs: Callable[[], Iterable[Path]]
    #: Whether the manager keeps its files below ``root`` (else agents' changes are refused).
    _file_based: bool

    # -- checks ----------------------------------------------------------------------------

    def _check_path(self, api_path: str) -> None:
        why = secret_path_reason(api_path, self.root, self._secret_dirs())
        if why is not None:
            raise forbidden(
                f"Agents may not touch {api_path!r}: {why}. Nothing was done.", path=api_path
            )

    def _check_changeable(self, *api_paths: str) -> None:
        if not self._file_based:
            raise forbidden(
                "This server's contents manager does not keep files below its root, so the gate "
                "cannot show a person what an agent's change would do; agents' changes are "
                "refused here. Nothing was done."
            )
        for api_path in api_paths:
            self._check_path(api_path)

    # -- judges, one per wrapped method (named after it) --------------------------------------

    def _judge_save(self, agent: str, model: Any, path: str = "") -> Verdict:
        api_path = _clean(path)
        self._check_changeable(api_path)
        if not isinstance(model, dict):
            raise forbidden("An agent's save needs a model object. Nothing was written.")
        if "chunk" in model:
            raise forbidden(
                "Agents may not upload in chunks: a chunk appends to what an earlier one wrote, "
                "which no single approval shows. Send the whole file. Nothing was written.",
                path=api_path,
            )
        kind = model.get("type")
        target = os_path(self.root, api_path)
        copy_of = COPYING_FROM.get()
        if copy_of is not None and kind == "notebook":
            # A copy is held (or staged) whatever it copies: the notebook as it would be written.
            data = json.dumps(model.get("content"), sort_keys=True, indent=1).encode("utf-8")
            return self._file_write(agent, api_path, data, copy_of)
        if kind == "notebook":
            if not api_path.lower().endswith(".ipynb"):
                raise forbidden(
                    f"Agents may save notebooks only at .ipynb paths, not {api_path!r} (a "
                    "notebook save is not held; it would replace that file unseen). Nothing "
                    "was written.",
                    path=api_path,
                )
            untrust_notebook(model.get("content"), agent, target)
            return Verdict()
        if kind == "directory":
            if target.is_dir() and not target.is_symlink():
                return Verdict()  # it is there already: nothing changes
            return Verdict(
                hold=functools.partial(held_files.held_new_folder, api_path, self.root, agent)
            )
        if kind == "file":
            return self._file_write(agent, api_path, new_bytes(model, api_path), copy_of)
        raise forbidden(
            f"An agent's save of {api_path!r} has type {kind!r}; agents save 'file', "
            "'notebook' or 'directory' models. Nothing was written.",
            path=api_path,
        )

    def _staged_view(self, agent: str) -> tuple[StagedView, Path] | None:
        """The view of the project that ``agent``'s staged changes make, or None."""
        if self._staging is None:
            return None
        upper = self._staging.upper_of(agent)
        return None if upper is None else (self._staging.view, upper)

    def _file_write(self, agent: str, api_path: str, data: bytes, copy_of: str | None) -> Verdict:
        """A file's bytes written (or a copy's): staged where the agent's changes are, else
        held for a person."""
        staged = self._staging.stage_for(agent, api_path, data, copy_of) if self._staging else None
        if staged is not None:
            return Verdict(stage=staged)
        return Verdict(
            hold=functools.partial(
                held_files.held_file_write, api_path, data, self.root, agent, copy_of
            )
        )

    def _judge_rename(self, agent: str, old_path: str, new_path: str) -> Verdict:
        old, new = _clean(old_path), _clean(new_path)
        self._check_changeable(old, new)
        if old == new:
            return Verdict()
        staged = self._staging.rename_for(agent, old, new) if self._staging else None
        if staged is not None:
            return Verdict(stage=staged)
        return Verdict(hold=functools.partial(held_files.held_rename, old, new, self.root, agent))

    _judge_rename_file = _judge_rename

    def _judge_delete(self, agent: str, path: str) -> Verdict:
        api_path = _clean(path)
        self._check_changeable(api_path)
        staged = self._staging.removal_for(agent, api_path) if self._staging else None
        if staged is not None:
            return Verdict(stage=staged)
        return Verdict(hold=functools.partial(held_files.held_delete, api_path, self.root, agent))

    _judge_delete_file = _judge_delete

    def _checkpoint(self, op: str, agent: str, path: str, checkpoint_id: str = "") -> Verdict:
        api_path = _clean(path)
        self._check_changeable(api_path)
        return Verdict(
            hold=functools.partial(
                held_files.held_checkpoint, op, api_path, str(checkpoint_id), self.root, agent
            )
        )

    def _judge_create_checkpoint(self, agent: str, path: str) -> Verdict:
        return self._checkpoint("create", agent, path)

    def _judge_restore_checkpoint(self, agent: str, checkpoint_id: str, path: str) -> Verdict:
        return self._checkpoint("restore", agent, path, checkpoint_id)

    def _judge_delete_checkpoint(self, agent: str, checkpoint_id: str, path: str) -> Verdict:
        return self._checkpoint("delete", agent, path, checkpoint_id)

    def _judge_copy(self, agent: str, from_path: str, to_path: str | None = None) -> Verdict:
        source = _clean(from_path)
        self._check_changeable(source, _clean(to_path))
        staged = self._staged_view(agent)
        if staged is not None:
            is_folder = staged[0].kind(staged[1], source) == "directory"
        else:
            is_folder = os.path.isdir(os_path(self.root, source))
        if is_folder:
            raise forbidden(
                f"Agents may copy files, not folders ({source!r}): a folder's copy is written "
                "at once, outside any one approval. Copy its files one by one. Nothing was "
                "copied.",
                path=source,
            )
        # The copy's save is judged (held as file.copy), so it must not pass as nested.
        return Verdict(nested_pass=False, copy_of=source)

    def _judge_get(
        self,
        agent: str,
        path: str,
        content: bool = True,
        type: str | None = None,
        format: str | None = None,
        **_options: Any,
    ) -> Verdict:
        api_path = _clean(path)
        self._check_path(api_path)
        staged = self._staged_view(agent)
        if staged is None:
            return Verdict(nested_pass=False)
        view, upper = staged
        model, finish = view.get(upper, api_path, bool(content), type, format)
        # A folder's listing gets each entry: those are merged into it by ``finish``.
        return Verdict(stage=model, finish=finish)

    def _exists(self, agent: str, path: str, kind: str | None) -> Verdict:
        api_path = _clean(path)
        staged = self._staged_view(agent)
        if staged is None or not staged[0].changes_reads(staged[1], api_path):
            return Verdict(nested_pass=False)
        view, upper = staged
        if kind is None:
            return Verdict(stage=lambda: view.kind(upper, api_path) is not None)
        return Verdict(stage=lambda: view.kind(upper, api_path) == kind)

    def _judge_exists(self, agent: str, path: str) -> Verdict:
        return self._exists(agent, path, None)

    def _judge_file_exists(self, agent: str, path: str = "") -> Verdict:
        return self._exists(agent, path, "file")

    def _judge_dir_exists(self, agent: str, path: str) -> Verdict:
        return self._exists(agent, path, "directory")
