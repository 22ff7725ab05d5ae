"""Tell a frontend's decision from kernel code pretending to be one.

A decision counts only while the kernel's main thread is handling the very ``comm_msg`` that
carries it: addressed to the card of that request or to a ``jupyter_approvals`` comm, with
exactly this request id, answer, fingerprint and reason in its data as its sender signed it
(the record :mod:`.verified_messages` takes from the signed frames; the live message dict,
which cell code can edit, is never read for it), and admitted for that decision by the entry
point handling it (:meth:`FrontendGuard.open` consumes the message the
first time it is seen; :meth:`FrontendGuard.admit` follows only once every check of the entry
point passed). A message whose checks failed, or that decided once, can never decide: not
through the entry point, and not through code that runs on the main thread while it is being
handled (a profile or trace hook, a signal handler). When cell code calls a handler directly,
the message being handled is the cell's ``execute_request``; when a thread or a trap widget's
callback tries it while some other frontend message is being handled, that message does not
carry the decision.

Deliberate code can still forge the parent message together with a record of it, or send a
real message through its own connection (docs/security.md, T3); this check stops the careless
and the protocol-curious.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ..core import errors
from ..core.protocol import STAMP_KEY
from .verified_messages import FRONTEND_MESSAGE_TYPE, VerifiedMessage, VerifiedMessages


def current_parent() -> dict[str, Any]:
    """The message the kernel is handling now, or ``{}`` outside a kernel."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency of ipywidgets
        return {}
    shell = get_ipython()
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return {}
    try:
        parent = kernel.get_parent()
    except Exception:
        return {}
    return parent if isinstance(parent, dict) else {}


def current_message_type() -> str | None:
    """``header.msg_type`` of the message being handled, if any."""
    header = current_parent().get("header") or {}
    msg_type = header.get("msg_type") if isinstance(header, dict) else None
    return msg_type if isinstance(msg_type, str) else None


def handling_frontend_message() -> bool:
    """Whether the kernel's main thread is handling a frontend's comm message right now."""
    return (
        threading.current_thread() is threading.main_thread()
        and current_message_type() == FRONTEND_MESSAGE_TYPE
    )


def caller_context() -> dict[str, str | None]:
    """Cell id, the claimed username/session, and the stamped sender of the current message.

    ``agent`` and ``person`` come from the stamp the jupyter-approvals server extension writes
    over whatever a client sent (docs/protocol.md 7.4): which agent sent the code, or which
    person. Code in the kernel can forge it (T3); it is shown, never used to decide.
    """
    parent = current_parent()
    header = parent.get("header") or {}
    metadata = parent.get("metadata") or {}

    def text(value: object) -> str | None:
        return value if isinstance(value, str) and value else None

    stamp = metadata.get(STAMP_KEY) if isinstance(metadata, dict) else None
    stamp = stamp if isinstance(stamp, dict) else {}
    return {
        "cell_id": text(metadata.get("cellId")) if isinstance(metadata, dict) else None,
        "username": text(header.get("username")) if isinstance(header, dict) else None,
        "session": text(header.get("session")) if isinstance(header, dict) else None,
        "agent": text(stamp.get("agent")) if stamp.get("sender") == "agent" else None,
        "person": text(stamp.get("username")) if stamp.get("sender") == "person" else None,
        "person_name": text(stamp.get("display_name")) if stamp.get("sender") == "person" else None,
    }


def _live_comm_id() -> object:
    content = current_parent().get("content") or {}
    return content.get("comm_id") if isinstance(content, dict) else None


