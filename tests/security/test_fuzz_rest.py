"""Property-based fuzzing of the REST bodies of the server extension against a real
jupyter-server (pytest-jupyter) and a real kernel in it (docs/protocol.md 6.2, 6.2.1, 6.2.2).

Each example starts from a person's valid decision (right ids in the path, right fingerprint in
the body) and changes some of it: the body's fields (types, look-alike values, extra and
missing fields, huge values, unicode, bytes that are not JSON), the path, the ``Origin``, the
identity (an agent's token), and the timing (a request just shown, or one a person could have
read). The properties: every answer is JSON with ``ok`` and an ``APPROVAL_*`` code (or ok) and
the documented HTTP status; a request ends approved or rejected only from a decision the
contract accepts; an agent never decides or pauses; nothing that was not approved runs; every
journal line is whole JSON.
"""

# The server tests' fixtures are imported below and named again as test parameters.
# ruff: noqa: F811

from __future__ import annotations

import asyncio
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

# pytest-jupyter's fixtures for this module only (its autouse loop fixtures stay here), and
# the server tests' kernels, configuration and state directory.
from pytest_jupyter.jupyter_core import *  # noqa: F403
from pytest_jupyter.jupyter_server import *  # noqa: F403

from jupyter_approvals.core.agents import AgentRegistry, registry_path
from jupyter_approvals.core.policy import MAX_REASON_CHARS
from tests.security.fuzz_support import (
    as_browser_sends,
    journal_entries,
    json_values,
    near_fingerprints,
    scaled_examples,
)
from tests.server.agent_client import KernelSocket, add_agent, call
from tests.server.conftest import _state_dir, jp_server_config, kernels, state_dir  # noqa: F401

API = "jupyter-approvals/api"
PENDING_EXAMPLES = 150
HELD_EXAMPLES = 50
AGENT_ROUTE_EXAMPLES = 50
BATCH = 15
READ_S = 1.1
#: The HTTP status of each code (docs/protocol.md 6.2 and 6.2.2).
STATUS_OF = {
    "APPROVAL_MALFORMED_DECISION": 400,
    "APPROVAL_MALFORMED_MESSAGE": 400,
    "APPROVAL_CROSS_ORIGIN": 403,
    "APPROVAL_NOT_FROM_FRONTEND": 403,
    "APPROVAL_AGENT_FORBIDDEN": 403,
    "APPROVAL_AGENT_PAUSED": 403,
    "APPROVAL_UNKNOWN_KERNEL": 404,
    "APPROVAL_UNKNOWN_REQUEST": 404,
    "APPROVAL_UNKNOWN_AGENT": 404,
    "APPROVAL_FINGERPRINT_MISMATCH": 409,
    "APPROVAL_ALREADY_DECIDED": 409,
    "APPROVAL_WITHDRAWN": 409,
    "APPROVAL_TIMED_OUT": 409,
    "APPROVAL_AUTO_ANSWERED": 409,
    "APPROVAL_TOO_LARGE": 413,
    "APPROVAL_KERNEL_UNAVAILABLE": 504,
    # The kernel is running a cell: nothing decided, the request stays, retry when idle.
    "APPROVAL_KERNEL_BUSY": 503,
}
#: How often a POST answered APPROVAL_KERNEL_BUSY is sent again, as the sidebar would.
BUSY_RETRIES = 100

SETUP = """
import json, jupyter_approvals as ja
runs = []

@ja.protected("fuzz.write", summary="Write {name}")
def write(name):
    runs.append(name)

def ask(numbers):
    asked = []
    for n in numbers:
        try:
            write(f"target-{n}.txt")
        except ja.ApprovalPending as pending:
            asked.append([n, pending.details["request_id"], pending.details["fingerprint"]])
    print(json.dumps(asked))

def withdraw(numbers):
    for n in numbers:
        write.withdraw(f"target-{n}.txt")

def retry(numbers):
    refused = []
    for n in numbers:
        try:
            write(f"target-{n}.txt")
        except ja.ApprovalError as error:
            refused.append(error.code)
    print(json.dumps({"refused": refused, "runs": runs}))
"""


