"""The single-user server on a hub: the doctor's check of the token its kernels inherit, and
what a server stopped as the idle culler stops it writes down."""

from __future__ import annotations

import json
import time

import pytest
import requests

from .conftest import Hub
from .test_hub_credentials import API, AliceKernel, journal

pytestmark = [pytest.mark.hub, pytest.mark.timeout(300)]


def doctor_check(hub: Hub, user: str) -> dict:
    hub.start_server(user)
    browser = hub.browser(user)
    response = browser.request("GET", user, f"{API}/doctor")
    assert response.status_code == 200, response.text
    [check] = [c for c in response.json()["checks"] if c["name"] == "hub_kernel_token"]
    return check


def test_the_doctor_fails_while_kernels_inherit_a_token_that_reaches_the_server(hub: Hub):
    # Given alice's server, spawned with the hub's default server token scopes
    # When the doctor runs in it
    check = doctor_check(hub, "alice")
    # Then its hub check fails, naming the scope and the fix for jupyterhub_config.py
    assert check["ok"] is False, check
    assert "access:servers!server=alice/" in check["detail"]
    assert 'server_token_scopes = ["users:activity!user"]' in check["fix"]


def test_the_doctor_passes_once_the_servers_token_reaches_no_server(hub: Hub):
    # Given carol's server, whose token the hub narrowed to reporting activity
    # When the doctor runs in it; then its hub check passes
    check = doctor_check(hub, "carol")
    assert check["ok"] is True, check
    assert not [s for s in check["scopes"] if s.startswith("access:servers")], check


def test_a_server_stopped_as_the_culler_stops_it_journals_what_was_lost(hub: Hub):
    # Given a request pending on alice's server, and one approved but not used yet
    alice = AliceKernel(hub)
    pending = alice.pending_row("save('x', 'pending.txt')")
    approved = alice.pending_row("save('y', 'approved.txt')")
    time.sleep(1.2)
    decided = alice.browser.request(
        "POST",
        "alice",
        f"{API}/pending/{approved['kernel_id']}/{approved['id']}",
        data=json.dumps({"decision": "approve", "fingerprint": approved["fingerprint"]}),
    )
    assert decided.json()["status"] == "approved", decided.text
    alice.stop()
    # When the hub stops the server (as its idle culler does, through the hub's API)
    hub.stop_server("alice")
    # Then the journal says both were lost with the server, as the server last saw them
    lost = {
        e["request_id"]: e
        for e in journal(hub)
        if e.get("event") == "lost" and e.get("recorded_by") == "server"
    }
    assert lost[pending["id"]]["status"] == "pending"
    assert lost[approved["id"]]["status"] == "approved"
    assert "stopped" in lost[pending["id"]]["reason"]


def test_on_a_named_server_the_owners_browser_decides_and_her_token_does_not(hub: Hub):
    # Given alice's named server "second"
    hub.start_named_server("alice", "second")
    browser = hub.browser("alice")
    body = json.dumps({"decision": "approve", "fingerprint": "sha256:" + "0" * 64})
    path = f"{API}/pending/no-such-kernel/{'0' * 16}"
    # When her browser session and her token each send a decision there
    from_browser = browser.request("POST", "alice/second", path, data=body)
    token = hub.token("alice", "named")
    from_token = requests.post(
        f"{hub.url}/user/alice/second/{path}",
        headers={"Authorization": f"token {token}"},
        data=body,
        timeout=60,
    )
    # Then the browser's passes who-decides (the kernel is unknown), the token's does not
    assert (from_browser.status_code, from_browser.json()["code"]) == (
        404,
        "APPROVAL_UNKNOWN_KERNEL",
    ), from_browser.text
    assert (from_token.status_code, from_token.json()["code"]) == (403, "APPROVAL_NOT_A_PERSON")
