"""Redaction of secrets in previews: environment values, HTTP headers, URLs and JSON bodies.

A preview is shown in the card, kept in the store and written to the journal, so a secret
must never appear in it. Redaction changes only what is *shown*: the fingerprint is computed
over the real, unredacted arguments, so changing a secret still needs a new approval.

A name looks secret when it contains one of :data:`SECRET_MARKERS` (case-insensitive; "AUTH"
but not "AUTHOR") or is one of :data:`SECRET_NAMES`. This errs towards hiding: a harmless
``KEYBOARD_LAYOUT`` is hidden too. A secret under an innocent name is not recognised.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

__all__ = [
    "SECRET_MARKERS",
    "SECRET_NAMES",
    "is_secret_name",
    "redact_header",
    "redact_json",
    "redact_url",
    "redacted",
]

#: Parts of a name that mark its value as a secret.
SECRET_MARKERS: tuple[str, ...] = (
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "KEY",
    "CREDENTIAL",
    "AUTH",
    "COOKIE",
    "SESSION",
    "PRIVATE",
    "SIGNATURE",
)

#: Whole names (after upper-casing) whose values are secrets though they contain no marker.
SECRET_NAMES: frozenset[str] = frozenset({"SIG", "PASS", "PW", "PSK"})

# AUTHOR (GIT_AUTHOR_NAME, author=...) names a person, not a credential; AUTHORIZATION does.
_MARKER_RE = re.compile(
    "|".join(m if m != "AUTH" else "AUTH(?!OR(?!I[ZS]))" for m in SECRET_MARKERS), re.IGNORECASE
)


def is_secret_name(name: str) -> bool:
    """True when ``name`` (an environment variable, header, query or JSON key) looks secret."""
    return bool(_MARKER_RE.search(name)) or name.strip().upper() in SECRET_NAMES


def redacted(value: str | bytes) -> str:
    """What is shown instead of a secret: its length only, never any of its characters."""
    return f"[redacted: {len(value):,} characters]"


def redact_header(name: str, value: str) -> str:
    """``value`` as shown for header ``name``: secrets redacted, an auth scheme kept.

    ``Authorization: Bearer abc`` shows as ``Bearer [redacted: 3 characters]``, so a person
    still sees which kind of credential is sent.
    """
    if not is_secret_name(name):
        return value
    scheme, space, credential = value.partition(" ")
    if space and credential and scheme.isalpha() and name.lower().endswith("authorization"):
        return f"{scheme} {redacted(credential)}"
    return redacted(value)


def redact_url(url: str) -> str:
    """``url`` with the user-info password and the values of secret-looking query names hidden.

    The rest of the URL is shown exactly as given (no re-encoding), so what a person reads is
    what is sent. A URL that cannot be parsed is shown as ``[unparseable URL …]`` with its length.
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return f"[unparseable URL: {redacted(url)}]"
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        user, colon, password = userinfo.partition(":")
        if colon:
            userinfo = f"{user}:{redacted(unquote(password))}"
        netloc = f"{userinfo}@{hostport}"
    query = "&".join(_redact_query_item(item) for item in parts.query.split("&"))
    fragment = parts.fragment
    if fragment and "=" in fragment:
        # OAuth implicit flows put tokens in the fragment (#access_token=...).
        fragment = "&".join(_redact_query_item(item) for item in fragment.split("&"))
    return urlunsplit((parts.scheme, netloc, parts.path, query, fragment))


def _redact_query_item(item: str) -> str:
    name, equals, value = item.partition("=")
    if equals and value and is_secret_name(unquote(name.replace("+", " "))):
        return f"{name}={redacted(unquote(value))}"
    return item


def redact_json(value: Any) -> Any:
    """A copy of a parsed JSON value; whatever sits under a secret-looking key is redacted."""
    if isinstance(value, dict):
        return {
            key: (
                redacted(item if isinstance(item, str) else json.dumps(item))
                if is_secret_name(str(key))
                else redact_json(item)
            )
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [redact_json(item) for item in value]
    return value
