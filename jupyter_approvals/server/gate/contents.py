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
(:mod:`.notebook_trust`). Under the ``sandbox`` policy file changes are staged in the agent's
change set instead, and its reads see what it staged (:mod:`.contents_judges`).

The calls a wrapped method makes into the manager itself (``copy`` calls ``save``; ``save``
makes a notebook's first checkpoint) pass once the outer call was let through. Previews and
fingerprints, which read and diff whole files, are computed off the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import logging
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any, NoReturn

from jupyter_server.base.call_context import CallContext
from tornado.websocket import WebSocketHandler

from ...core import errors
from ...core.model import Lease
from . import held_files
from .contents_judges import COPYING_FROM, ContentsJudges, Verdict
from .hold import AgentHold
from .identity import AgentUser, refuse
from .staged_writes import StagedWrites

#: True inside a call the gate let through: the manager's calls into itself pass.
_INSIDE: ContextVar[bool] = ContextVar("jupyter_approvals_contents_inside", default=False)


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


class ContentsHold(ContentsJudges):
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
    #: Methods that only read or forward to the above: their paths are checked, and an
    #: agent whose changes are staged reads through them (:mod:`.staged_view`).
    CHECKED = ("get", "copy", "exists", "file_exists", "dir_exists")

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

        def judged(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            """The wrapped call: the manager's own when no agent's request is being handled
            (or inside a call let through), else run as its judge says."""
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

        if is_async:
            # Still a coroutine function: callers such as jupyter_server's preferred_dir
            # check ask inspect whether to await it, and would take a coroutine for True.
            @functools.wraps(original)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                return await judged(args, kwargs)

            async_wrapper.jupyter_approvals_wrapped = True  # type: ignore[attr-defined]
            return async_wrapper

        @functools.wraps(original)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return judged(args, kwargs)

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
        return result if verdict.finish is None else verdict.finish(result)

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
            result = original(*args, **kwargs)
        return result if verdict.finish is None else verdict.finish(result)

    @contextlib.contextmanager
    def _let_through(self, verdict: Verdict, lease: Lease | None) -> Iterator[None]:
        inside = _INSIDE.set(True) if verdict.nested_pass or lease is not None else None
        copying = COPYING_FROM.set(verdict.copy_of) if verdict.copy_of is not None else None
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
                COPYING_FROM.reset(copying)
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
