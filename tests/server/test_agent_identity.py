"""Agent identities over REST: who an agent token is, and the routes it may and may not reach.

Every attempt is made as an attacker holding an agent token would make it: with that token in
the header or the query, with and without cookies, on routes that call the authorizer and
on routes that only check authentication.
"""

from __future__ import annotations

import json

import pytest
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.utils import url_path_join
from tornado import web

from .agent_client import add_agent, auth, call

API = "jupyter-approvals/api"
DECISION = json.dumps({"decision": "approve", "fingerprint": "sha256:" + "a" * 64})


@pytest.fixture
def agent_token(state_dir) -> str:
    return add_agent(state_dir, "bot")


async def test_an_agent_token_is_that_agent_and_gets_no_cookie(jp_fetch, agent_token):
    # Given an agent registered with `jupyter approvals agent add bot`
    # When it asks who it is, with its token in the query as websockets do
    status, headers, body = await call(jp_fetch, "api", "me", params={"token": agent_token})
    # Then it is the agent, and no login cookie was minted from the token
    assert status == 200
    assert body["identity"]["username"] == "agent:bot"
    assert body["identity"]["display_name"] == "agent bot"
    assert not any(k.lower() == "set-cookie" for k in headers)


async def test_the_persons_token_is_still_the_person(jp_fetch, agent_token):
    # Given the gate is on, when the person's own token is used
    status, _, body = await call(jp_fetch, "api", "me")
    # Then nothing changed for them
    assert status == 200
    assert not body["identity"]["username"].startswith("agent:")


async def test_an_agent_writes_without_xsrf_because_it_is_token_authenticated(
    jp_fetch, agent_token
):
    # Given an agent client with no cookies at all
    # When it creates a notebook (POST needs XSRF for cookie sessions)
    status, _, body = await call(
        jp_fetch,
        "api",
        "contents",
        token=agent_token,
        method="POST",
        body=json.dumps({"type": "notebook"}),
    )
    # Then the write is accepted as token-authenticated
    assert status == 201, body
    assert body["type"] == "notebook"


async def test_an_unregistered_agent_like_token_is_nobody(jp_fetch, agent_token):
    status, _, _ = await call(jp_fetch, "api", "me", token="jpagent_" + "x" * 43)
    assert status == 403


@pytest.mark.parametrize(
    ("method", "parts", "body"),
    [
        ("GET", (API, "pending"), None),
        ("POST", (API, "pending", "k", "0123456789abcdef"), DECISION),
        ("POST", (API, "held", "0123456789abcdef"), DECISION),
        ("GET", (API, "journal"), None),
        ("GET", (API, "doctor"), None),
        ("POST", ("api", "terminals"), "{}"),
        ("POST", ("api", "events"), json.dumps({"schema_id": "x", "version": "1", "data": {}})),
        ("PUT", ("api", "config", "notebook"), "{}"),
        (
            "POST",
            ("lab", "api", "extensions"),
            json.dumps({"cmd": "install", "extension_name": "x"}),
        ),
        ("GET", ("api", "spec.yaml"), None),
        ("POST", ("api", "shutdown"), ""),
        ("GET", ("api", "nbconvert"), None),
        ("POST", ("api", "contents", "notebook.ipynb", "trust"), ""),
    ],
)
async def test_agents_are_refused_everything_off_their_allowlist(
    jp_fetch, agent_token, method, parts, body
):
    # Given an agent token, when it asks for a route an agent client does not need
    kwargs = {"method": method} if body is None else {"method": method, "body": body}
    status, _, reply = await call(jp_fetch, *parts, token=agent_token, **kwargs)
    # Then it is refused with a code, whatever the route
    assert status == 403, (parts, reply)
    assert reply["code"] == "APPROVAL_AGENT_FORBIDDEN"