class FrontendGuard:
    """The store's decision guard in a kernel (see the module docstring).

    ``comms_for(request_id)`` names the comm ids a decision for that request may arrive on;
    ``on_refused(request_id, why, message_type)`` records a refusal; ``verified`` holds what
    each frontend message carrying a decision said as the session verified it: a decision is
    judged against that record, never against the live message, which cell code can edit.
    """

    def __init__(
        self,
        comms_for: Callable[[str], set[str]],
        on_refused: Callable[[str, str, str | None], None],
        verified: VerifiedMessages,
    ) -> None:
        self._comms_for = comms_for
        self._on_refused = on_refused
        self._verified = verified
        self._opened: dict[str, VerifiedMessage] = {}
        self._admitted: dict[str, tuple[object, ...]] = {}
        self._lock = threading.Lock()

    def open(self) -> str | None:
        """Consume the frontend message being handled now: the verified record of its
        decision, the first time; None if it carries none, was consumed already, or no
        frontend message is being handled."""
        header = current_parent().get("header") or {}
        msg_id = header.get("msg_id") if isinstance(header, dict) else None
        if not isinstance(msg_id, str) or not handling_frontend_message():
            return None
        record = self._verified.take(msg_id)
        if record is None:
            return None
        with self._lock:
            self._opened[msg_id] = record
        return msg_id

    def opened_for(self, request_id: str) -> str | None:
        """The id of a frontend message being handled now whose verified record carries a
        decision of ``request_id``, or None. Never read from the live message, which code
        running meanwhile can edit: only records the session verified count."""
        with self._lock:
            for msg_id, record in self._opened.items():
                if record.decision[0] == request_id:
                    return msg_id
        return None

    def admit(self, msg_id: str, decision: tuple[object, ...]) -> None:
        """Every check of the entry point passed: message ``msg_id`` may make ``decision``
        (request id, answer, fingerprint, reason), once, if its verified record carries it."""
        with self._lock:
            record = self._opened.get(msg_id)
            if record is not None and record.decision == decision:
                self._admitted[msg_id] = decision

    def close(self, msg_id: str) -> None:
        """The entry point is done with ``msg_id``: an admission it did not use lapses."""
        with self._lock:
            self._admitted.pop(msg_id, None)
            self._opened.pop(msg_id, None)

    def __call__(self, request_id: str, decision: str, fingerprint: str, reason: str) -> None:
        """Raise APPROVAL_NOT_FROM_FRONTEND unless the frontend message being handled, as its
        sender signed it, carries this decision and was admitted for it."""
        header = current_parent().get("header") or {}
        msg_type = header.get("msg_type") if isinstance(header, dict) else None
        msg_id = header.get("msg_id") if isinstance(header, dict) else None
        wanted = (request_id, decision, fingerprint, reason)
        why = None
        if threading.current_thread() is not threading.main_thread():
            why = "it was made from a background thread, not while handling a frontend message"
        elif msg_type != FRONTEND_MESSAGE_TYPE:
            why = f"the kernel was handling {msg_type!r}, not a frontend's comm message"
        else:
            with self._lock:
                record = self._opened.get(msg_id) if isinstance(msg_id, str) else None
                admitted = self._admitted.pop(msg_id, None) if isinstance(msg_id, str) else None
            if record is None and _live_comm_id() not in self._comms_for(request_id):
                # (The live message only words the refusal; it never lets anything through.)
                why = "the message being handled was sent to another widget or comm"
            elif record is None:
                why = (
                    "the message being handled does not carry this decision (as its sender "
                    "signed it, it carries none, or it decided already)"
                )
            elif record.comm_id not in self._comms_for(request_id):
                why = "the message being handled was sent to another widget or comm"
            elif record.decision != wanted:
                why = (
                    "the message being handled does not carry this decision (its sender "
                    "signed another)"
                )
            elif admitted != wanted:
                why = (
                    "the message being handled was not admitted for this decision (a check of "
                    "it failed, or it decided already)"
                )
        if why is not None:
            self._on_refused(request_id, why, msg_type if isinstance(msg_type, str) else None)
            raise errors.ApprovalNotFromFrontend(
                "Decisions count only when a person makes them in the notebook UI; this one "
                f"was refused because {why}. Nothing was decided and nothing ran.",
                request_id=request_id,
                message_type=msg_type,
                why=why,
            )
