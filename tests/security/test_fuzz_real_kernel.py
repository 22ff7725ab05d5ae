"""Property-based fuzzing of the comm endpoint and the card through a real ipykernel, driven
from outside as a browser would (jupyter_approvals.testing.KernelFrontend).

The mutations are those of the in-process fuzzing (tests/security/fuzz_support.py), always
delivered by the frontend itself (the wire leaves no other provenance), on requests a person
could have read (shown more than a second ago) or just shown. The same properties: every
message gets a coded answer in time, only a decision the contract accepts decides, nothing
that was not approved runs, the journal is whole JSON.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings
from jupyter_client.jsonutil import json_default

from jupyter_approvals.core.protocol import SHOWN_FIELDS
from jupyter_approvals.testing import KernelFrontend
from tests.security.fuzz_support import (
    DELAYS,
    REFUSAL_CODES,
    UNDECIDED,
    Mutation,
    Target,
    as_browser_sends,
    build,
    journal_entries,
    mutations,
    verdict,
)

ENDPOINT_EXAMPLES = 150
CARD_EXAMPLES = 100
#: Seconds a message may take to be answered before it counts as unanswered (a hang).
ANSWER_TIMEOUT_S = 10
#: Requests asked for at once; the kernel holds at most 20 pending.
BATCH = 15
#: Seconds after a batch was shown before its requests count as read by a person.
READ_S = 1.1

SETUP = """
import json, jupyter_approvals as ja
runs = []

@ja.protected("fuzz.write", summary="Write {name}")
def write(name, text):
    runs.append(name)

def ask(numbers):
    asked = []
    for n in numbers:
        try:
            write(f"target-{n}.txt", "content \\u202e")
        except ja.ApprovalPending as pending:
            asked.append([n, pending.details["request_id"], pending.details["fingerprint"]])
    print(json.dumps(asked))

def withdraw(numbers):
    for n in numbers:
        write.withdraw(f"target-{n}.txt", "content \\u202e")

def retry(numbers):
    refused = []
    for n in numbers:
        try:
            write(f"target-{n}.txt", "content \\u202e")
        except ja.ApprovalError as error:
            refused.append(error.code)
    print(json.dumps({"refused": refused, "runs": runs}))
