"""Redaction of secrets in previews: names, headers, URLs and JSON values."""

from __future__ import annotations

import pytest

from jupyter_approvals.ops.redact import (
    is_secret_name,
    redact_header,
    redact_json,
    redact_url,
    redacted,
)


@pytest.mark.parametrize(
    "name",
    [
        "GITHUB_TOKEN",
        "aws_secret_access_key",
        "DB_PASSWORD",
        "MYSQL_PWD_PASSWD",
        "OPENAI_API_KEY",
        "Authorization",
        "Proxy-Authorization",
        "X-Auth-Token",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "Cookie",
        "Set-Cookie",
        "X-Api-Key",
        "sig",
        "X-Amz-Signature",
    ],
)
def test_secret_looking_names_are_recognised(name):
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name", ["PATH", "HOME", "PWD", "GIT_AUTHOR_NAME", "author", "LANG", "Accept", "page"]
)
def test_ordinary_names_are_not_secret(name):
    assert not is_secret_name(name)


def test_redacted_shows_only_the_length():
    assert redacted("hunter2") == "[redacted: 7 characters]"


def test_authorization_keeps_its_scheme_and_hides_the_credential():
    # Given credential headers
    # Then the scheme stays readable and the credential is hidden
    assert redact_header("Authorization", "Bearer abc.def") == "Bearer [redacted: 7 characters]"
    assert redact_header("X-Api-Key", "Bearer abc") == "[redacted: 10 characters]"
    assert redact_header("Accept", "text/html") == "text/html"


def test_url_password_and_secret_query_values_are_hidden_the_rest_kept_as_given():
    # Given a URL with user info, a secret query value and ordinary ones
    url = "https://me:p%40ss@host.example:8443/a%20b?q=x+y&access_token=abc&page=2#frag"
    # When it is redacted
    shown = redact_url(url)
    # Then only the password and the token are hidden, nothing is re-encoded
    assert shown == (
        "https://me:[redacted: 4 characters]@host.example:8443/a%20b"
        "?q=x+y&access_token=[redacted: 3 characters]&page=2#frag"
    )
    assert redact_url("http://user@host/") == "http://user@host/"
    assert redact_url("https://h/cb#access_token=xyz&state=1") == (
        "https://h/cb#access_token=[redacted: 3 characters]&state=1"
    )


def test_json_values_under_secret_keys_are_hidden_at_any_depth():
    value = {"user": "al", "auth": {"password": "pw", "otp": 1}, "items": [{"api_key": 12345}]}
    assert redact_json(value) == {
        "user": "al",
        "auth": "[redacted: 28 characters]",
        "items": [{"api_key": "[redacted: 5 characters]"}],
    }
