"""Every credential a JupyterHub hands out, against a decision on alice's server: only her
browser session, and a credential the admin granted the deciding scope, decide. The table of
docs/jupyterhub.md is what these tests assert."""

from __future__ import annotations

import asyncio
import json
import queue
import re
import time

import pytest
import requests
from jupyter_client import BlockingKernelClient

from jupyter_approvals.core.hub_identity import AGENT_SCOPE
from tests.kernel.helpers import HUMAN_PAUSE_S, SETUP
from tests.server.agent_client import KernelSocket

from .conftest import DECIDER_SERVICE_TOKEN, PLAIN_SERVICE_TOKEN, Hub, json_of

pytestmark = [pytest.mark.hub, pytest.mark.timeout(300)]

API = "jupyter-approvals/api"
OWNER = "alice"


class AliceKernel:
    """A kernel of alice's notebook, started from her browser, run from its connection file."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        hub.start_server(OWNER)
        self.browser = hub.browser(OWNER)
        created = self.browser.request(
            "POST",
            OWNER,
            "api/sessions",
            json={"path": "notebook.ipynb", "type": "notebook", "kernel": {"name": "python3"}},
        )
        assert created.status_code == 201, created.text
        self.id = created.json()["kernel"]["id"]
        runtime = hub.home(OWNER) / ".local" / "share" / "jupyter" / "runtime"
        connection = runtime / f"kernel-{self.id}.json"
        deadline = time.monotonic() + 30
        while not connection.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        self.client = BlockingKernelClient()
        self.client.load_connection_file(str(connection))
        self.client.start_channels()
        self._wait_until_it_answers()
        assert self.run(SETUP)["status"] == "ok"

    def _wait_until_it_answers(self) -> None:
        # (wait_for_ready takes a heartbeat not yet up for a dead kernel on a loaded machine)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            self.client.kernel_info()
            try:
                reply = self.client.get_shell_msg(timeout=2)
            except queue.Empty:
                continue
            if reply["msg_type"] == "kernel_info_reply":
                while True:  # the iopub messages of the kernel_info: not a cell's output
                    try:
                        self.client.get_iopub_msg(timeout=0.5)
                    except queue.Empty:
                        return
        raise AssertionError("alice's kernel never answered")

    def run(self, code: str) -> dict:
        outputs: list[dict] = []
        reply = self.client.execute_interactive(
            code, output_hook=outputs.append, timeout=60, allow_stdin=False
        )
        content = reply["content"]
        text = "".join(m["content"].get("text", "") for m in outputs if m["msg_type"] == "stream")
        return {"status": content["status"], "ename": content.get("ename"), "stdout": text}

    def value(self, expression: str) -> str:
        return self.run(f"print({expression})")["stdout"].strip()

    def pending_row(self, call: str) -> dict:
        """Make ``call`` (it asks) and return its row as alice's sidebar lists it."""
        assert self.run(f"try:\n    {call}\nexcept ja.ApprovalPending:\n    pass")["status"] == "ok"
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            rows = self.browser.request("GET", OWNER, f"{API}/pending").json()["pending"]
            mine = [r for r in rows if r.get("kernel_id") == self.id]
            if mine:
                return mine[-1]
            time.sleep(0.2)
        raise AssertionError("the request was never listed")

    def stop(self) -> None:
        self.client.stop_channels()


@pytest.fixture(scope="module")
def alice(hub: Hub):
    kernel = AliceKernel(hub)
    yield kernel
    kernel.stop()


def decide_with_token(
    hub: Hub, token: str, row: dict, decision: str = "approve"
) -> requests.Response:
    """A decision of ``row`` posted with ``token`` (as a script or an agent would)."""
    return requests.post(
        f"{hub.url}/user/{OWNER}/{API}/pending/{row['kernel_id']}/{row['id']}",
        headers={"Authorization": f"token {token}"},
        data=json.dumps({"decision": decision, "fingerprint": row["fingerprint"]}),
        timeout=60,
    )


def journal(hub: Hub) -> list[dict]:
    """Every line of the journals in alice's state folder."""
    state = hub.home(OWNER) / ".local" / "state" / "jupyter-approvals"
    lines: list[dict] = []
    for path in sorted(state.rglob("*.jsonl")):
        lines += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return lines


#: Credentials that must not decide on alice's server, and what they are taken for.
REFUSED = [
    ("kernel-token", "agent"),
    ("alice-token-default-scopes", "agent"),
    ("alice-token-narrow-scopes", "agent"),
    ("alice-token-for-an-agent", "agent"),
    ("admin-token", "agent"),
    ("service-token", "agent"),
    ("admin-browser-session", "watcher"),
]


