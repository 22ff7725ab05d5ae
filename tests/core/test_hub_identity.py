"""Who a JupyterHub credential is: the table of docs/jupyterhub.md, rule by rule."""

from __future__ import annotations

import pytest

from jupyter_approvals.core.agents import NAME_PATTERN
from jupyter_approvals.core.hub_identity import (
    AGENT_SCOPE,
    DECIDE_SCOPE,
    HubRole,
    hub_agent_name,
    judge_hub_user,
)

OWNER = "alice"


def model(name=OWNER, kind="user", session="", token="a12", scopes=()) -> dict:
    """A hub user model as ``GET /hub/api/user`` answers it for a token."""
    return {
        "kind": kind,
        "name": name,
        "session_id": session or None,
        "token_id": token,
        "scopes": list(scopes),
    }


@pytest.mark.parametrize(
    ("credential", "role"),
    [
        (model(session="s1"), HubRole.DECIDES),
        (model(), HubRole.AGENT),
        (model(scopes=["access:servers!user=alice"]), HubRole.AGENT),
        (model(name="admin", session="s2", scopes=["admin:servers"]), HubRole.WATCHES),
        (model(name="admin"), HubRole.AGENT),
        (model(name="svc", kind="service"), HubRole.AGENT),
        (model(name="bob", session="s3"), HubRole.WATCHES),
        (model(name="admin", scopes=[f"{DECIDE_SCOPE}!user=alice"]), HubRole.DECIDES),
        (model(scopes=[DECIDE_SCOPE]), HubRole.DECIDES),
        (model(name="bob", scopes=[f"{DECIDE_SCOPE}!user=bob"]), HubRole.AGENT),
        (model(scopes=[f"{DECIDE_SCOPE}!server=alice/other"]), HubRole.AGENT),
        (model(scopes=[f"{DECIDE_SCOPE}!server=alice/"]), HubRole.DECIDES),
        (model(session="s1", scopes=[f"{AGENT_SCOPE}!user=alice"]), HubRole.AGENT),
        (model(scopes=[AGENT_SCOPE, DECIDE_SCOPE]), HubRole.AGENT),
    ],
    ids=[
        "owner-browser-session",
        "owner-token-default-scopes",
        "owner-token-narrow-scopes",
        "admin-browser-session",
        "admin-token",
        "service-token",
        "other-users-session",
        "admin-token-granted-decide",
        "token-granted-decide",
        "decide-granted-on-another-user",
        "decide-granted-on-another-server",
        "decide-granted-on-this-server",
        "agent-scope-wins-over-session",
        "agent-scope-wins-over-decide",
    ],
)
def test_each_kind_of_hub_credential_gets_its_role(credential, role):
    # Given a hub credential; when it is judged on alice's default server
    judged = judge_hub_user(credential, OWNER)
    # Then it gets the role of the table, and agents a valid agent name
    assert judged.role is role, judged.why
    if role is HubRole.AGENT:
        assert judged.agent is not None
        assert NAME_PATTERN.fullmatch(judged.agent)
    else:
        assert judged.agent is None


def test_the_servers_own_token_never_decides_whatever_its_scopes():
    # Given the server's own token (its kernels inherit it), even granted the deciding scope
    credential = model(scopes=[DECIDE_SCOPE], session="s9")
    # When it is judged, as configured either way; then it never decides
    assert judge_hub_user(credential, OWNER, servers_own_token=True).role is HubRole.AGENT
    watching = judge_hub_user(credential, OWNER, without_session="watcher", servers_own_token=True)
    assert watching.role is HubRole.WATCHES


def test_tokens_without_a_session_can_be_taken_for_watchers_instead():
    # Given the setting that takes tokens without a browser session for watchers
    judged = judge_hub_user(model(), OWNER, without_session="watcher")
    # Then such a token watches (works as before, cannot decide); agent-scoped ones are agents
    assert judged.role is HubRole.WATCHES
    scoped = judge_hub_user(model(scopes=[AGENT_SCOPE]), OWNER, without_session="watcher")
    assert scoped.role is HubRole.AGENT


def test_an_unknown_setting_is_refused():
    with pytest.raises(ValueError, match="without_session"):
        judge_hub_user(model(), OWNER, without_session="person")


@pytest.mark.parametrize(
    ("name", "token"),
    [("Alice.Smith@Example.org", "a12"), ("x" * 200, "a" * 50), ("", None), ("ü", "a1")],
)
def test_hub_agent_names_always_fit_the_agent_name_rules(name, token):
    agent = hub_agent_name({"name": name, "token_id": token})
    assert NAME_PATTERN.fullmatch(agent), agent
    assert agent.startswith("hub-")