async def test_routes_added_later_are_refused_even_without_the_authorizer(
    jp_fetch, jp_serverapp, agent_token
):
    # Given routes another extension adds later, guarded by @web.authenticated only, such as
    # jupyter-server-nbmodel's execute route and jupyter-mcp-server's in-server /mcp
    ran: list[str] = []

    class OnlyAuthenticated(JupyterHandler):
        @web.authenticated
        def post(self, *args: str) -> None:
            ran.append(self.request.path)
            self.finish("{}")

    base = jp_serverapp.base_url
    jp_serverapp.web_app.add_handlers(
        ".*$",
        [
            (url_path_join(base, r"/api/kernels/([^/]+)/execute"), OnlyAuthenticated),
            (url_path_join(base, "/mcp"), OnlyAuthenticated),
        ],
    )
    for parts in (("api", "kernels", "abc", "execute"), ("mcp",)):
        # When the agent posts code there
        status, _, reply = await call(
            jp_fetch, *parts, token=agent_token, method="POST", body=json.dumps({"code": "1"})
        )
        # Then it is refused with a code and the handler never ran
        assert status == 403
        assert reply["code"] == "APPROVAL_AGENT_FORBIDDEN"
    assert ran == []
    # And the person still reaches them
    status, _, _ = await call(jp_fetch, "mcp", method="POST", body="{}")
    assert status == 200
    assert ran == [url_path_join(base, "/mcp")]


async def test_a_removed_agent_is_refused_at_once(jp_fetch, state_dir, agent_token):
    # Given an agent that works
    assert (await call(jp_fetch, "api", "status", token=agent_token))[0] == 200
    # When the person removes it (the CLI writes the registry file)
    from jupyter_approvals.core.agents import AgentRegistry, registry_path

    AgentRegistry(registry_path(state_dir)).remove("bot")
    # Then its next request is nobody's
    assert (await call(jp_fetch, "api", "status", token=agent_token))[0] == 403


async def test_a_corrupt_registry_lets_no_agent_in(jp_fetch, state_dir, agent_token):
    # Given the registry file is damaged
    (state_dir / "agents.json").write_text("{not json")
    # When the agent connects, then it is refused (never taken for the person)
    status, _, _ = await call(jp_fetch, "api", "me", token=agent_token)
    assert status == 403
    from jupyter_approvals.core.agents import AgentRegistry, registry_path
    from jupyter_approvals.core.errors import ApprovalAgentRegistryUnreadable

    with pytest.raises(ApprovalAgentRegistryUnreadable):
        AgentRegistry(registry_path(state_dir)).records()


async def test_agents_may_only_stop_kernels_they_started(jp_fetch, agent_token):
    # Given a kernel the person started and one the agent started
    _, _, persons = await call(jp_fetch, "api", "kernels", method="POST", body="{}")
    status, _, agents = await call(
        jp_fetch, "api", "kernels", token=agent_token, method="POST", body="{}"
    )
    assert status == 201
    try:
        # When the agent tries to restart, interrupt or shut down the person's kernel
        for method, parts in (
            ("POST", ("api", "kernels", persons["id"], "restart")),
            ("POST", ("api", "kernels", persons["id"], "interrupt")),
            ("DELETE", ("api", "kernels", persons["id"])),
        ):
            kwargs = {"body": ""} if method == "POST" else {}
            status, _, reply = await call(
                jp_fetch, *parts, token=agent_token, method=method, **kwargs
            )
            # Then it is refused
            assert status == 403
            assert reply["code"] == "APPROVAL_AGENT_FORBIDDEN"
        # And shutting down its own kernel is allowed
        status, _, _ = await call(
            jp_fetch, "api", "kernels", agents["id"], token=agent_token, method="DELETE"
        )
        assert status == 204
    finally:
        await call(jp_fetch, "api", "kernels", persons["id"], method="DELETE")


