"""An authorizer that denies the ``approvals`` resource stops every endpoint."""

from __future__ import annotations

import json

import pytest
from jupyter_server.auth.authorizer import Authorizer
from tornado.httpclient import HTTPClientError
from traitlets.config import Config

API = "jupyter-approvals/api"


class DenyApprovals(Authorizer):
    """Allows everything except jupyter-approvals."""

    def is_authorized(self, handler, user, action, resource) -> bool:
        return resource != "approvals"


@pytest.fixture
def jp_server_config():
    return Config(
        {
            "ServerApp": {
                "jpserver_extensions": {"jupyter_approvals": True},
                "authorizer_class": DenyApprovals,
            }
        }
    )


@pytest.mark.parametrize(
    ("parts", "method", "body"),
    [
        (("pending",), "GET", None),
        (("journal",), "GET", None),
        (("journal", "requests"), "GET", None),
        (("doctor",), "GET", None),
        (("pending", "k", "0123456789abcdef"), "POST", json.dumps({"decision": "approve"})),
    ],
)
async def test_denied_by_the_authorizer(jp_fetch, parts, method, body):
    # Given an authorizer that denies the approvals resource
    # When any endpoint is called with a valid token
    with pytest.raises(HTTPClientError) as caught:
        await jp_fetch(API, *parts, method=method, body=body)
    # Then it is forbidden, while the rest of the server still answers
    assert caught.value.code == 403
    assert (await jp_fetch("api", "status")).code == 200
