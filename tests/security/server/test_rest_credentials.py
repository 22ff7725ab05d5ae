"""Deciding over REST with every credential an attacker could hold short of the person's own
session (T2): an agent's token, a cookie without the XSRF token, the person's token from a
page of another origin, a wrong fingerprint, a replayed or misdirected decision.

Each test makes a real pending request in a real kernel of the server first, and proves
afterwards that it still waits and that its protected function never ran.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any

import pytest

from tests.kernel.helpers import HUMAN_PAUSE_S
from tests.server.agent_client import KernelSocket, call
from tests.server.test_rest import seen_idle

from .conftest import API, decision_body, journal_of

pytestmark = pytest.mark.kernel

#: The protected writer of the kernel tests, writing its marker in the server root.
WRITER = """
import jupyter_approvals as ja
from pathlib import Path
@ja.protected("file.write", summary="Write {path}",
              subject=lambda text, path: ja.FileContent(path), target="path")
def save(text, path):
    Path(path).write_text(text)
"""


class Asked:
    """A pending request in a server kernel, and how to check it is still untouched."""

    def __init__(self, kernel: Any, details: dict[str, Any], root: Path, path: str) -> None:
        self.kernel = kernel
        self.details = details
        self.root = root
        self.path = path

    @property
    def url(self) -> list[str]:
        return [API, "pending", self.kernel.id, self.details["request_id"]]

    @property
    def fingerprint(self) -> str:
        return str(self.details["fingerprint"])

    async def still_waits(self, jp_fetch: Any) -> bool:
        _, _, listing = await call(jp_fetch, API, "pending")
        listed = self.details["request_id"] in [item["id"] for item in listing["pending"]]
        again = await self.kernel.run(f"save('payload', {self.path!r})")
        return listed and again["ename"] == "ApprovalPending" and not self.ran()

    def ran(self) -> bool:
        return (self.root / self.path).exists()


Ask = Callable[..., Awaitable[Asked]]


@pytest.fixture
def ask(kernels: Any, jp_root_dir: Any) -> Ask:
    async def ask_(path: str = "marker.txt", notebook: str = "notebook.ipynb") -> Asked:
        kernel = await kernels(notebook)
        await kernel.run(WRITER)
        details = await kernel.pending_call(f"save('payload', {path!r})")
        return Asked(kernel, details, Path(jp_root_dir), path)

    return ask_


@pytest.mark.parametrize("route", ["pending", "journal", "journal/requests", "doctor"])
async def test_an_agent_token_reads_no_person_route(
    jp_fetch: Any, ask: Ask, agent_token: str, route: str
) -> None:
    # Given a pending request
    asked = await ask()
    # When an agent asks for the pending list, the journal or the doctor with its own token
    status, _, body = await call(jp_fetch, API, route, token=agent_token)
    # Then it is refused as an agent, and the request is untouched
    assert (status, body["code"]) == (403, "APPROVAL_AGENT_FORBIDDEN")
    assert await asked.still_waits(jp_fetch)


async def test_an_agent_token_cannot_decide_a_persons_request(
    jp_fetch: Any, ask: Ask, agent_token: str
) -> None:
    asked = await ask()
    await asyncio.sleep(HUMAN_PAUSE_S)
    # When the agent posts the right decision, with the right fingerprint, as the sidebar does
    status, _, body = await call(
        jp_fetch,
        *asked.url,
        token=agent_token,
        method="POST",
        body=decision_body(asked.fingerprint),
    )
    # Then it is refused before the kernel hears of it
    assert (status, body["code"]) == (403, "APPROVAL_AGENT_FORBIDDEN")
    assert await asked.still_waits(jp_fetch)


async def test_an_agent_cannot_approve_its_own_held_code(
    jp_fetch: Any,
    kernels: Any,
    jp_http_port: int,
    jp_base_url: str,
    agent_token: str,
    jp_root_dir: Any,
) -> None:
    # Given code an agent sent, held at the server
    kernel = await kernels()
    agent = await KernelSocket.open(jp_http_port, jp_base_url, kernel.id, agent_token)
    code = "open('held.txt', 'w').write('x')"
    try:
        first = await agent.execute(code)
        assert first["reply"]["ename"] == "APPROVAL_PENDING"
        _, _, listing = await call(jp_fetch, API, "pending")  # the person's sidebar sees it
        [item] = [i for i in listing["pending"] if i.get("held_at") == "server"]
        await asyncio.sleep(HUMAN_PAUSE_S)
        # When the agent posts an approval of it with its own token
        status, _, body = await call(
            jp_fetch,
            *item["decide_url"].split("/"),
            token=agent_token,
            method="POST",
            body=decision_body(item["fingerprint"]),
        )
        # Then it is refused, and sending the code again is still held
        assert (status, body["code"]) == (403, "APPROVAL_AGENT_FORBIDDEN")
        again = await agent.execute(code)
        assert again["reply"]["ename"] == "APPROVAL_PENDING"
        assert not (Path(jp_root_dir) / "held.txt").exists()
    finally:
        agent.close()


async def test_a_cookie_session_without_the_xsrf_token_cannot_decide(
    jp_fetch: Any, ask: Ask
) -> None:
    # Given a browser's login cookies (what a page of another site makes the browser send)
    asked = await ask()
    login = await jp_fetch(
        "login", headers={"Authorization": ""}, follow_redirects=False, raise_error=False
    )
    visit = await jp_fetch(API, "pending")
    jar: SimpleCookie = SimpleCookie()
    for response in (login, visit):
        for header in response.headers.get_list("Set-Cookie"):
            jar.load(header)
    cookies = "; ".join(f"{k}={v.value}" for k, v in jar.items())
    await asyncio.sleep(HUMAN_PAUSE_S)
    # When a decision is posted with them but without the XSRF header (or with a wrong one)
    for extra in ({}, {"X-XSRFToken": "2|forged|token|1"}):
        status, _, _ = await call(
            jp_fetch,
            *asked.url,
            method="POST",
            body=decision_body(asked.fingerprint),
            headers={"Authorization": "", "Cookie": cookies, **extra},
        )
        # Then it is refused
        assert status == 403
    assert await asked.still_waits(jp_fetch)


@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://127.0.0.1:1"])
async def test_the_persons_token_from_another_origin_cannot_decide(
    jp_fetch: Any, ask: Ask, origin: str
) -> None:
    # Given a page of another origin that learned the person's token
    asked = await ask()
    await asyncio.sleep(HUMAN_PAUSE_S)
    # When it posts the right decision with the token
    status, _, body = await call(
        jp_fetch,
        *asked.url,
        method="POST",
        body=decision_body(asked.fingerprint),
        headers={"Origin": origin},
    )
    # Then the server refuses it as cross-origin
    assert (status, body["code"]) == (403, "APPROVAL_CROSS_ORIGIN")
    assert await asked.still_waits(jp_fetch)


async def test_a_wrong_fingerprint_over_rest_is_refused_and_journaled(
    jp_fetch: Any, ask: Ask, jp_root_dir: Any, state_dir: Path
) -> None:
    asked = await ask()
    await asyncio.sleep(HUMAN_PAUSE_S)
    status, _, body = await call(
        jp_fetch, *asked.url, method="POST", body=decision_body("sha256:" + "0" * 64)
    )
    assert (status, body["code"]) == (409, "APPROVAL_FINGERPRINT_MISMATCH")
    assert await asked.still_waits(jp_fetch)
    refused = [
        e
        for e in journal_of(jp_root_dir, state_dir)
        if e["event"] == "refused" and e.get("request_id") == asked.details["request_id"]
    ]
    assert [e["code"] for e in refused] == ["APPROVAL_FINGERPRINT_MISMATCH"]


async def test_a_replayed_rest_decision_is_refused_and_journaled(
    jp_fetch: Any, ask: Ask, jp_root_dir: Any, state_dir: Path
) -> None:
    # Given a request approved over REST and run once
    asked = await ask()
    await asyncio.sleep(HUMAN_PAUSE_S)
    status, _, _ = await call(
        jp_fetch, *asked.url, method="POST", body=decision_body(asked.fingerprint)
    )
    assert status == 200
    assert (await asked.kernel.run(f"save('payload', {asked.path!r})"))["status"] == "ok"
    (asked.root / asked.path).unlink()
    await seen_idle(jp_fetch, asked.kernel.id)
    # When the same request is posted again, to the kernel now idle
    status, _, body = await call(
        jp_fetch, *asked.url, method="POST", body=decision_body(asked.fingerprint)
    )
    # Then it is refused as decided, journaled, and the call needs a new approval
    assert (status, body["code"]) == (409, "APPROVAL_ALREADY_DECIDED")
    again = await asked.kernel.run(f"save('payload', {asked.path!r})")
    assert again["ename"] == "ApprovalPending"
    assert not asked.ran()
    codes = [
        e.get("code")
        for e in journal_of(jp_root_dir, state_dir)
        if e["event"] == "refused" and e.get("request_id") == asked.details["request_id"]
    ]
    assert "APPROVAL_ALREADY_DECIDED" in codes


async def test_a_decision_sent_to_another_kernels_url_decides_nothing(
    jp_fetch: Any, ask: Ask
) -> None:
    # Given a pending request in one kernel, and another kernel
    asked = await ask()
    other = await ask(path="other.txt", notebook="other.ipynb")
    await asyncio.sleep(HUMAN_PAUSE_S)
    # When the first request's decision is posted under the other kernel's id
    status, _, body = await call(
        jp_fetch,
        API,
        "pending",
        other.kernel.id,
        asked.details["request_id"],
        method="POST",
        body=decision_body(asked.fingerprint),
    )
    # Then that kernel knows no such request; both still wait
    assert (status, body["code"]) == (404, "APPROVAL_UNKNOWN_REQUEST")
    assert await asked.still_waits(jp_fetch)
    assert await other.still_waits(jp_fetch)


@pytest.mark.parametrize(
    "extra",
    [{"channel": "card"}, {"decided_by": "alice"}, {"approved": True}, {"not_after": None}],
)
async def test_a_body_claiming_more_than_a_decision_is_refused(
    jp_fetch: Any, ask: Ask, extra: dict[str, Any]
) -> None:
    asked = await ask()
    await asyncio.sleep(HUMAN_PAUSE_S)
    # When the body also claims the card's channel, another decider, or an approval flag
    status, _, body = await call(
        jp_fetch, *asked.url, method="POST", body=decision_body(asked.fingerprint, **extra)
    )
    # Then it is malformed, and nothing is decided
    assert (status, body["code"]) == (400, "APPROVAL_MALFORMED_DECISION")
    assert await asked.still_waits(jp_fetch)
