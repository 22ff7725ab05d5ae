"""Redaction of secrets in previews: names, headers, URLs and JSON values."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_approvals.previews.redact import (
    is_secret_name,
    redact_argv,
    redact_command_line,
    redact_form,
    redact_header,
    redact_json,
    redact_json_text,
    redact_url,
    redact_urls_in_text,
    redacted,
)

from ..security.fuzz_support import scaled_examples


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
        "apiKey",
        "APIKey",
        "apikey",
        "access_key",
        "private_key",
        "session_id",
        "sessionId",
        "sessionid",
        "client_secret",
        "X-CSRFToken",
        "authtoken",
        "api_keys",
    ],
)
def test_secret_looking_names_are_recognised(name):
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name",
    [
        "PATH",
        "HOME",
        "PWD",
        "GIT_AUTHOR_NAME",
        "author",
        "LANG",
        "Accept",
        "page",
        "keys",
        "keyword",
        "monkey",
        "session",
        "KEYBOARD_LAYOUT",
        "max_tokens",
        "tokenizer",
        "to",
    ],
)
def test_ordinary_names_are_not_secret(name):
    assert not is_secret_name(name)


def test_redacted_shows_only_the_length():
    assert redacted("hunter2") == "[redacted: 7 characters]"
    assert redacted("x") == "[redacted: 1 character]"


def test_authorization_keeps_its_scheme_and_hides_the_credential():
    # Given credential headers
    # Then the scheme stays readable and the credential is hidden
    assert redact_header("Authorization", "Bearer abc.def") == "Bearer [redacted: 7 characters]"
    assert redact_header("X-Api-Key", "Bearer abc") == "[redacted: 10 characters]"
    assert redact_header("Accept", "text/html") == "text/html"


def test_url_user_info_is_masked_whole_and_secret_query_values_hidden():
    # Given a URL with user info, a secret query value and ordinary ones
    url = "https://me:p%40ss@host.example:8443/a%20b?q=x+y&access_token=abc&page=2#frag"
    # When it is redacted
    shown = redact_url(url)
    # Then the user info and the token are hidden, nothing else is re-encoded
    assert shown == (
        "https://***@host.example:8443/a%20b"
        "?q=x+y&access_token=[redacted: 3 characters]&page=2#frag"
    )
    assert redact_url("https://h/cb#access_token=xyz&state=1") == (
        "https://h/cb#access_token=[redacted: 3 characters]&state=1"
    )


def test_a_token_given_as_the_user_name_is_hidden():
    # A token often is the whole user info (git over HTTPS)
    assert redact_url("https://ghp_abcdefSECRET123@github.com/o/r.git") == (
        "https://***@github.com/o/r.git"
    )


def test_a_bare_key_in_a_query_is_an_api_key():
    assert redact_url("https://maps.example/api?key=AIza123&q=x") == (
        "https://maps.example/api?key=[redacted: 7 characters]&q=x"
    )


def test_every_url_in_free_text_is_redacted():
    # Given a git error message naming a URL with credentials, and one without
    message = (
        "fatal: unable to access 'https://bot:t0ken@git.example/r.git/': 403\n"
        "hint: see https://docs.example/help?page=2"
    )
    # When it is redacted
    shown = redact_urls_in_text(message)
    # Then only the credentials are hidden
    assert shown == (
        "fatal: unable to access 'https://***@git.example/r.git/': 403\n"
        "hint: see https://docs.example/help?page=2"
    )


# What a URL in text is, as a regular expression: the specification the scanner keeps to.
_URL_AS_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]+")
_URL_PIECES = st.sampled_from(
    [*"ab1+.-:/ '\"<>`@=&?#\n", "://", "https://", "me:pw@", "token=", "é", "git+ssh://"]
)


@settings(max_examples=scaled_examples(2_000), deadline=None)
@given(text=st.lists(_URL_PIECES, max_size=30).map("".join))
def test_urls_in_text_are_found_exactly_where_the_pattern_finds_them(text):
    # Given any text made of the pieces URLs and their near misses are made of
    # When its URLs are redacted
    shown = redact_urls_in_text(text)
    # Then each URL the pattern matches is redacted, and nothing else changes
    assert shown == _URL_AS_PATTERN.sub(lambda match: redact_url(match.group()), text)


def test_a_url_after_a_megabyte_of_text_without_one_is_still_found():
    # Given an agent's argument of a megabyte of letters, digits and dashes, then a URL
    # (a scheme tried at every position made this take minutes)
    text = "a1-" * 350_000 + " https://me:pw@host/x?token=abc"
    # When it is redacted
    shown = redact_urls_in_text(text)
    # Then the URL's secrets are hidden and the rest is kept
    assert shown.endswith(" https://***@host/x?token=[redacted: 3 characters]")
    assert shown[: -len(" https://***@host/x?token=[redacted: 3 characters]")] == "a1-" * 350_000


def test_digits_before_a_scheme_are_kept_as_text():
    assert redact_urls_in_text("1https://me:pw@h/ and ://x") == "1https://***@h/ and ://x"


def test_form_values_of_secret_names_are_hidden():
    assert redact_form("user=bob&password=hunter2&next=%2F") == (
        "user=bob&password=[redacted: 7 characters]&next=%2F"
    )


def test_json_scalars_under_secret_keys_are_hidden_containers_are_walked():
    # Given payload under names that merely contain "key" or "session", and real secrets
    value = {
        "keys": ["prod-db", "backups"],
        "session": {"delete_all": True},
        "auth": {"password": "pw", "otp": 1, "enabled": True},
        "items": [{"api_key": 12345}],
        "tokens_used": 3,
        "token": None,
        "api_keys": ["k1", "k22"],
    }
    # When it is redacted
    # Then the payload stays visible and only secret scalars are replaced
    assert redact_json(value) == {
        "keys": ["prod-db", "backups"],
        "session": {"delete_all": True},
        "auth": {"password": "[redacted: 2 characters]", "otp": 1, "enabled": True},
        "items": [{"api_key": "[redacted: 5 characters]"}],
        "tokens_used": 3,
        "token": None,
        "api_keys": ["[redacted: 2 characters]", "[redacted: 3 characters]"],
    }


def test_json_text_keeps_repeated_keys_and_names_them():
    # Given JSON text that repeats a key
    text = '{"to":"alice","amount":10,"to":"attacker","auth":{"password":"pw"},"e":[]}'
    # When it is rendered
    lines, repeated = redact_json_text(text)
    # Then every member is shown in order, secrets hidden, and the repeated key named
    assert lines == [
        "{",
        '  "to": "alice",',
        '  "amount": 10,',
        '  "to": "attacker",',
        '  "auth": {',
        '    "password": "[redacted: 2 characters]"',
        "  },",
        '  "e": []',
        "}",
    ]
    assert repeated == ["to"]
    with pytest.raises(json.JSONDecodeError):
        redact_json_text("{not json")


def test_argv_secrets_are_hidden_and_the_rest_kept():
    # Given an argv with secret options, an assignment, a header and a URL with credentials
    argv = [
        "curl",
        "--password=pw1",
        "--token",
        "tok2",
        "--api-key",
        "-v",
        "API_KEY=k3",
        "-H",
        "Authorization: Bearer b4",
        "--user",
        "me:pw5",
        "https://u:pw6@host/x?q=1",
        "--no-password",
        "mydb",
        "-pX",
        "-u",
        "me:pw7",
    ]
    # When it is redacted
    shown = redact_argv(argv)
    # Then the secret parts are hidden; single-letter options are left as they are
    assert shown == [
        "curl",
        "--password=[redacted: 3 characters]",
        "--token",
        "[redacted: 4 characters]",
        "--api-key",
        "-v",
        "API_KEY=[redacted: 2 characters]",
        "-H",
        "Authorization: Bearer [redacted: 2 characters]",
        "--user",
        "me:[redacted: 3 characters]",
        "https://***@host/x?q=1",
        "--no-password",
        "mydb",
        "-pX",
        "-u",
        "me:pw7",
    ]


def test_shell_line_secrets_are_hidden_best_effort():
    line = (
        'TOKEN="a b" curl -H "Authorization: Bearer xyz" --password hunter2 '
        "--data-file=x.json https://u:p@h/ | my-password-tool arg"
    )
    assert redact_command_line(line) == (
        'TOKEN="[redacted: 3 characters]" curl -H "Authorization: Bearer [redacted: 3 '
        'characters]" --password [redacted: 7 characters] --data-file=x.json https://***@h/ '
        "| my-password-tool arg"
    )


@pytest.mark.parametrize("key", ["pwd", "db_pwd", "apikey", "passphrase", "authz", "key"])
def test_one_rule_hides_secret_query_keys_in_http_and_database_urls(key):
    from sqlalchemy.engine import make_url

    from jupyter_approvals.ops.sql.database import redacted_url

    # Given a query key a credential hides behind, in an HTTP URL and in a database URL
    # When each is shown, Then both hide its value, by the same rule
    assert redact_url(f"https://h/p?{key}=hunter2&q=x") == (
        f"https://h/p?{key}=[redacted: 7 characters]&q=x"
    )
    assert redacted_url(make_url(f"postgresql://u@h/db?{key}=hunter2&q=x")) == (
        f"postgresql://u@h/db?{key}=***&q=x"
    )
