"""Refusals: who may list and decide approvals over REST (docs/protocol.md section 6)."""

from __future__ import annotations

import json
from http.cookies import SimpleCookie

import pytest
from tornado.httpclient import HTTPClientError

API = "jupyter-approvals/api"
DECISION = json.dumps({"decision": "approve", "fingerprint": "sha256:" + "a" * 64})


async def status_of(jp_fetch, *parts, **kwargs) -> int:
    try:
        response = await jp_fetch(*parts, **kwargs)
    except HTTPClientError as error:
        return error.code
    return response.code


@pytest.mark.parametrize("endpoint", ["pending", "journal", "doctor"])
async def test_unauthenticated_requests_are_refused(jp_fetch, endpoint):
    # Given a request with a wrong token, when it asks for any endpoint
    status = await status_of(
        jp_fetch, API, endpoint, headers={"Authorization": "token not-the-token"}
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
