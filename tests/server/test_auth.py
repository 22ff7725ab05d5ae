"""Refusals: who may list and decide approvals over REST (docs/protocol.md section 6)."""

from __future__ import annotations

import json
from http.cookies import SimpleCookie

import pytest
from tornado.httpclient import HTTPClientError
from traitlets.config import Config

from jupyter_approvals.server.app import ROUTES

API = "jupyter-approvals/api"


def loosened(ApprovalsServer=None, **server) -> Config:
    """The test server's configuration, with ``server`` settings of ServerApp on top."""
    return Config(
        {
            "ServerApp": {"jpserver_extensions": {"jupyter_approvals": True}, **server},
            "ApprovalsServer": ApprovalsServer or {"kernel_timeout": 3.0},
        }
    )


DECISION = json.dumps({"decision": "approve", "fingerprint": "sha256:" + "a" * 64})


async def status_of(jp_fetch, *parts, **kwargs) -> int:
    try:
        response = await jp_fetch(*parts, **kwargs)
    except HTTPClientError as error:
        return error.code
    return response.code


@pytest.fixture
def jp_server_config(request):
    # The server's usual configuration, or the one a test names.
    return getattr(request, "param", None) or loosened(ApprovalsServer={"kernel_timeout": 3.0})


def every_route() -> list[tuple[str, str]]:
    """(method, concrete path) of every route the extension registers."""
    samples = {"([^/]+)": "0123456789abcdef", "(pause|resume)": "pause"}
    found = []
    for pattern, handler in ROUTES:
        path = pattern.lstrip("/")
        for group, sample in samples.items():
            path = path.replace(group, sample)
        for method in ("get", "post", "put", "patch", "delete"):
            if method in vars(handler):
                found.append((method.upper(), path))
    return found


def test_the_route_list_is_the_extensions_own():
    # (the test below iterates every route the extension registers, not a list of its own)
    methods = {(method, path.split("/")[2]) for method, path in every_route()}
    assert {("GET", "pending"), ("POST", "held"), ("POST", "agents"), ("GET", "doctor")} <= methods


@pytest.mark.parametrize(("method", "path"), every_route())
async def test_unauthenticated_requests_are_refused(jp_fetch, method, path):
    # Given a request with a wrong token, when it asks for any endpoint
    status = await status_of(
        jp_fetch,
        *path.split("/"),
        method=method,
        body=DECISION if method != "GET" else None,
        headers={"Authorization": "token not-the-token"},
    )
    # Then it is refused
    assert status == 403


async def test_unauthenticated_decision_is_refused(jp_fetch):
    status = await status_of(
        jp_fetch,
        API,
        "pending",
        "k",
        "0123456789abcdef",
        method="POST",
        body=DECISION,
        headers={"Authorization": "token not-the-token"},
    )
    assert status == 403


async def test_foreign_origin_cannot_decide_even_with_the_token(jp_fetch):
    # Given a page on another site that learned the token, when it posts a decision
    with pytest.raises(HTTPClientError) as caught:
        await jp_fetch(
            API,
            "pending",
            "k",
            "0123456789abcdef",
            method="POST",
            body=DECISION,
            headers={"Origin": "http://evil.example"},
        )
    # Then the server refuses it as cross-origin, before looking at anything else
    assert caught.value.code == 403
    assert json.loads(caught.value.response.body)["code"] == "APPROVAL_CROSS_ORIGIN"


async def test_foreign_origin_cookie_session_cannot_read(jp_fetch):
    # Given no token, when another site's page asks for the pending list
    status = await status_of(
        jp_fetch, API, "pending", headers={"Authorization": "", "Origin": "http://evil.example"}
    )
    # Then it is refused
    assert status in (403, 404)


async def test_cookie_session_needs_the_xsrf_token_to_decide(jp_fetch):
    # Given a browser session: a login cookie from a token-authenticated visit, and the _xsrf cookie
    login = await jp_fetch(
        "login", headers={"Authorization": ""}, follow_redirects=False, raise_error=False
    )
    visit = await jp_fetch(API, "pending")
    jar = SimpleCookie()
    for response in (login, visit):
        for header in response.headers.get_list("Set-Cookie"):
            jar.load(header)
    cookies = "; ".join(f"{k}={v.value}" for k, v in jar.items())
    assert "_xsrf" in jar
    session = {"Authorization": "", "Cookie": cookies}
    # When it posts a decision without the XSRF header
    without = await status_of(
        jp_fetch,
        API,
        "pending",
        "k",
        "0123456789abcdef",
        method="POST",
        body=DECISION,
        headers=dict(session),
    )
    # Then it is refused; with the header it reaches the handler (which finds no such kernel)
    assert without == 403
    with_header = await status_of(
        jp_fetch,
        API,
        "pending",
        "k",
        "0123456789abcdef",
        method="POST",
        body=DECISION,
        headers={**session, "X-XSRFToken": jar["_xsrf"].value},
    )
    assert with_header == 404


@pytest.mark.parametrize(
    "jp_server_config",
    [loosened(disable_check_xsrf=True), loosened(allow_origin="*")],
    indirect=True,
)
async def test_the_doctor_fails_when_origin_or_xsrf_checks_are_loosened(capfd, jp_fetch):
    # Given a server whose XSRF check is off, or that lets any origin in
    # Then it warned when it started (capfd is set up before the server starts)
    assert "a page of another site could act" in capfd.readouterr().err
    # When the person asks the doctor
    response = await jp_fetch(API, "doctor")
    checks = {check["name"]: check for check in json.loads(response.body)["checks"]}
    # Then the cross-origin check fails, naming the setting and the fix
    check = checks["cross_origin"]
    assert check["ok"] is False
    assert ("disable_check_xsrf" in check["detail"]) or ('allow_origin is "*"' in check["detail"])
    assert "ServerApp" in check["fix"]


async def test_the_doctor_passes_origin_checks_as_jupyter_server_sets_them(capfd, jp_fetch):
    assert "a page of another site could act" not in capfd.readouterr().err
    response = await jp_fetch(API, "doctor")
    checks = {check["name"]: check for check in json.loads(response.body)["checks"]}
    assert checks["cross_origin"]["ok"] is True
    assert checks["cross_origin"]["loosened"] == []
