"""Agent changes held where the contents manager makes them, not where a request names them.

However an agent's contents request is spelled (a ``type`` missing or written otherwise, a
falsy ``copy_from``, a ``POST`` with ``ext``, a checkpoint route), jupyter_server carries it
out by calling its contents manager: ``save`` (every new, untitled, uploaded, copied or saved
file, folder and notebook), ``rename``, ``delete`` and the checkpoint methods. Those methods are
wrapped on the server's contents manager. While a request of an agent identity runs, each call
is judged from its own arguments, as the manager will act on them: the final path (hidden and
Jupyter-own places are refused) and the bytes that would land. A change waits for a person as
a held request (:mod:`.held_files`, :mod:`.hold`) and runs once after its approval; a
notebook save stays open, with every cell untrusted and the agent's new cells named
(:mod:`.notebook_trust`).

The calls a wrapped method makes into the manager itself (``copy`` calls ``save``; ``save``
makes a notebook's first checkpoint) pass once the outer call was let through. Previews and
fingerprints, which read and diff whole files, are computed off the event loop.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import functools
import inspect
import json
import logging
import os
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from jupyter_server.base.call_context import CallContext
from tornado.websocket import WebSocketHandler

from ...core import errors
from ...core.model import Lease
from . import held_files
from .hold import AgentHold
from .identity import AgentUser, refuse
from .notebook_trust import untrust_notebook
from .routes import forbidden, os_path, secret_path_reason
from .staged_writes import StagedWrites

#: True inside a call the gate let through: the manager's calls into itself pass.
_INSIDE: ContextVar[bool] = ContextVar("jupyter_approvals_contents_inside", default=False)
#: The source of the copy being made (its ``save`` is held as ``file.copy``).
_COPY_OF: ContextVar[str | None] = ContextVar("jupyter_approvals_copy_of", default=None)


@dataclass(frozen=True)
class Verdict:
    """What the gate makes of one call: hold it, or let it through (checked)."""

    #: Builds the held request (off the event loop); None lets the call through unheld.
    hold: Callable[[], held_files.HeldWrite] | None = None
    #: Whether the manager's own calls made inside this one pass (False: they are judged).
    nested_pass: bool = True
    #: The source of a copy, for the ``save`` it makes.
    copy_of: str | None = None
    #: Stages the save in a change set instead (off the event loop) and returns the model the
    #: manager's ``save`` would have: the manager is not called.
    stage: Callable[[], dict[str, Any]] | None = None


def _agent_of_request() -> tuple[Any, str] | None:
    """(handler, agent) when the request being handled is an agent's HTTP request.

    A collaboration room's tasks can run in the context of the websocket that opened the room;
    what rooms save is screened at the room (:mod:`.rooms`), not here.
    """
    handler = CallContext.get(CallContext.JUPYTER_HANDLER)
    if handler is None or isinstance(handler, WebSocketHandler):
        return None
    user = getattr(handler, "_current_user", None)
    if not isinstance(user, AgentUser):
        return None
    return handler, user.agent


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


class ContentsHold:
    """The wrapped methods of one contents manager, and how each judges an agent's call."""

    #: Methods that change what is on disk; each is judged by ``_judge_<name>``.
    HOLD_POINTS = (
        "save",
        "rename",
        "rename_file",
        "delete",
        "delete_file",
        "create_checkpoint",
        "restore_checkpoint",
        "delete_checkpoint",
    )
    #: Methods that only read or forward to the above: their paths are checked.
    CHECKED = ("get", "copy")

    def __init__(
        self,
        hold: AgentHold,
        root: Path,
        secret_dirs: Callable[[], Iterable[Path]],
        log: logging.Logger | logging.LoggerAdapter[Any],
        staging: StagedWrites | None = None,
    ) -> None:
        self.hold = hold
        self._staging = staging
        self.root = root
        self._secret_dirs = secret_dirs
        self.log = log
        self._file_based = True

    def install(self, manager: Any) -> None:
        """Wrap ``manager``'s methods (once)."""
        if getattr(manager, "jupyter_approvals_held", False):
            return
        from jupyter_server.services.contents.fileio import FileManagerMixin

        # Previews and fingerprints read the files below the root: a manager that keeps
        # contents elsewhere cannot be judged, so agents' changes there are refused.
        self._file_based = isinstance(manager, FileManagerMixin)
        for name in (*self.HOLD_POINTS, *self.CHECKED):
            original = getattr(manager, name, None)
            if callable(original):
                setattr(manager, name, self._wrap(name, original))
        manager.jupyter_approvals_held = True

    # -- the wrapper ---------------------------------------------------------------------

    def _wrap(self, name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        judge: Callable[..., Verdict] = getattr(self, f"_judge_{name}")
        signature = inspect.signature(original)
        is_async = inspect.iscoroutinefunction(original)

        @functools.wraps(original)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            found = _agent_of_request()
            if found is None or _INSIDE.get():
                return original(*args, **kwargs)
            handler, agent = found
            try:
                bound = signature.bind(*args, **kwargs)
                bound.apply_defaults()
            except TypeError:
                return original(*args, **kwargs)  # the manager reports its own misuse
            run = self._run_async if is_async else self._run_sync
            return run(handler, agent, judge, original, bound.arguments, args, kwargs)

        wrapper.jupyter_approvals_wrapped = True  # type: ignore[attr-defined]
        return wrapper

    async def _run_async(
        self,
        handler: Any,
        agent: str,
        judge: Callable[..., Verdict],
        original: Callable[..., Any],
        arguments: dict[str, Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        lease = None
        try:
            verdict = judge(agent, **arguments)
            loop = asyncio.get_running_loop()
            if verdict.stage is not None:
                return await loop.run_in_executor(None, verdict.stage)
            if verdict.hold is not None:
                write = await loop.run_in_executor(None, verdict.hold)
                lease = self._lease(write, agent)
        except errors.ApprovalError as exc:
            self._refuse(handler, agent, exc)
        with self._let_through(verdict, lease):
            result = original(*args, **kwargs)
            if inspect.isawaitable(result):
                result = await result
        return result

    def _run_sync(
        self,
        handler: Any,
        agent: str,
        judge: Callable[..., Verdict],
        original: Callable[..., Any],
        arguments: dict[str, Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        lease = None
        try:
            verdict = judge(agent, **arguments)
            if verdict.stage is not None:
                return verdict.stage()
            if verdict.hold is not None:
                lease = self._lease(verdict.hold(), agent)
        except errors.ApprovalError as exc:
            self._refuse(handler, agent, exc)
        with self._let_through(verdict, lease):
            return original(*args, **kwargs)

    @contextlib.contextmanager
    def _let_through(self, verdict: Verdict, lease: Lease | None) -> Iterator[None]:
        inside = _INSIDE.set(True) if verdict.nested_pass or lease is not None else None
        copying = _COPY_OF.set(verdict.copy_of) if verdict.copy_of is not None else None
        try:
            yield
        except BaseException as exc:
            if lease is not None:
                self.hold.ran(lease, exc)
            raise
        else:
            if lease is not None:
                self.hold.ran(lease)
        finally:
            if copying is not None:
                _COPY_OF.reset(copying)
            if inside is not None:
                _INSIDE.reset(inside)

    def _lease(self, write: held_files.HeldWrite, agent: str) -> Lease:
        outcome = self.hold.screen_write(write, agent)
        if not isinstance(outcome, Lease):
            raise held_files.pending_write_error(outcome.id, outcome.fingerprint, write.summary)
        return outcome

    def _refuse(self, handler: Any, agent: str, exc: errors.ApprovalError) -> NoReturn:
        if isinstance(exc, errors.ApprovalAgentForbidden):
            self.log.warning("jupyter-approvals refused agent %s: %s", agent, exc.message)
        refuse(handler, exc)

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
        copy_of = _COPY_OF.get()
        if copy_of is not None and kind == "notebook":
            # A copy is held whatever it copies: the notebook as it would be written.
            data = json.dumps(model.get("content"), sort_keys=True, indent=1).encode("utf-8")
            return Verdict(
                hold=functools.partial(
                    held_files.held_file_write, api_path, data, self.root, agent, copy_of
                )
            )
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
            data = new_bytes(model, api_path)
            if self._staging is not None and copy_of is None:
                staged = self._staging.stage_for(agent, api_path, data)
                if staged is not None:
                    return Verdict(stage=staged)
            return Verdict(
                hold=functools.partial(
                    held_files.held_file_write, api_path, data, self.root, agent, copy_of
                )
            )
        raise forbidden(
            f"An agent's save of {api_path!r} has type {kind!r}; agents save 'file', "
            "'notebook' or 'directory' models. Nothing was written.",
            path=api_path,
        )

    def _judge_rename(self, agent: str, old_path: str, new_path: str) -> Verdict:
        old, new = _clean(old_path), _clean(new_path)
        self._check_changeable(old, new)
        if old == new:
            return Verdict()
        return Verdict(hold=functools.partial(held_files.held_rename, old, new, self.root, agent))

    _judge_rename_file = _judge_rename

    def _judge_delete(self, agent: str, path: str) -> Verdict:
        api_path = _clean(path)
        self._check_changeable(api_path)
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
        if os.path.isdir(os_path(self.root, source)):
            raise forbidden(
                f"Agents may copy files, not folders ({source!r}): a folder's copy is written "
                "at once, outside any one approval. Copy its files one by one. Nothing was "
                "copied.",
                path=source,
            )
        # The copy's save is judged (held as file.copy), so it must not pass as nested.
        return Verdict(nested_pass=False, copy_of=source)

    def _judge_get(self, agent: str, path: str, **_options: Any) -> Verdict:
        self._check_path(_clean(path))
        return Verdict(nested_pass=False)
