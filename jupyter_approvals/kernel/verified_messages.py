"""What each frontend message carrying a decision said, as the kernel's session verified it.

``kernel.get_parent()`` is the live dict of the message being handled, and code running in the
kernel while it is handled (a profile or trace hook, a widget observer, a comm handler of its
own) can change what it says: turn a listing into a decision, a person's Reject into an
Approve, the approval of one sidebar row into another's. So the decision guard
(:mod:`.frontend`) never reads that dict for what a message decides. It reads the record taken
here, from the message's signed frames, before the session's own ``deserialize`` checks their
signature and builds the dict that handlers and hooks then see.

The record is kept only for ``comm_msg`` messages whose data carries a decision, and only when
the session accepted the message (its signature matched); each is taken once, and a message
sent again under an id seen before (re-signed with other metadata) records nothing. Code in the
kernel can still replace this wrapper or the session's key (T3, docs/security.md): this stops
the simple rewrites, it is no boundary.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.decision import decision_payload

FRONTEND_MESSAGE_TYPE = "comm_msg"
#: Records kept at most (messages are handled in order: only the latest few matter).
_KEPT = 64
#: Message ids remembered as seen, so a message sent again under its id records nothing.
_SEEN_KEPT = 1000
#: Frames of a message after its routing identities: signature, header, parent header,
#: metadata, content (docs of the Jupyter messaging protocol).
_HEADER, _CONTENT = 1, 4

#: (request id, decision, fingerprint, reason), as a message carries them.
Decision = tuple[object, object, object, object]


@dataclass(frozen=True)
class VerifiedMessage:
    """One frontend message carrying a decision, as its signed bytes said."""

    msg_id: str
    comm_id: object
    decision: Decision


def _frame_bytes(frame: object) -> bytes:
    if isinstance(frame, bytes):
        return frame
    inner = getattr(frame, "bytes", None)  # a zmq.Frame (messages read without copying)
    if isinstance(inner, bytes):
        return inner
    return bytes(memoryview(frame))  # type: ignore[arg-type]


class VerifiedMessages:
    """Records of the decisions frontend messages carried, taken from their signed frames."""

    def __init__(self) -> None:
        self._records: OrderedDict[str, VerifiedMessage] = OrderedDict()
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()
        self.installed = False

    def install(self, session: Any) -> None:
        """Record, from now on, what each message ``session`` accepts carries (once)."""
        if self.installed:
            return
        original: Callable[..., Any] = session.deserialize
        unpack: Callable[[bytes], Any] = session.unpack

        def deserialize(msg_list: Sequence[object], *args: Any, **kwargs: Any) -> Any:
            record = self._read(msg_list, unpack)
            message = original(msg_list, *args, **kwargs)  # checks the signature, or raises
            if record is not None:
                self._keep(record)
            return message

        session.deserialize = deserialize
        self.installed = True

    def _keep(self, record: VerifiedMessage) -> None:
        with self._lock:
            if record.msg_id in self._seen:
                return  # sent again under an id that decided (or tried to): it records nothing
            self._seen[record.msg_id] = None
            self._records[record.msg_id] = record
            while len(self._seen) > _SEEN_KEPT:
                self._seen.popitem(last=False)
            while len(self._records) > _KEPT:
                self._records.popitem(last=False)

    @staticmethod
    def _read(msg_list: Sequence[object], unpack: Callable[[bytes], Any]) -> VerifiedMessage | None:
        try:
            content_frame = _frame_bytes(msg_list[_CONTENT])
            if b"decide" not in content_frame:  # no decision: nothing worth a second parse
                return None
            header = unpack(_frame_bytes(msg_list[_HEADER]))
            if not isinstance(header, dict) or header.get("msg_type") != FRONTEND_MESSAGE_TYPE:
                return None
            msg_id = header.get("msg_id")
            content = unpack(content_frame)
        except (IndexError, TypeError, ValueError, json.JSONDecodeError):
            return None
        if not isinstance(msg_id, str) or not isinstance(content, dict):
            return None
        payload = decision_payload(content.get("data"))
        if payload is None:
            return None
        decision = (
            payload.get("id"),
            payload.get("decision"),
            payload.get("fingerprint"),
            payload.get("reason", ""),
        )
        return VerifiedMessage(msg_id, content.get("comm_id"), decision)

    def take(self, msg_id: object) -> VerifiedMessage | None:
        """The record of ``msg_id``, consumed: a message decides at most once."""
        if not isinstance(msg_id, str):
            return None
        with self._lock:
            return self._records.pop(msg_id, None)