def fuzz_settings(examples: int) -> settings:
    """Deterministic, nothing written to the tree, no per-example deadline (each example is
    an HTTP round trip through a kernel); huge values are generated on purpose."""
    return settings(
        max_examples=scaled_examples(examples),
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


# -- mutations of a person's valid REST decision ---------------------------------------

_NOT_JSON = [b"", b"{", b"null", b"[]", b'"approve"', b"\xff\xfe{}", b'{"decision": "approve",}']


@dataclass
class RestMutation:
    """How one valid POST of a decision is changed."""

    decision: str = "approve"
    read: bool = True
    #: body field -> ("drop",), ("value", v) or ("near",)
    fields: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    extras: dict[str, Any] = field(default_factory=dict)
    reason: Any = ""
    huge: str | None = None  # "reason" (past its limit) or "body" (past 16 KiB)
    raw: bytes | None = None  # a body that is not a JSON object
    path: str | None = None  # how the request id in the path is changed
    origin: str | None = None  # "same", "foreign", "null"
    agent: bool = False


_BODY_FIELDS = ("decision", "fingerprint", "reason")
_REASONS = st.one_of(
    st.just(""),
    st.text(max_size=40),
    st.sampled_from(["\u202eevil", "a\x00b", "\U0001f600" * 30, "r" * MAX_REASON_CHARS]),
)
_CHANGE = st.one_of(st.just(("drop",)), st.just(("near",)), json_values.map(lambda v: ("value", v)))
_PICK = {
    "fields": st.lists(st.sampled_from(_BODY_FIELDS), max_size=2, unique=True),
    "extras": st.dictionaries(
        st.one_of(
            st.sampled_from(["approved", "channel", "decided_by", "not_after", "id"]),
            st.text(min_size=1, max_size=8),
        ),
        json_values,
        min_size=1,
        max_size=2,
    ),
    "huge": st.sampled_from([None] * 8 + ["reason", "body"]),
    "raw": st.sampled_from([None] * 9 + _NOT_JSON),
    "path": st.sampled_from([None] * 12 + ["upper", "short", "unicode", "other", "kernel"]),
    "origin": st.sampled_from([None, None, None, "same", "same", "foreign", "null"]),
    "one_in_4": st.integers(0, 3).map(lambda n: n == 0),
    "one_in_8": st.integers(0, 7).map(lambda n: n == 0),
}


@st.composite
def rest_mutations(draw: st.DrawFn) -> RestMutation:
    pick = _PICK
    m = RestMutation(
        decision=draw(st.sampled_from(["approve", "reject"])),
        read=not draw(pick["one_in_8"]),
        reason=draw(_REASONS),
    )
    for name in draw(pick["fields"]):
        m.fields[name] = draw(_CHANGE)
    if draw(pick["one_in_4"]):
        m.extras = draw(pick["extras"])
    m.huge = draw(pick["huge"])
    m.raw = draw(pick["raw"])
    m.path = draw(pick["path"])
    m.origin = draw(pick["origin"])
    m.agent = draw(pick["one_in_8"])
    return m


def body_of(m: RestMutation, fingerprint: str) -> tuple[bytes, dict[str, Any] | None]:
    """The bytes to POST, and the JSON object they carry (None if they carry none)."""
    if m.raw is not None:
        return m.raw, None
    body: dict[str, Any] = {"decision": m.decision, "fingerprint": fingerprint, "reason": m.reason}
    for name, change in m.fields.items():
        if change[0] == "drop":
            body.pop(name)
        elif change[0] == "value":
            body[name] = change[1]
        elif name == "fingerprint":
            near = near_fingerprints(fingerprint)
            body[name] = near[(len(m.fields) + len(str(m.reason))) % len(near)]
        elif name == "decision":
            body[name] = "Approve"
        else:
            body[name] = "x" * (MAX_REASON_CHARS + 1)
    body.update(m.extras)
    if m.huge == "reason":
        body["reason"] = "x" * (MAX_REASON_CHARS + 1)
    elif m.huge == "body":
        body["reason"] = "y" * 17_000
    body = as_browser_sends(body)
    return json.dumps(body).encode(), body


def decides(m: RestMutation, body: dict[str, Any] | None, fingerprint: str, path_ok: bool) -> bool:
    """Whether the contract (docs/protocol.md 6.2) lets this POST decide its request."""
    if body is None or m.agent or m.origin in ("foreign", "null") or not path_ok:
        return False
    if not m.read or set(body) - set(_BODY_FIELDS):
        return False
    reason = body.get("reason", "")
    return (
        type(body.get("decision")) is str
        and body["decision"] in ("approve", "reject")
        and type(body.get("fingerprint")) is str
        and body["fingerprint"] == fingerprint
        and type(reason) is str
        and len(reason) <= MAX_REASON_CHARS
        and not any("\ud800" <= char <= "\udfff" for char in reason)  # no text a person typed
    )


def assert_coded(status: int, answer: Any, m: RestMutation) -> None:
    """A JSON answer with ``ok`` and a code, and the HTTP status the code has."""
    assert isinstance(answer, dict), (status, answer)
    if answer.get("ok") is True:
        assert status == 200, (status, answer)
        assert answer.get("code") is None, (status, answer)
        return
    assert answer.get("ok") is False, (status, answer)
    code = answer.get("code")
    assert code in STATUS_OF, (status, answer)
    assert STATUS_OF[code] == status, (status, answer)
    if m.agent:
        assert code in ("APPROVAL_AGENT_FORBIDDEN", "APPROVAL_AGENT_PAUSED"), answer
    elif m.origin in ("foreign", "null"):
        assert code == "APPROVAL_CROSS_ORIGIN", answer


@dataclass
class KernelPool:
    """Pending requests of the real kernel, asked for in batches (20 may pend at most)."""

    loop: asyncio.AbstractEventLoop
    kernel: Any
    aged: list[tuple[int, str, str]] = field(default_factory=list)
    every: list[int] = field(default_factory=list)
    asked: int = 0

    def run(self, code: str) -> str:
        result = self.loop.run_until_complete(self.kernel.run(code))
        assert result["status"] == "ok", result
        return "".join(
            m["content"].get("text", "") for m in result["outputs"] if m["msg_type"] == "stream"
        )

    def ask(self, count: int) -> list[tuple[int, str, str]]:
        numbers = list(range(self.asked + 1, self.asked + 1 + count))
        self.asked += count
        self.every.extend(numbers)
        out = self.run(f"ask({numbers})")
        made = [tuple(a) for a in json.loads(out)]
        assert len(made) == count, out
        return made

    def take(self, read: bool, pending: set[str]) -> tuple[int, str, str]:
        if not read:
            return self.ask(1)[0]
        self.aged = [a for a in self.aged if a[1] in pending]
        if not self.aged:
            self.aged = self.ask(BATCH)
            time.sleep(READ_S)
        return self.aged[0]


@pytest.mark.realtime
def test_mutated_rest_decisions_never_decide_for_a_person(
    jp_fetch, jp_serverapp, jp_asyncio_loop, jp_http_port, jp_base_url, kernels, state_dir
):
    """Given a real server with a kernel holding pending requests, an agent holding code at
    the server, and a registered agent,
    when mutated decisions are POSTed to pending/{kernel}/{id} and held/{id}, and the agents
    routes get fuzzed names by a person and by the agent,
    then every answer is coded JSON with its documented status, only decisions the contract
    accepts decide, an agent changes nothing, nothing unapproved runs, the journal is whole."""
    loop = jp_asyncio_loop
    kernel = loop.run_until_complete(kernels())
    pool = KernelPool(loop, kernel)
    pool.run(SETUP)
    token = add_agent(state_dir, "bot")
    same_origin = f"http://127.0.0.1:{jp_http_port}"  # the host pytest-jupyter fetches
    decided: dict[str, str] = {}

    def post(m: RestMutation, parts: list[str], body: bytes) -> tuple[int, Any]:
        headers = {"Content-Type": "application/json"}
        if m.origin == "same":
            headers["Origin"] = same_origin
        elif m.origin == "foreign":
            headers["Origin"] = "http://evil.example"
        elif m.origin == "null":
            headers["Origin"] = "null"
        for _ in range(BUSY_RETRIES):
            status, _, answer = loop.run_until_complete(
                call(
                    jp_fetch,
                    *parts,
                    method="POST",
                    body=body,
                    headers=headers,
                    token=token if m.agent else None,
                )
            )
            # The server may still see the kernel busy with the cell that just ended
            if not (isinstance(answer, dict) and answer.get("code") == "APPROVAL_KERNEL_BUSY"):
                break
            assert_coded(status, answer, m)
            time.sleep(0.02)
        return status, answer

    def pending_ids() -> set[str]:
        _, _, listing = loop.run_until_complete(call(jp_fetch, API, "pending"))
        return {item["id"] for item in listing["pending"]}

    @fuzz_settings(PENDING_EXAMPLES)
    @given(m=rest_mutations())
    @example(m=RestMutation())  # a person's plain approval
    @example(m=RestMutation(decision="reject", reason="\u202e\U0001f600 \u2800"))
    def kernel_requests(m: RestMutation) -> None:
        number, request_id, fingerprint = pool.take(m.read, pending_ids())
        path_ok = m.path is None
        path_id = {
            None: request_id,
            "upper": request_id.upper(),
            "short": request_id[:-1],
            "unicode": request_id[:-1] + "\u0661",
            "other": uuid.uuid4().hex[:16],
            "kernel": request_id,
        }[m.path]
        kernel_id = str(uuid.uuid4()) if m.path == "kernel" else kernel.id
        ended = False
        try:
            raw, body = body_of(m, fingerprint)
            status, answer = post(m, [API, "pending", kernel_id, path_id], raw)
            assert_coded(status, answer, m)
            ended = request_id not in pending_ids()
            if decides(m, body, fingerprint, path_ok):
                expected = "approved" if body["decision"] == "approve" else "rejected"
                assert answer.get("status") == expected, (answer, m, body)
                decided[request_id] = expected
            elif ended:
                # Then the only way it may end is being answered too fast
                assert answer.get("code") == "APPROVAL_AUTO_ANSWERED", (answer, m, body)
        finally:
            if ended or not m.read:
                pool.run(f"withdraw([{number}])")

    kernel_requests()

    # Agent code the server holds, decided over held/{id}
    agent = loop.run_until_complete(KernelSocket.open(jp_http_port, jp_base_url, kernel.id, token))
    sent = [0]

    def hold(count: int) -> None:
        for _ in range(count):
            sent[0] += 1
            loop.run_until_complete(agent.execute(f"held_{sent[0]} = {sent[0]}"))

    def held_items() -> dict[str, dict]:
        _, _, listing = loop.run_until_complete(call(jp_fetch, API, "pending"))
        return {i["id"]: i for i in listing["pending"] if i.get("held_at") == "server"}

    hold(BATCH)
    held_items()  # a person's list starts the reading floor
    time.sleep(READ_S)

    @fuzz_settings(HELD_EXAMPLES)
    @given(m=rest_mutations())
    @example(m=RestMutation())
    @example(m=RestMutation(reason="\ud800"))
    def held_requests(m: RestMutation) -> None:
        items = held_items()
        if not items:
            hold(BATCH)
            items = held_items()
            time.sleep(READ_S)
        item = next(iter(items.values()))
        m.read = True
        path_ok = m.path in (None, "kernel")
        path_id = item["id"] if path_ok else item["id"].upper() + "x"
        raw, body = body_of(m, item["fingerprint"])
        status, answer = post(m, [API, "held", path_id], raw)
        assert_coded(status, answer, m)
        ended = item["id"] not in held_items()
        if decides(m, body, item["fingerprint"], path_ok):
            expected = "approved" if body["decision"] == "approve" else "rejected"
            assert answer.get("status") == expected, (answer, m, body)
            decided[item["id"]] = expected
        else:
            assert not ended, (answer, m, body)

    held_requests()
    agent.close()

    # The agents routes, by the person and by the agent itself
    registry = AgentRegistry(registry_path(state_dir))

    @fuzz_settings(AGENT_ROUTE_EXAMPLES)
    @given(
        name=st.one_of(st.sampled_from(["bot", "Bot", "bot ", "nobody"]), st.text(min_size=1)),
        action=st.sampled_from(["pause", "resume"]),
        by_agent=st.booleans(),
        body=st.one_of(
            st.just(b""), json_values.map(lambda v: json.dumps(as_browser_sends(v)).encode())
        ),
    )
    def agent_routes(name: str, action: str, by_agent: bool, body: bytes) -> None:
        before = registry.records()["bot"].paused
        status, _, answer = loop.run_until_complete(
            call(
                jp_fetch,
                API,
                "agents",
                name,
                action,
                method="POST",
                body=body,
                token=token if by_agent else None,
            )
        )
        if status == 404 and not isinstance(answer, dict):
            return  # a name with "/" names no route: tornado's own 404 page
        m = RestMutation(agent=by_agent)
        assert_coded(status, answer, m)
        after = registry.records()["bot"].paused
        if by_agent or name != "bot":
            assert after == before, (name, action, by_agent, answer)
        else:
            assert after == (action == "pause"), answer
        if by_agent:
            # And the agent cannot list agents either
            listed, _, listing = loop.run_until_complete(call(jp_fetch, API, "agents", token=token))
            assert_coded(listed, listing, m)

    agent_routes()

    # Then nothing that was not approved ran, and the journal is whole JSON
    approved = [rid for rid, how in decided.items() if how == "approved"]
    assert approved, "no example made a genuine approval: the fuzzing is not reaching the store"
    every = pool.every
    outcome = json.loads(pool.run(f"withdraw({every})\nretry({every})"))
    assert outcome["runs"] == []
    entries = journal_entries(state_dir)
    journaled = {e["request_id"] for e in entries if e["event"] == "approved"}
    assert set(approved) <= journaled


def test_a_reason_with_a_lone_surrogate_gets_a_coded_answer(jp_fetch, jp_asyncio_loop, kernels):
    """Given a pending request a person could have read,
    when the sidebar POSTs a valid decision whose reason holds a lone surrogate (JSON can
    carry one as an escape, and the server's own body check accepts it),
    then the answer is coded JSON, and nothing is decided unless the kernel decided it."""
    loop = jp_asyncio_loop
    kernel = loop.run_until_complete(kernels())
    pool = KernelPool(loop, kernel)
    pool.run(SETUP)
    [(_, request_id, fingerprint)] = pool.ask(1)
    time.sleep(READ_S)
    body = json.dumps({"decision": "approve", "fingerprint": fingerprint, "reason": "\ud800"})
    status, _, answer = loop.run_until_complete(
        call(jp_fetch, API, "pending", kernel.id, request_id, method="POST", body=body)
    )
    assert_coded(status, answer, RestMutation())