"""


def fuzz_settings(examples: int) -> settings:
    """Deterministic, nothing written to the tree, no per-example deadline (a kernel
    round trip varies); huge values are generated on purpose."""
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


@dataclass
class Asked:
    """A request of the real kernel, its card, and when it was asked (local clock): the
    kernel showed it after ``sent_at`` and before ``shown_by``."""

    target: Target
    number: int
    model_id: str
    sent_at: float
    shown_by: float
    #: a message reached it already (its card may show a notice)
    touched: bool = False


@dataclass
class Pool:
    """Pending requests of one real kernel, asked for in batches (at most 20 may pend)."""

    fe: KernelFrontend
    fresh: list[Asked] = field(default_factory=list)
    aged: list[Asked] = field(default_factory=list)
    every: list[Asked] = field(default_factory=list)
    asked: int = 0

    def ask(self, count: int) -> list[Asked]:
        numbers = list(range(self.asked + 1, self.asked + 1 + count))
        self.asked += count
        sent_at = time.monotonic()
        result = self.fe.execute(f"ask({numbers})")
        shown_by = time.monotonic()
        assert result.status == "ok", result.evalue
        cards = {c.state["request_id"]: c.model_id for c in self.fe.cards()}
        made = []
        for number, request_id, fingerprint in json.loads(result.stdout):
            model_id = cards[request_id]
            state = self.fe.widgets[model_id].state
            target = Target(request_id, fingerprint, {n: state[n] for n in SHOWN_FIELDS})
            made.append(Asked(target, number, model_id, sent_at, shown_by))
        self.every.extend(made)
        return made

    def take(self, read: bool, untouched: bool = False, besides: Asked | None = None) -> Asked:
        """A pending request: one a person could have read (shown over a second ago), or
        one shown just now; ``untouched``: no message reached it yet; never ``besides``."""
        if not read:
            return self.ask(1)[0]
        live = [a for a in self.aged if a is not besides and self.state(a)["state"] == "pending"]
        candidates = [a for a in live if not (untouched and a.touched)]
        if not candidates:
            keep = [a for a in self.aged if a is besides]
            self.withdraw([a for a in self.aged if a is not besides])
            self.aged = self.ask(BATCH)
            time.sleep(READ_S)
            candidates = self.aged
            self.aged = self.aged + keep
        return candidates[0]

    def state(self, asked: Asked) -> dict:
        """The card's synced state as received so far: its ``state`` is the request's status
        (the kernel syncs it before it answers the message that changed it)."""
        return self.fe.widgets[asked.model_id].state

    def done(self, *used: Asked) -> None:
        """After an example: a request shown just for it ends (20 may pend at most), and an
        approval is withdrawn (else the next call of the action would redeem it)."""
        ending = [
            a
            for a in used
            if self.state(a)["state"] == "approved"
            or (a not in self.aged and self.state(a)["state"] == "pending")
        ]
        if ending:
            self.withdraw(ending)

    def withdraw(self, old: list[Asked]) -> None:
        result = self.fe.execute(f"withdraw({[a.number for a in old]})")
        assert result.status == "ok", result.evalue


def wait_answer(fe: KernelFrontend, seen: int) -> dict:
    """The endpoint's next answer (``decided``, ``error``, or ``pending`` for a list) after
    the first ``seen`` messages."""
    deadline = time.monotonic() + ANSWER_TIMEOUT_S
    while time.monotonic() < deadline:
        messages = fe.endpoint_messages(timeout=0.01)
        answers = [m for m in messages[seen:] if m.get("op") in ("decided", "error", "pending")]
        if answers:
            return answers[0]
    raise AssertionError("the endpoint did not answer in time")


def allowed(m: Mutation, message: dict, asked: Asked, sent: float, card: bool) -> str:
    """The contract's verdict, given that the kernel's answer time lies between the two
    bounds this side can measure."""
    card_of = asked.target.request_id if card else None
    early = verdict(m, message, asked.target, sent - asked.shown_by, card_of)
    late = verdict(m, message, asked.target, sent - asked.sent_at, card_of)
    return early if early == late else "either"


def check_status(status: str, rule: str, message: dict, m: Mutation) -> None:
    expected = {"approve": "approved", "reject": "rejected"}.get(str(message.get("decision")))
    if rule == "never":
        assert status in UNDECIDED, (status, m, message)
    elif rule == "decides":
        assert status == expected, (status, m, message)
    else:
        assert status in UNDECIDED | {expected}, (status, m, message)


def test_mutated_decisions_through_a_real_kernel(frontend: KernelFrontend, state_dir):
    """Given a real kernel with pending requests and a frontend connected to it,
    when the frontend sends mutated decisions on the endpoint and to the cards,
    then each is answered with a code within seconds, only decisions the contract accepts
    decide, none of the other requests runs when called again, and the journal is whole."""
    fe = frontend
    # Messages leave as a browser's JSON.stringify writes them: a lone surrogate as an escape
    # (jupyter_client's own packer cannot encode it at all).
    fe.client.session.pack = lambda obj: json.dumps(
        obj, ensure_ascii=True, allow_nan=False, default=json_default
    ).encode()
    assert fe.execute(SETUP).status == "ok"
    fe.list_pending()
    pool = Pool(fe)
    approved: list[str] = []

    @fuzz_settings(ENDPOINT_EXAMPLES)
    @given(m=mutations(genuine=True))
    def on_the_endpoint(m: Mutation) -> None:
        asked = pool.take(read=DELAYS[m.delay] >= 1)
        other = pool.take(read=True, besides=asked)
        try:
            message = as_browser_sends(build(m, asked.target, other.target))
            seen = len(fe.endpoint_messages(timeout=0))
            sent = time.monotonic()
            fe.send_endpoint(message)
            answer = wait_answer(fe, seen)
            asked.touched = other.touched = True
            if answer["op"] == "pending":
                assert message.get("op") == "list", answer
            else:
                assert answer.get("code") in REFUSAL_CODES | {None}, answer
                assert (answer.get("ok") is True) == (answer.get("code") is None), answer
            for each in (asked, other):
                status = pool.state(each)["state"]
                check_status(status, allowed(m, message, each, sent, card=False), message, m)
                if status == "approved":
                    approved.append(each.target.request_id)
        finally:
            pool.done(asked, other)

    @fuzz_settings(CARD_EXAMPLES)
    @given(m=mutations(card=True, genuine=True))
    def on_a_card(m: Mutation) -> None:
        asked = pool.take(read=DELAYS[m.delay] >= 1, untouched=True)
        other = pool.take(read=True, besides=asked)
        try:
            message = as_browser_sends(build(m, asked.target, other.target, card=True))
            sent = time.monotonic()
            fe.send_widget_message(asked.model_id, message)
            asked.touched = True
            deadline = time.monotonic() + ANSWER_TIMEOUT_S
            state = pool.state(asked)
            while state["state"] == "pending" and not state.get("notice"):
                assert time.monotonic() < deadline, f"the card did not answer {message!r}"
                fe.pump(0.01)
                state = pool.state(asked)
            if state["state"] == "pending":
                assert state["notice"].split(":")[0] in REFUSAL_CODES, state["notice"]
            rule = allowed(m, message, asked, sent, card=True)
            check_status(state["state"], rule, message, m)
            assert pool.state(other)["state"] == "pending"
            if state["state"] == "approved":
                approved.append(asked.target.request_id)
        finally:
            pool.done(asked, other)

    on_the_endpoint()
    on_a_card()
    # Then nothing that was not approved runs when its call is made again
    retried = [a.number for a in pool.every if a.target.request_id not in approved]
    result = fe.execute(f"retry({retried})")
    assert result.status == "ok", result.evalue
    outcome = json.loads(result.stdout)
    assert outcome["runs"] == []
    assert len(outcome["refused"]) == len(retried)
    # And the journal is whole JSON, with an approval line for exactly those approved
    fe.execute("import time; time.sleep(0.1)")
    entries = journal_entries(state_dir)
    assert sorted(e["request_id"] for e in entries if e["event"] == "approved") == sorted(approved)