def credential(hub: Hub, alice: AliceKernel, kind: str):
    """(headers, session) for each kind of credential of :data:`REFUSED`."""
    if kind == "kernel-token":
        return alice.value("__import__('os').environ['JUPYTERHUB_API_TOKEN']")
    if kind == "alice-token-default-scopes":
        return hub.token(OWNER, "my token")
    if kind == "alice-token-narrow-scopes":
        return hub.token(OWNER, "narrow", ["access:servers!user=alice"])
    if kind == "alice-token-for-an-agent":
        scopes = ["access:servers!user=alice", AGENT_SCOPE + "!user"]
        return hub.token(OWNER, "for my agent", scopes)
    if kind == "admin-token":
        return hub.token("admin", "admin's token")
    if kind == "service-token":
        return PLAIN_SERVICE_TOKEN
    raise AssertionError(kind)


@pytest.mark.parametrize(("kind", "taken_for"), REFUSED, ids=[k for k, _ in REFUSED])
def test_a_credential_that_is_not_the_owners_browser_session_never_decides(
    hub: Hub, alice: AliceKernel, kind: str, taken_for: str
):
    # Given a request pending on alice's server, read for longer than a second
    row = alice.pending_row("save('x', 'precious.txt')")
    time.sleep(HUMAN_PAUSE_S)
    # When a decision comes with a credential that is not alice's browser session
    if kind == "admin-browser-session":
        admin = hub.browser("admin")
        response = admin.request(
            "POST",
            OWNER,
            f"{API}/pending/{row['kernel_id']}/{row['id']}",
            data=json.dumps({"decision": "approve", "fingerprint": row["fingerprint"]}),
        )
    else:
        response = decide_with_token(hub, credential(hub, alice, kind), row)
    # Then it is refused as no person's, nothing runs, and the refusal is journaled
    body = json_of(response)
    assert (response.status_code, body.get("code")) == (403, "APPROVAL_NOT_A_PERSON"), body
    assert alice.value("runs") == "[]"
    assert not (hub.home(OWNER) / "precious.txt").exists()
    refused = [
        e
        for e in journal(hub)
        if e.get("event") == "refused"
        and e.get("code") == "APPROVAL_NOT_A_PERSON"
        and e.get("request_id") == row["id"]
    ]
    assert refused, journal(hub)[-5:]
    # And a credential taken for an agent is an agent of its own in alice's agent list
    if taken_for == "agent":
        agents = alice.browser.request("GET", OWNER, f"{API}/agents").json()["agents"]
        assert any(a["name"].startswith("hub-") and a["hub"] for a in agents), agents


def test_the_owners_browser_session_decides(hub: Hub, alice: AliceKernel):
    # Given a request pending on alice's server
    row = alice.pending_row("save('mine', 'mine.txt')")
    time.sleep(HUMAN_PAUSE_S)
    # When alice approves it in her browser (the page's cookie and XSRF header)
    response = alice.browser.request(
        "POST",
        OWNER,
        f"{API}/pending/{row['kernel_id']}/{row['id']}",
        data=json.dumps({"decision": "approve", "fingerprint": row["fingerprint"]}),
    )
    # Then it is approved, and the call runs once
    assert (response.status_code, response.json()["status"]) == (200, "approved"), response.text
    assert alice.run("save('mine', 'mine.txt')")["status"] == "ok"
    assert (hub.home(OWNER) / "mine.txt").read_text() == "mine"


def test_a_credential_granted_the_deciding_scope_decides(hub: Hub, alice: AliceKernel):
    # Given a request pending on alice's server, and a service the admin granted
    # custom:jupyter-approvals:decide!user=alice
    row = alice.pending_row("save('svc', 'granted.txt')")
    time.sleep(HUMAN_PAUSE_S)
    # When the service rejects it
    response = decide_with_token(hub, DECIDER_SERVICE_TOKEN, row, "reject")
    # Then the rejection counts
    assert (response.status_code, response.json()["status"]) == (200, "rejected"), response.text


def test_code_sent_with_a_hub_token_taken_for_an_agent_is_held(hub: Hub, alice: AliceKernel):
    # Given alice's token marked for an agent
    token = credential(hub, alice, "alice-token-for-an-agent")
    # When the agent reads the pending list, and starts a kernel
    headers = {"Authorization": f"token {token}"}
    listing = requests.get(f"{hub.url}/user/{OWNER}/{API}/pending", headers=headers, timeout=30)
    started = requests.post(
        f"{hub.url}/user/{OWNER}/api/kernels", headers=headers, json={}, timeout=60
    )
    # Then it sees no decisions, and may start a kernel of its own (an agent's route)
    assert (listing.status_code, json_of(listing).get("code")) == (
        403,
        "APPROVAL_AGENT_FORBIDDEN",
    )
    assert started.status_code == 201, started.text
    requests.delete(
        f"{hub.url}/user/{OWNER}/api/kernels/{started.json()['id']}", headers=headers, timeout=60
    )