async def test_agents_may_only_delete_sessions_they_started(jp_fetch, agent_token, jp_root_dir):
    # Given a session the person started
    _, _, session = await call(
        jp_fetch,
        "api",
        "sessions",
        method="POST",
        body=json.dumps({"path": "a.ipynb", "type": "notebook", "kernel": {"name": "python3"}}),
    )
    try:
        # When the agent deletes it or moves it to another kernel
        for method, body in (("DELETE", None), ("PATCH", json.dumps({"path": "b.ipynb"}))):
            kwargs = {"body": body} if body else {}
            status, _, reply = await call(
                jp_fetch,
                "api",
                "sessions",
                session["id"],
                token=agent_token,
                method=method,
                **kwargs,
            )
            # Then it is refused
            assert status == 403, reply
            assert reply["code"] == "APPROVAL_AGENT_FORBIDDEN"
        # And a session the agent made itself is its own to delete
        status, _, own = await call(
            jp_fetch,
            "api",
            "sessions",
            token=agent_token,
            method="POST",
            body=json.dumps({"path": "c.ipynb", "type": "notebook", "kernel": {"name": "python3"}}),
        )
        assert status == 201
        status, _, _ = await call(
            jp_fetch, "api", "sessions", own["id"], token=agent_token, method="DELETE"
        )
        assert status == 204
    finally:
        await call(jp_fetch, "api", "sessions", session["id"], method="DELETE")


def test_the_agent_header_is_the_documented_one(agent_token):
    assert auth(agent_token) == {"Authorization": f"token {agent_token}"}


async def test_an_agent_cannot_take_over_a_persons_session_or_kernel_through_its_own(
    jp_fetch, agent_token
):
    # Given the person's notebook session and its kernel
    _, _, persons = await call(
        jp_fetch,
        "api",
        "sessions",
        method="POST",
        body=json.dumps({"path": "mine.ipynb", "type": "notebook", "kernel": {"name": "python3"}}),
    )
    try:
        # When the agent "creates" a session for the same path (the server answers with the
        # person's), and tries one of its own bound to the person's kernel
        _, _, same = await call(
            jp_fetch,
            "api",
            "sessions",
            token=agent_token,
            method="POST",
            body=json.dumps(
                {"path": "mine.ipynb", "type": "notebook", "kernel": {"name": "python3"}}
            ),
        )
        assert same["id"] == persons["id"]
        status, _, bound = await call(
            jp_fetch,
            "api",
            "sessions",
            token=agent_token,
            method="POST",
            body=json.dumps(
                {
                    "path": "other.ipynb",
                    "type": "notebook",
                    "kernel": {"id": persons["kernel"]["id"]},
                }
            ),
        )
        # Then the bound session is refused, and deleting the person's (which would shut the
        # person's kernel down) is refused
        assert (status, bound["code"]) == (403, "APPROVAL_AGENT_FORBIDDEN")
        status, _, reply = await call(
            jp_fetch, "api", "sessions", persons["id"], token=agent_token, method="DELETE"
        )
        assert (status, reply["code"]) == (403, "APPROVAL_AGENT_FORBIDDEN")
        # And the person's kernel still runs
        status, _, _ = await call(jp_fetch, "api", "kernels", persons["kernel"]["id"])
        assert status == 200
    finally:
        await call(jp_fetch, "api", "sessions", persons["id"], method="DELETE")


async def test_an_agent_reads_what_its_client_needs(jp_fetch, agent_token):
    # Given an agent token, when it asks for what an agent client reads to get going
    for parts in (
        ("api",),
        ("api", "status"),
        ("api", "kernelspecs"),
        ("api", "kernelspecs", "python3"),
        ("api", "contents"),
        ("api", "sessions"),
        ("api", "kernels"),
    ):
        status, headers, _ = await call(jp_fetch, *parts, token=agent_token)
        # Then each answers as for anyone, and never with a login cookie
        assert status == 200, parts
        assert not any(k.lower() == "set-cookie" for k in headers), parts
    # And a kernelspec's resources pass the gate (this test kernel has no logo: the server's
    # own 404, not the gate's coded 403)
    status, _, body = await call(
        jp_fetch, "kernelspecs", "python3", "logo-64x64.png", token=agent_token
    )
    assert status in (200, 404)
    assert not (isinstance(body, dict) and body.get("code"))
