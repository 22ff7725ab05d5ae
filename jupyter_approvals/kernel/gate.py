"""The gate: ``@protected`` functions run only with a person's approval of exactly that call.

A call computes the fingerprint of its bound arguments (plus the target's current state when
a ``subject`` callable is given), then asks the store: an exact approval is redeemed and the
function runs once inside the mutation lease; otherwise a request is opened (or the identical
pending one reused), its card is displayed and the call raises :class:`ApprovalPending`.
"""

from __future__ import annotations

import functools
import inspect
import itertools
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Generic, ParamSpec, TypeVar, cast

from ..core import errors
from ..core.fingerprint import fingerprint
from ..core.lease import run_approved, run_approved_async
from ..core.model import Lease, RequestInfo
from ..core.structured import Preview
from . import handoff
from .calls import Binder, Call, OutcomeRecorded
from .preview import default_preview, summary_arguments
from .sandbox import in_sandbox, sandbox_effect
from .session import KernelSession
from .waiting import check_can_wait, pending_error

P = ParamSpec("P")
R = TypeVar("R")

Arguments = Mapping[str, Any]
_ACTION_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789._-")
_owners = itertools.count(1)


class ProtectedFunction(Generic[P, R]):
    """A function that runs only after a person approved the exact call. See :func:`protected`."""

    def __init__(
        self,
        fn: Callable[P, R],
        action: str,
        summary: str | Callable[..., str] | None,
        preview: Callable[..., str | Preview] | None,
        subject: Callable[..., Any] | None,
        target: str | Callable[..., Any] | None,
        prepare: Callable[..., Mapping[str, Any]] | None = None,
    ) -> None:
        self.fn = fn
        self.action = action
        self._summary = summary
        self._preview = preview
        self._subject = subject
        self._target = target
        self._prepare_arguments = prepare
        self._signature = inspect.signature(fn)
        self._binder = Binder(self._signature)
        self._is_async = inspect.iscoroutinefunction(fn)
        #: What the card names as the function that will run.
        self.function = f"{fn.__module__}.{fn.__qualname__}"
        # Approvals belong to this very object: another function with the same action and
        # parameters, or this cell run again with a new body, needs its own approval.
        self._owner = f"{self.function}#{next(_owners)}"
        functools.update_wrapper(self, fn)
        # Serve the comm endpoint from the moment a kernel has something protected.
        KernelSession.current()

    def __repr__(self) -> str:
        return f"<protected {self.action!r} {self.fn.__module__}.{self.fn.__qualname__}>"

    # -- the call ------------------------------------------------------------------------

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        """Run if a person approved exactly this call; else show the card and raise.

        For a coroutine function the whole check happens when the returned coroutine is
        awaited, right before the function's body runs.
        """
        if self._is_async:
            return self._call_async(args, kwargs)  # type: ignore[return-value]
        session = KernelSession.current()
        try:
            lease, call = self._claim(session, args, kwargs)
            return self._run(session, lease, call)
        finally:
            handoff.clear()  # what the subject read for this call ends with it

    async def _call_async(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        session = KernelSession.current()
        try:
            lease, call = self._claim(session, args, kwargs)
            coroutine_fn = cast(Callable[..., Awaitable[Any]], self.fn)
            with OutcomeRecorded(session.store, lease):
                return await run_approved_async(
                    lease, coroutine_fn, *call.bound.args, **call.bound.kwargs
                )
        finally:
            handoff.clear()

    def _claim(
        self, session: KernelSession, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[Lease, Call]:
        sandboxed = in_sandbox()
        if sandboxed and sandbox_effect(self.action, {}) == "network":
            raise self._no_network(session)  # before its arguments are even looked at
        call = self._prepare(session, args, kwargs)
        effect = sandbox_effect(self.action, call.arguments) if sandboxed else None
        if effect == "network":
            raise self._no_network(session)
        if effect == "staged":
            # Its effect waits in the kernel's change set: the one approval it needs.
            lease = session.store.stage(
                action=self.action,
                fingerprint=call.fingerprint,
                summary=self._render_summary(call.arguments),
                origin=session.origin(),
                slot=call.slot,
                owner=self._owner,
                function=self.function,
            )
            return lease, call
        outcome = session.store.claim(self.action, call.fingerprint, call.slot, self._owner)
        if isinstance(outcome, Lease):
            return outcome, call
        raise self._pending(session, call, outcome)

    async def wait(self, *args: P.args, **kwargs: P.kwargs) -> Any:
        """In an async cell: show the card, wait for the person's decision, then run.

        Raises the outcome if the person rejects, nobody answers in time, or the content
        changed meanwhile. Fails at once with APPROVAL_WAIT_UNSUPPORTED where the kernel
        cannot deliver the decision while a cell awaits.
        """
        session = KernelSession.current()
        check_can_wait(session.shell)
        while True:
            try:
                if self._is_async:
                    return await self._call_async(args, kwargs)
                return self(*args, **kwargs)
            except errors.ApprovalPending as pending:
                # Returns once the request is decided or ended, or at its deadline at the latest.
                await session.until_ended(pending.details["request_id"], None)

    def withdraw(self, *args: P.args, **kwargs: P.kwargs) -> RequestInfo | None:
        """Give up the request (pending or approved) for exactly this call; nothing will run.

        Returns the withdrawn request, or None if there was none.
        """
        session = KernelSession.current()
        try:
            call = self._prepare(session, args, kwargs, check_journal=False)
        finally:
            handoff.clear()
        info = session.store.find_live(self.action, call.fingerprint, self._owner)
        return session.store.withdraw(info.id) if info is not None else None

    def fingerprint(self, *args: P.args, **kwargs: P.kwargs) -> str:
        """The fingerprint this call would be approved under, without asking anyone."""
        session = KernelSession.current()
        try:
            return self._prepare(session, args, kwargs, check_journal=False).fingerprint
        finally:
            handoff.clear()

    # -- internals -----------------------------------------------------------------------

    def _prepare(
        self,
        session: KernelSession,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        check_journal: bool = True,
    ) -> Call:
        if check_journal:
            session.check_journal_location()
        bound = self._binder.bind(args, kwargs)
        if self._prepare_arguments is not None:
            # Checked and normalized once; the fingerprint, the preview and the run all use
            # exactly what it returns.
            prepared = dict(self._prepare_arguments(**bound.arguments))
            bound = inspect.BoundArguments(self._signature, prepared)
        arguments = dict(bound.arguments)
        subject: dict[str, Any] = {"arguments": arguments}
        if self._subject is not None:
            subject["state"] = self._subject(**arguments)
        slot = self.action
        if self._target is not None:
            key = (
                arguments.get(self._target)
                if isinstance(self._target, str)
                else self._target(**arguments)
            )
            slot = f"{self.action}\x00{fingerprint(key)}"
        return Call(bound=bound, arguments=arguments, fingerprint=fingerprint(subject), slot=slot)

    def _no_network(self, session: KernelSession) -> errors.ApprovalSandboxNoNetwork:
        refused = errors.ApprovalSandboxNoNetwork(
            f"{self.action} needs the network, which is off in this sandboxed kernel; nothing "
            "ran. Ask the person to run it in a kernel of their own.",
            action=self.action,
        )
        session.journal_refusal(f"action:{self.action}", refused.code, action=self.action)
        return refused

    def _run(self, session: KernelSession, lease: Lease, call: Call) -> R:
        with OutcomeRecorded(session.store, lease):
            result = run_approved(lease, self.fn, *call.bound.args, **call.bound.kwargs)
            if inspect.isawaitable(result) or inspect.isgenerator(result):
                # Its work would happen later, outside the approved run: refuse it.
                close = getattr(result, "close", None)
                if callable(close):
                    close()
                raise TypeError(
                    f"{self.function} returned {type(result).__name__} instead of doing its "
                    "work; a protected function must finish its work before it returns."
                )
            return result

    def _pending(
        self, session: KernelSession, call: Call, existing: RequestInfo | None
    ) -> errors.ApprovalPending:
        info = existing
        if info is None:
            try:
                # The summary first: a file operation's summary reads the state the subject
                # read, which its preview then takes (kernel/handoff.py).
                summary = self._render_summary(call.arguments)
                preview = self._render_preview(call.arguments)
                info, _created = session.store.open_request(
                    action=self.action,
                    fingerprint=call.fingerprint,
                    summary=summary,
                    preview=preview.text,
                    structured=preview.structured,
                    origin=session.origin(),
                    slot=call.slot,
                    owner=self._owner,
                    function=self.function,
                )
            except errors.ApprovalTooManyPending as exc:
                session.journal_refusal(f"action:{self.action}", exc.code, action=self.action)
                raise
        session.show(info)
        return pending_error(info)

    def _render_summary(self, arguments: Arguments) -> str:
        if self._summary is None:
            return f"Run {self.fn.__qualname__}"
        if callable(self._summary):
            return str(self._summary(**arguments))
        try:
            return self._summary.format(**summary_arguments(arguments))
        except (KeyError, IndexError, ValueError, AttributeError) as exc:
            return f"{self._summary} (summary could not be filled in: {exc!r})"

    def _render_preview(self, arguments: Arguments) -> Preview:
        if self._preview is None:
            return Preview(default_preview(arguments))
        made = self._preview(**arguments)
        return made if isinstance(made, Preview) else Preview(str(made))


def protected(
    action: str,
    *,
    summary: str | Callable[..., str] | None = None,
    preview: Callable[..., str | Preview] | None = None,
    subject: Callable[..., Any] | None = None,
    target: str | Callable[..., Any] | None = None,
    prepare: Callable[..., Mapping[str, Any]] | None = None,
) -> Callable[[Callable[P, R]], ProtectedFunction[P, R]]:
    """Mark a function protected: it runs only after a person approved exactly that call.

    ``action`` names the operation ("table.write"); an approval is for one action only.
    ``summary`` is a format string over the argument names (or a callable taking them);
    ``preview`` builds the text a person judges (default: the arguments, shortened), or a
    :class:`~jupyter_approvals.core.structured.Preview` with a structured form beside it;
    ``subject`` returns the target's current state (say, a ``FileContent`` of the file being
    replaced) so a change of the target after the preview refuses the run;
    ``target`` (an argument name or callable) tells which calls compete for one approval: an
    approval is spent, without running, by a call of the same action and target whose
    content differs. Without it every call of the action shares one target;
    ``prepare`` receives the bound arguments first and returns them checked and normalized
    (same names); it raises ApprovalInvalidArgument to refuse before anything is asked, and
    everything after it (fingerprint, preview, the run) sees only what it returned.
    """
    if not action or set(action) - _ACTION_CHARS or len(action) > 100:
        raise ValueError(
            f"action {action!r} must be 1-100 characters of lower-case letters, digits, '.', "
            "'_' or '-' (for example 'table.write')"
        )

    def decorate(fn: Callable[P, R]) -> ProtectedFunction[P, R]:
        if inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
            raise TypeError(
                f"{fn.__qualname__} is a generator function; its work would run after the "
                "approved call returned. Protect a function that does its work when called."
            )
        return ProtectedFunction(fn, action, summary, preview, subject, target, prepare)

    return decorate


def pending() -> list[RequestInfo]:
    """Read-only snapshots of this kernel's pending requests, oldest first."""
    return KernelSession.current().store.pending()