def page_token(browser_session, owner: str) -> str:
    """The token JupyterLab's page of ``owner``'s server holds for the browser (the hub's
    OAuth token of that browser session), as the page's JavaScript reads it."""
    page = browser_session.request("GET", owner, "lab")
    match = re.search(r'"token":\s*"([^"]+)"', page.text)
    assert match, page.text[:500]
    return match.group(1)


def test_a_card_decision_from_an_admins_browser_never_reaches_the_kernel(
    hub: Hub, alice: AliceKernel
):
    # Given a request pending on alice's server, and an admin who opened it in a browser
    row = alice.pending_row("save('x', 'admin-card.txt')")
    time.sleep(HUMAN_PAUSE_S)
    admin = hub.browser("admin")
    admin.open(OWNER)
    token = page_token(admin, OWNER)
    port = int(hub.url.rsplit(":", 1)[1])

    async def press_approve() -> list[dict]:
        socket = await KernelSocket.open(port, f"/user/{OWNER}/", alice.id, token)
        try:
            # When the admin's page sends the card's approval over the kernel's websocket
            decision = {
                "op": "decide",
                "id": row["id"],
                "decision": "approve",
                "fingerprint": row["fingerprint"],
                "reason": "",
            }
            await socket.send(
                "comm_msg",
                {"comm_id": "card", "data": {"method": "custom", "content": decision}},
            )
            answers: list[dict] = []
            while not answers:
                message = await socket.read(30)
                if message is None:
                    break
                if message["msg_type"] == "comm_close":
                    answers.append(message)
            return answers
        finally:
            await socket.aclose()

    answers = asyncio.run(press_approve())
    # Then the server answers it as no person's decision, nothing runs, the request still
    # waits, and the refusal is journaled
    assert answers[0]["content"]["data"]["code"] == "APPROVAL_NOT_A_PERSON", answers
    assert (
        alice.run(
            "try:\n    save('x', 'admin-card.txt')\nexcept ja.ApprovalPending:\n"
            "    print('still asking')"
        )["stdout"].strip()
        == "still asking"
    )
    assert not (hub.home(OWNER) / "admin-card.txt").exists()
    refused = [
        e
        for e in journal(hub)
        if e.get("event") == "refused"
        and e.get("code") == "APPROVAL_NOT_A_PERSON"
        and e.get("source") == "websocket"
    ]
    assert [e["request_id"] for e in refused] == [row["id"]]


def test_code_a_hub_agent_sends_waits_as_its_own_row_and_runs_only_when_approved(
    hub: Hub, alice: AliceKernel
):
    # Given alice's token marked for an agent, connected to her notebook's kernel
    token = credential(hub, alice, "alice-token-for-an-agent")
    port = int(hub.url.rsplit(":", 1)[1])
    code = "open('agent-ran.txt', 'a').write('x')"

    async def send_code() -> dict:
        socket = await KernelSocket.open(port, f"/user/{OWNER}/", alice.id, token)
        try:
            return await socket.execute(code)
        finally:
            await socket.aclose()

    # When the agent sends code
    first = asyncio.run(send_code())
    # Then nothing ran: the code waits for alice, in her sidebar, as the hub agent's row
    assert first["reply"]["ename"] == "APPROVAL_PENDING", first["reply"]
    assert not (hub.home(OWNER) / "agent-ran.txt").exists()
    rows = alice.browser.request("GET", OWNER, f"{API}/pending").json()["pending"]
    [held] = [r for r in rows if r.get("held_at") == "server" and r.get("preview") == code]
    assert held["agent"].startswith(f"hub-{OWNER}-")
    # When alice approves it in her browser, and the agent sends the same code again
    time.sleep(HUMAN_PAUSE_S)
    approved = alice.browser.request(
        "POST",
        OWNER,
        f"{API}/held/{held['id']}",
        data=json.dumps({"decision": "approve", "fingerprint": held["fingerprint"]}),
    )
    assert approved.json()["status"] == "approved", approved.text
    again = asyncio.run(send_code())
    # Then it runs, once
    assert again["reply"]["status"] == "ok", again["reply"]
    assert (hub.home(OWNER) / "agent-ran.txt").read_text() == "x"
