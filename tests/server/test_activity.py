"""The sidebar's polls are not the person working: on JupyterHub the idle culler reads the
server's last activity, and a server with the sidebar open must still be culled as configured.
A decision is the person working."""

from __future__ import annotations

import json

import pytest

API = "jupyter-approvals/api"


@pytest.mark.parametrize("route", ["pending", "changes", "journal", "agents"])
async def test_a_sidebar_poll_leaves_the_last_activity_as_it_was(jp_fetch, jp_serverapp, route):
    # Given a server whose last API activity is known
    settings = jp_serverapp.web_app.settings
    await jp_fetch("api", "status")
    before = settings.get("api_last_activity")
    # When the sidebar polls one of its routes
    response = await jp_fetch(API, route)
    assert response.code == 200
    # Then the last activity did not move
    assert settings.get("api_last_activity") == before


async def test_a_decision_counts_as_activity(jp_fetch, jp_serverapp):
    # Given a server whose last API activity is known
    settings = jp_serverapp.web_app.settings
    settings["api_last_activity"] = None
    # When the person sends a decision (here for a kernel that does not exist)
    body = json.dumps({"decision": "approve", "fingerprint": "sha256:" + "0" * 64})
    response = await jp_fetch(
        API, "pending", "no-such-kernel", "0" * 16, method="POST", body=body, raise_error=False
    )
    # Then it was activity, whatever its answer
    assert response.code == 404
    assert settings.get("api_last_activity") is not None
