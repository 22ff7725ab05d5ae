"""One protected call as the gate handles it: its bound arguments, and its outcome recorded.

Split from :mod:`.gate` and kept lean on purpose: every approved run passes through here, so
the binding skips ``inspect``'s checks when a call simply passes every parameter by position,
and the outcome is recorded by a plain context manager class rather than a generator.
"""

from __future__ import annotations

import inspect
from typing import Any, NamedTuple

from ..core.model import Lease
from ..core.store.approval_store import ApprovalStore

_BY_POSITION = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


class Call(NamedTuple):
    """A call's bound arguments, what was fingerprinted, and the slot it competes in."""

    bound: inspect.BoundArguments
    arguments: dict[str, Any]
    fingerprint: str
    slot: str


class Binder:
    """Binds calls to one signature, defaults applied, as ``Signature.bind`` does."""

    __slots__ = ("_names", "signature")

    def __init__(self, signature: inspect.Signature) -> None:
        self.signature = signature
        parameters = signature.parameters.values()
        # Names when every parameter may be passed by position (no *args, **kwargs or
        # keyword-only ones); None otherwise.
        self._names: tuple[str, ...] | None = (
            tuple(signature.parameters) if all(p.kind in _BY_POSITION for p in parameters) else None
        )

    def bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> inspect.BoundArguments:
        """The bound arguments of a call with ``args`` and ``kwargs`` (TypeError if they do
        not fit the signature)."""
        names = self._names
        if names is not None and not kwargs and len(args) == len(names):
            # Each parameter given once, by position: exactly what bind() would return.
            return inspect.BoundArguments(self.signature, dict(zip(names, args, strict=True)))
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return bound


class OutcomeRecorded:
    """Records the run of a lease as executed, or as failed with the error it raised."""

    __slots__ = ("_lease", "_store")

    def __init__(self, store: ApprovalStore, lease: Lease) -> None:
        self._store = store
        self._lease = lease

    def __enter__(self) -> None:
        return None

    def __exit__(self, _type: object, error: BaseException | None, _tb: object) -> None:
        self._store.finish(self._lease, error)
