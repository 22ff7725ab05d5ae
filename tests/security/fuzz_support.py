"""What the fuzz tests of the decision paths share: an approvals kernel played in this process,
the mutations of a valid decision, and the rule that says which mutated messages may decide.

:class:`InProcessKernel` runs one kernel's approvals session (store, journal, cards, the comm
endpoint) in the test's own process. The kernel's side of the wire is played by hand, the way
ipykernel does it: a ``comm_msg`` is dispatched through the comm manager while the kernel's
"current parent" is that very message, on the main thread. Each provenance of
:data:`PROVENANCES` changes exactly that: who calls the handler, on which thread, and which
message the kernel is handling meanwhile. The session's clock is a manual one, so a person's
reading time costs no real time.

A :class:`Mutation` describes how one valid decision (right request id, right fingerprint) is
changed; :func:`verdict` says what the documented contract (docs/protocol.md 3 and 4) allows
for it: ``"decides"`` (a genuine, timely, well-formed decision from the UI: it must be applied),
``"never"`` (it must not decide anything) or ``"either"`` (a genuine decision whose extra
fields the kernel may treat as suspect: refusing is fine, and so is applying it).
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import shutil
import tempfile
import threading
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from unittest import mock

import comm
import ipykernel.connect
import ipykernel.ipkernel  # noqa: F401 - it replaces comm's factories when first imported
from comm.base_comm import BaseComm, CommManager
from hypothesis import strategies as st
from jupyter_client.session import Session

import jupyter_approvals as ja
from jupyter_approvals.core.decision import DECISIONS
from jupyter_approvals.core.policy import (
    MAX_REASON_CHARS,
    MAX_REQUEST_TIMEOUT_S,
    MIN_ANSWER_S,
    ManualClock,
)
from jupyter_approvals.core.project import STATE_DIR_ENV
from jupyter_approvals.core.protocol import COMM_TARGET, SHOWN_FIELDS
from jupyter_approvals.kernel.session import KernelSession

#: Every code a refused decision or message may carry (docs/protocol.md 3.3, 3.4, 4).
#: Set by `make test-fast` to a fraction: each property then runs that share of its examples
#: (at least 50), for a quick loop. `make test`, which CI runs, leaves it unset: every example.
EXAMPLES_SCALE_ENV = "JPA_FUZZ_EXAMPLES_SCALE"


def scaled_examples(examples: int) -> int:
    """``examples``, or the share of them :data:`EXAMPLES_SCALE_ENV` asks for."""
    scale = float(os.environ.get(EXAMPLES_SCALE_ENV) or 1.0)
    return examples if scale >= 1.0 else max(50, int(examples * scale))


REFUSAL_CODES = frozenset(
    {
        "APPROVAL_MALFORMED_DECISION",
        "APPROVAL_MALFORMED_MESSAGE",
        "APPROVAL_TOO_LARGE",
        "APPROVAL_NOT_FROM_FRONTEND",
        "APPROVAL_UNKNOWN_REQUEST",
        "APPROVAL_TIMED_OUT",
        "APPROVAL_WITHDRAWN",
        "APPROVAL_ALREADY_DECIDED",
        "APPROVAL_FINGERPRINT_MISMATCH",
        "APPROVAL_AUTO_ANSWERED",
        "APPROVAL_KERNEL_UNAVAILABLE",
    }
)
#: Statuses a request may have after a message that decided nothing.
UNDECIDED = frozenset({"pending", "auto_answered", "timed_out", "dismissed"})

# -- mutations of a valid decision -------------------------------------------------------

#: Who hands the message to the kernel's handler, and what the kernel is handling meanwhile.
#: Only ``frontend`` is the genuine path.
PROVENANCES = (
    "frontend",  # the kernel dispatches the frontend's comm_msg: the parent is that message
    "cell",  # cell code calls the handler itself: the parent is the cell's execute_request
    "thread",  # a background thread calls the handler while the main thread handles the msg
    "other_message",  # a hook runs the handler while the kernel handles another comm_msg
    "replay",  # the frontend's message arrives twice (the same msg_id), 5 s apart
)

#: JSON values of every type, for fields given the wrong type.
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**20, max_value=10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=6,
)

#: Text that looks like, but is not, one of the two answers.
_NEAR_ANSWERS = st.sampled_from(
    [
        "Approve",
        "APPROVE",
        " approve",
        "approve ",
        "approve\n",
        "approve\x00",
        "approved",
        "yes",
        "\uff41\uff50\uff50\uff52\uff4f\uff56\uff45",  # fullwidth letters
        "\u0430pprove",  # Cyrillic a
        "appro\u200bve",
        "reject approve",
        "",
    ]
)


def near_fingerprints(real: str) -> list[str]:
    """Fingerprints one step away from ``real``: each must be refused."""
    digest = real.removeprefix("sha256:")
    flipped = ("0" if digest[0] != "0" else "1") + digest[1:]
    return [
        "sha256:" + digest.upper(),
        "SHA256:" + digest,
        digest,
        real[:19],  # the short form a card shows
        real + "\n",
        " " + real,
        real + "0",
        "sha256:" + flipped,
        "sha256:" + digest[:-1] + "\u0660",  # an Arabic-Indic digit
        "sha512:" + digest,
        "sha256:" + "0" * 64,
    ]


#: ``not_after`` values and what a kernel must make of them. ``future``: the deadline has not
#: passed, the decision may count; ``past``: refused (APPROVAL_KERNEL_UNAVAILABLE); ``bad``:
#: not a time with a time zone (APPROVAL_MALFORMED_DECISION).
def _future(form: str) -> str:
    moment = datetime.now(timezone.utc) + timedelta(hours=2)
    return moment.strftime(form)


def _past(form: str) -> str:
    moment = datetime.now(timezone.utc) - timedelta(hours=2)
    return moment.strftime(form)


NOT_AFTER_FORMS: dict[str, tuple[str, Any]] = {
    "absent": ("future", None),
    "null": ("future", None),
    "future-z": ("future", lambda: _future("%Y-%m-%dT%H:%M:%S.000Z")),
    "future-offset": ("future", lambda: _future("%Y-%m-%dT%H:%M:%S+00:00")),
    "future-far": ("future", lambda: "9999-12-31T23:59:59Z"),
    "future-shifted": (
        "future",
        lambda: (
            datetime.now(timezone(timedelta(hours=5, minutes=30))) + timedelta(hours=2)
        ).isoformat(),
    ),
    "past-z": ("past", lambda: _past("%Y-%m-%dT%H:%M:%S.000Z")),
    "past-offset": (
        "past",
        lambda: (datetime.now(timezone(timedelta(hours=-7))) - timedelta(hours=2)).isoformat(),
    ),
    "past-epoch": ("past", lambda: "1970-01-01T00:00:00Z"),
    "past-year-one": ("past", lambda: "0001-01-01T00:00:00+00:00"),
    "no-zone": ("bad", lambda: _future("%Y-%m-%dT%H:%M:%S")),
    "date-only": ("bad", lambda: _future("%Y-%m-%d")),
    "epoch-number": ("bad", lambda: 4102444800),
    "epoch-float": ("bad", lambda: 4102444800.5),
    "epoch-text": ("bad", lambda: "4102444800"),
    "words": ("bad", lambda: "tomorrow"),
    "empty": ("bad", lambda: ""),
    "bool": ("bad", lambda: True),
    "list": ("bad", lambda: [_future("%Y-%m-%dT%H:%M:%SZ")]),
    "object": ("bad", lambda: {"not_after": _future("%Y-%m-%dT%H:%M:%SZ")}),
    "nan": ("bad", lambda: math.nan),
    "month-13": ("bad", lambda: "2030-13-01T00:00:00Z"),
    "leap-second": ("bad", lambda: "2030-06-30T23:59:60Z"),
    "hour-24": ("bad", lambda: "2030-06-30T24:00:00Z"),
    "zone-too-far": ("bad", lambda: "2030-06-30T10:00:00+25:00"),
    "arabic-digits": (
        "bad",
        lambda: "\u0662\u0660\u0663\u0660-\u0660\u0666-\u0663\u0660T10:00:00Z",
    ),
    "huge-year": ("bad", lambda: "99999-01-01T00:00:00Z"),
}

#: How long after the card was shown the answer comes (seconds on the session's clock), and
#: whether a person could have read it by then.
DELAYS = {
    "instant": 0.0,
    "quick": 0.4,
    "just-too-quick": MIN_ANSWER_S - 0.001,
    "reading-floor": MIN_ANSWER_S,
    "person": 2.5,
    "slow": 300.0,
    "after-timeout": MAX_REQUEST_TIMEOUT_S + 1,
}

#: Fields a frontend message may carry besides the documented ones (ignored by the kernel),
#: including names a forger would try.
_EXTRA_NAMES = st.one_of(
    st.sampled_from(
        [
            "approved",
            "status",
            "latency_ms",
            "shown_at",
            "channel_override",
            "__proto__",
            "constructor",
            "by",
            "person",
            "jupyter_approvals",
            "sender",
            "ok",
            "code",
            "v",
        ]
    ),
    st.text(min_size=1, max_size=12),
)

_FIELDS = ("op", "id", "decision", "fingerprint", "reason")
#: A shown field changed by one invisible step (a zero-width space, one more, or for the
#: structured preview another document around it).
_TWEAK = "<tweak>"

#: Reasons a person could type: any text within the limit, unicode of every category
#: (lone surrogates included: JSON can carry them as escapes).
reasons = st.one_of(
    st.just(""),
    st.text(max_size=60),
    st.text(alphabet=st.characters(codec=None, categories=None), max_size=40),
    st.sampled_from(["\u202eevil", "\ud800", "a\x00b", "⟦U+0041⟧", "\r\n", "\U0001f600" * 50]),
    st.integers(min_value=MAX_REASON_CHARS - 2, max_value=MAX_REASON_CHARS).map(lambda n: "r" * n),
)


@dataclass
class Mutation:
    """How one valid decision is changed before it is sent."""

    decision: str = "approve"
    provenance: str = "frontend"
    delay: str = "person"
    not_after: str = "absent"
    #: field -> ("value", v) a new value, ("drop",) removed, ("near",) a look-alike value,
    #: ("other_request",) the id or fingerprint of another pending request
    fields: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    extras: dict[str, Any] = field(default_factory=dict)
    reason: Any = ""
    channel: Any = "sidebar"
    decided_by: Any = None
    #: an over-large part: None, "reason" (past the reason limit) or "padding" (past 64 KiB)
    huge: str | None = None
    #: cards only: shown field -> its new value (or _TWEAK); drop_shown leaves ``shown`` out
    shown: dict[str, Any] = field(default_factory=dict)
    drop_shown: bool = False
    #: cards only: send it to the other request's card
    wrong_card: bool = False


def _field_change(name: str) -> st.SearchStrategy[tuple[Any, ...]]:
    options: list[st.SearchStrategy[tuple[Any, ...]]] = [
        st.just(("drop",)),
        json_values.map(lambda v: ("value", v)),
    ]
    if name in ("decision", "fingerprint", "id"):
        options.append(st.just(("near",)))
    if name in ("fingerprint", "id"):
        options.append(st.just(("other_request",)))
    if name == "op":
        ops = st.sampled_from(["Decide", "decide ", "list", "dismiss", ""])
        options.append(ops.map(lambda v: ("value", v)))
    return st.one_of(*options)


# Strategies are built once: building one costs more than drawing from it.
_FIELD_CHANGES = {name: _field_change(name) for name in _FIELDS}
_PICK = {
    "decision": st.sampled_from(["approve", "reject"]),
    "provenance": st.sampled_from(PROVENANCES),
    "delay": st.sampled_from(list(DELAYS)),
    "not_after": st.sampled_from(list(NOT_AFTER_FORMS)),
    "fields": st.lists(st.sampled_from(_FIELDS), max_size=2, unique=True),
    "extras": st.dictionaries(_EXTRA_NAMES, json_values, max_size=3),
    "bad_reason": json_values.filter(lambda v: not isinstance(v, str)),
    "channel": st.one_of(st.sampled_from(["server", "comm", "card", "Sidebar"]), json_values),
    "decided_by": st.one_of(st.text(max_size=300), json_values),
    "huge": st.sampled_from([None] * 8 + ["reason", "padding"]),
    "shown_fields": st.lists(st.sampled_from(SHOWN_FIELDS), max_size=2, unique=True),
    "shown_value": st.one_of(st.just(_TWEAK), json_values),
    "one_in_4": st.integers(0, 3).map(lambda n: n == 0),
    "one_in_8": st.integers(0, 7).map(lambda n: n == 0),
    "one_in_10": st.integers(0, 9).map(lambda n: n == 0),
}


@st.composite
def mutations(draw: st.DrawFn, card: bool = False, genuine: bool = False) -> Mutation:
    """A valid decision with zero or more of its parts changed (``genuine``: always delivered
    by the frontend itself, as over a real kernel's wire)."""
    pick = _PICK
    m = Mutation(
        decision=draw(pick["decision"]),
        provenance="frontend" if genuine else draw(pick["provenance"]),
        delay=draw(pick["delay"]),
        not_after=draw(pick["not_after"]),
        reason=draw(reasons),
    )
    for name in draw(pick["fields"]):
        m.fields[name] = draw(_FIELD_CHANGES[name])
    if draw(st.booleans()):
        m.extras = draw(pick["extras"])
    if draw(pick["one_in_10"]):
        m.reason = draw(pick["bad_reason"])
    if draw(pick["one_in_4"]):
        m.channel = draw(pick["channel"])
    if draw(pick["one_in_4"]):
        m.decided_by = draw(pick["decided_by"])
    m.huge = draw(pick["huge"])
    if card:
        m.drop_shown = draw(pick["one_in_4"])
        for name in draw(pick["shown_fields"]):
            m.shown[name] = draw(pick["shown_value"])
        m.wrong_card = draw(pick["one_in_8"])
    return m


@dataclass
class Target:
    """A pending request as its card displays it."""

    request_id: str
    fingerprint: str
    shown: dict[str, Any]
    #: when its card was shown (the session's monotonic clock; 0 for a real kernel's)
    shown_at: float = 0.0


def build(m: Mutation, target: Target, other: Target, card: bool = False) -> dict[str, Any]:
    """The message a frontend sends for ``target`` (``other`` is another pending request):
    the endpoint's ``decide`` data, or a card's ``custom`` content."""
    message: dict[str, Any] = {
        "op": "decide",
        "id": target.request_id,
        "decision": m.decision,
        "fingerprint": target.fingerprint,
        "reason": m.reason,
    }
    if not card:
        message["channel"] = m.channel
        if m.decided_by is not None:
            message["decided_by"] = m.decided_by
    make = NOT_AFTER_FORMS[m.not_after][1]
    if m.not_after != "absent":
        message["not_after"] = None if make is None else make()
    for name, change in m.fields.items():
        if change[0] == "drop":
            message.pop(name, None)
        elif change[0] == "value":
            message[name] = change[1]
        elif change[0] == "near":
            if name == "fingerprint":
                near = near_fingerprints(target.fingerprint)
                message[name] = near[int(target.request_id[:4], 16) % len(near)]
            elif name == "decision":
                message[name] = "Approve" if m.decision == "approve" else " reject"
            else:
                message[name] = target.request_id.upper() + "\u200b"
        elif change[0] == "other_request":
            message[name] = other.request_id if name == "id" else other.fingerprint
    for key, value in m.extras.items():
        message.setdefault(key, value)
    if m.huge == "reason":
        message["reason"] = "x" * (MAX_REASON_CHARS + 1)
    elif m.huge == "padding":
        message["padding"] = "p" * (70 * 1024)
    if card:
        shown = dict(target.shown)
        for name, value in m.shown.items():
            if value != _TWEAK:
                shown[name] = value
            elif isinstance(shown[name], int):
                shown[name] += 1
            elif isinstance(shown[name], str):
                shown[name] += "\u200b"
            else:  # the structured preview (or its absence): another document
                shown[name] = {"version": 1, "shown": shown[name], "notes": ["\u200b"]}
        if not m.drop_shown:
            message["shown"] = shown
    return message


def verdict(
    m: Mutation,
    message: dict[str, Any],
    request: Target,
    elapsed: float,
    card_of: str | None = None,
) -> str:
    """What the contract allows ``message`` to do to ``request``: "decides", "never" or
    "either" (module docstring). ``elapsed``: seconds since the request's card was shown;
    ``card_of``: the request whose card received the message (None: it came on the
    endpoint). Written from docs/protocol.md, not from the code."""
    # A replayed message is the frontend's own the first time: only its first delivery may
    # decide (the tests check that the second is refused).
    if m.provenance not in ("frontend", "replay"):
        return "never"
    if not MIN_ANSWER_S <= elapsed < MAX_REQUEST_TIMEOUT_S:
        return "never"
    if m.huge == "reason" or (m.huge == "padding" and card_of is None):
        return "never"
    # ``not_after`` belongs to the endpoint's decide (3.3); the card's message has none (4), so
    # there it is an extra field, which the card may ignore or honour.
    # What arrived counts: a browser sends NaN as null, which is no deadline.
    late = message.get("not_after") is not None and NOT_AFTER_FORMS[m.not_after][0] != "future"
    if late and card_of is None:
        return "never"
    exact = {"op": "decide", "id": request.request_id, "fingerprint": request.fingerprint}
    for name, value in exact.items():
        if type(message.get(name)) is not str or message[name] != value:
            return "never"
    if type(message.get("decision")) is not str or message["decision"] not in DECISIONS:
        return "never"
    reason = message.get("reason", "")
    if type(reason) is not str or len(reason) > MAX_REASON_CHARS:
        return "never"
    if any("\ud800" <= char <= "\udfff" for char in reason):  # no text a person typed
        return "never"
    if card_of is not None:
        shown = message.get("shown")
        if card_of != request.request_id or not isinstance(shown, dict):
            return "never"
        if any(not _same_json(shown.get(n), request.shown[n]) for n in SHOWN_FIELDS):
            return "never"
        if late or m.huge == "padding":  # the 64 KiB limit is the endpoint's (3.4)
            return "either"
    elif message.get("method") == "custom":
        # Extra fields are allowed (fields may be added later); one named like the widget
        # protocol's wrapper makes the message look like a card's: either outcome is fine.
        return "either"
    return "decides"


def as_browser_sends(value: Any) -> Any:
    """``value`` as it arrives after a browser's ``JSON.stringify``: NaN and the infinities
    become null (jupyter_client refuses to send them at all)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: as_browser_sends(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_browser_sends(v) for v in value]
    return value


def _same_json(a: object, b: object) -> bool:
    """Equal as the kernel compares them after JSON: ``1 == 1.0 == True`` in Python too."""
    return bool(a == b)


# -- the kernel in this process ----------------------------------------------------------


class _Events:
    def trigger(self, _name: str) -> None:
        """The comm layer triggers pre/post_execute around handlers; nothing listens here."""

    def register(self, _name: str, _callback: Any) -> None:
        """The session listens for cells that run again (pre_run_cell); none runs here."""

    def unregister(self, _name: str, _callback: Any) -> None:
        """A session that ends stops listening."""


class _Kernel:
    """The parts of an ipykernel the approvals session reads: the message being handled, and
    the session that reads (and verifies) every message off the wire."""

    def __init__(self) -> None:
        self.parent: dict[str, Any] = {}
        self.session = Session(key=b"in-process", username="fuzz")

    def receive(self, msg: dict[str, Any]) -> None:
        """Read ``msg`` as the kernel reads it off its socket: signed, then deserialized by
        its session (which drops a byte-for-byte duplicate, as a real kernel does)."""
        with warnings.catch_warnings():
            # Data JSON cannot carry (NaN, ...): no frontend can send it; nothing is recorded.
            warnings.simplefilter("error")
            try:
                frames = self.session.serialize(msg)[1:]  # after the delimiter
                self.session.deserialize(frames)
            except (ValueError, TypeError, UserWarning):
                return

    def get_parent(self, channel: str | None = None) -> dict[str, Any]:
        return self.parent


class _Shell:
    def __init__(self) -> None:
        self.kernel = _Kernel()
        self.events = _Events()
        self.config = None


class InProcessKernel:
    """One kernel's approvals session in this process (see the module docstring).

    Use as a context manager. ``sent`` collects every message the kernel side published:
    ``(comm_id, msg_type, data)``.
    """

    def __init__(self, project: Path, state_dir: Path) -> None:
        self.project = project
        self.state_dir = state_dir
        self.clock = ManualClock()
        self.shell = _Shell()
        self.manager = CommManager()
        self.sent: list[tuple[str, str, Any]] = []
        self._stack = contextlib.ExitStack()
        self.session: KernelSession | None = None
        self._asks = 0
        self._numbers: dict[str, int] = {}

    def __enter__(self) -> InProcessKernel:
        sent = self.sent

        class RecordingComm(BaseComm):
            def publish_msg(
                self,
                msg_type: str,
                data: Any = None,
                metadata: Any = None,
                buffers: Any = None,
                **keys: Any,
            ) -> None:
                sent.append((self.comm_id, msg_type, data))

        stack = self._stack
        stack.enter_context(mock.patch.object(comm, "create_comm", RecordingComm))
        stack.enter_context(mock.patch.object(comm, "get_comm_manager", return_value=self.manager))
        import IPython
        import IPython.display

        stack.enter_context(mock.patch.object(IPython, "get_ipython", return_value=self.shell))
        stack.enter_context(mock.patch.object(IPython.display, "display"))
        session = KernelSession(
            self.shell,
            clock=self.clock,
            environ={STATE_DIR_ENV: str(self.state_dir)},
            cwd=self.project,
        )
        self.session = KernelSession.install(session)
        stack.callback(self.session.close)

        @ja.protected("fuzz.write", summary="Write {name}")
        def write(name: str, text: str) -> str:
            raise AssertionError(f"a fuzzed decision ran {name}")

        self._write = write
        return self

    def __exit__(self, *exc: object) -> None:
        with KernelSession._current_lock:
            if KernelSession._current is self.session:
                KernelSession._current = None
        self._stack.close()

    # -- requests and cards

    def ask(self) -> Target:
        """A protected call that must ask; its card is shown now (on the session's clock)."""
        self._asks += 1
        try:
            self._call(self._asks)
        except ja.ApprovalPending as pending:
            request_id = pending.details["request_id"]
            self._numbers[request_id] = self._asks
            fingerprint = pending.details["fingerprint"]
            return Target(request_id, fingerprint, self.shown(request_id), self.clock.monotonic())
        raise AssertionError("the protected call did not ask")

    def retry(self, target: Target) -> None:
        """Make ``target``'s call again, with the same arguments."""
        self._call(self._numbers[target.request_id])

    def _call(self, number: int) -> None:
        self._write(f"target-{number}.txt", "content \u202e")

    def bystander(self) -> Target:
        """A request that stays pending across examples (a new one once it ended): fuzzed
        messages aimed at other requests must leave it alone."""
        kept = getattr(self, "_bystander", None)
        if kept is None or self.status(kept.request_id) != "pending":
            kept = self._bystander = self.ask()
        return kept

    def end_live(self) -> None:
        """Withdraw every request still pending or approved but the bystander: the next
        example starts clean."""
        assert self.session is not None
        kept = getattr(self, "_bystander", None)
        self.sent.clear()  # what an example published is checked by then
        for info in self.session.store.live():
            if kept is None or info.id != kept.request_id or info.status.value != "pending":
                self.session.store.withdraw(info.id)

    def status(self, request_id: str) -> str:
        assert self.session is not None
        info = self.session.store.get(request_id)
        assert info is not None
        return info.status.value

    def card(self, request_id: str) -> Any:
        assert self.session is not None
        return self.session.cards[request_id]

    def shown(self, request_id: str) -> dict[str, Any]:
        """What the card view displays (its synced state), as card.js sends it."""
        card = self.card(request_id)
        return {name: getattr(card, name) for name in SHOWN_FIELDS}

    # -- the wire

    def open_endpoint(self) -> str:
        """Open a ``jupyter_approvals`` comm as a frontend does; return its id."""
        comm_id = uuid.uuid4().hex
        msg = _message("comm_open", {"comm_id": comm_id, "target_name": COMM_TARGET, "data": {}})
        with self._handling(msg):
            self.manager.comm_open(None, None, msg)
        return comm_id

    def deliver(
        self, comm_id: str, data: Any, provenance: str = "frontend", other_comm: str = ""
    ) -> None:
        """Hand ``data`` to the kernel as a ``comm_msg`` to ``comm_id``, by ``provenance``."""
        trap = _LogTrap()
        logging.getLogger().addHandler(trap)
        try:
            self._deliver(comm_id, data, provenance, other_comm)
        finally:
            logging.getLogger().removeHandler(trap)
        crashes = [
            f"{r.name}: {r.getMessage()} {r.exc_info[1]!r}" if r.exc_info else r.getMessage()
            for r in trap.records
        ]
        assert not crashes, f"a handler crashed on {data!r}: {crashes}"

    def _deliver(self, comm_id: str, data: Any, provenance: str, other_comm: str) -> None:
        msg = _message("comm_msg", {"comm_id": comm_id, "data": data})
        target = self.manager.get_comm(comm_id)
        if target is None:  # the kernel drops messages to comms it does not have
            return
        # Handlers are called directly, not through CommManager.comm_msg (which would log and
        # swallow an exception): whatever a handler raises reaches the test.
        if provenance in ("frontend", "replay"):
            with self._handling(msg):
                target.handle_msg(msg)
            if provenance == "replay":
                self.clock.advance(5)
                with self._handling(msg):
                    target.handle_msg(msg)
        elif provenance == "cell":
            cell = _message("execute_request", {"code": "endpoint._on_msg(...)"})
            with self._handling(cell):
                target.handle_msg(msg)
        elif provenance == "thread":
            raised: list[BaseException] = []

            def run() -> None:
                try:
                    target.handle_msg(msg)
                except BaseException as exc:
                    raised.append(exc)

            with self._handling(msg):
                worker = threading.Thread(target=run)
                worker.start()
                worker.join(10)
            assert not worker.is_alive(), "a handler hung in a thread"
            if raised:
                raise raised[0]
        elif provenance == "other_message":
            other = _message("comm_msg", {"comm_id": other_comm, "data": {"op": "list"}})
            with self._handling(other):
                target.handle_msg(msg)
        else:  # pragma: no cover - a provenance without a rule
            raise ValueError(provenance)

    @contextlib.contextmanager
    def _handling(self, msg: dict[str, Any]) -> Iterator[None]:
        previous = self.shell.kernel.parent
        self.shell.kernel.receive(msg)
        self.shell.kernel.parent = msg
        try:
            yield
        finally:
            self.shell.kernel.parent = previous

    def replies(self, comm_id: str, since: int = 0) -> list[Any]:
        """Data of the ``comm_msg`` messages published on ``comm_id`` after ``since``."""
        return [d for cid, kind, d in self.sent[since:] if cid == comm_id and kind == "comm_msg"]


def _message(msg_type: str, content: dict[str, Any]) -> dict[str, Any]:
    return {
        "header": {
            "msg_id": uuid.uuid4().hex,
            "msg_type": msg_type,
            "username": "fuzz",
            "session": "fuzz-session",
        },
        "parent_header": {},
        "metadata": {},
        "content": content,
        "buffers": [],
    }


class _LogTrap(logging.Handler):
    """Collects what handlers log at WARNING or above while a message is delivered: ipywidgets
    and the comm layer log (and swallow) an exception raised in a handler, and the endpoint
    logs one it had to catch itself. Each is a crash of a handler."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


# -- the journal afterwards ----------------------------------------------------------------


@contextlib.contextmanager
def scratch_dir(fallback: Path) -> Iterator[Path]:
    """A directory in memory (/dev/shm) when there is one, else ``fallback``: the fuzz tests
    append tens of thousands of fsynced journal lines, and what they check is the lines, not
    the disk."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield fallback
        return
    path = Path(tempfile.mkdtemp(prefix="jpa-fuzz-", dir=shm))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def journal_entries(state_dir: Path) -> list[dict[str, Any]]:
    """Every line of every journal under ``state_dir``, each asserted to be one whole JSON
    object ending in a newline."""
    entries = []
    for path in sorted((state_dir / "decisions").glob("*.jsonl")):
        raw = path.read_bytes()
        assert not raw or raw.endswith(b"\n"), f"{path} ends in a partial line"
        for number, line in enumerate(raw.splitlines(), 1):
            entry = json.loads(line)
            assert isinstance(entry, dict), f"{path}:{number} is not a JSON object"
            assert entry.get("event"), f"{path}:{number} has no event"
            entries.append(entry)
    return entries
