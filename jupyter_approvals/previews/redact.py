"""Redaction of secrets in what is shown: names, headers, URLs, free text, argv, forms, JSON.

A preview and a summary are shown in the card, kept in the store and written to the journal,
so a secret must never appear in them. Redaction changes only what is *shown*: the
fingerprint is computed over the real, unredacted arguments, so changing a secret still needs
a new approval.

Public API (every function returns a new value; none raises on odd input):

- :func:`is_secret_name` — does this name (environment variable, header, query, form or JSON
  key, command-line option) hold a secret?
- :func:`redacted` — what is shown instead of a secret: ``[redacted: N characters]``.
- :func:`redact_header` — a header value, the auth scheme kept (``Bearer [redacted…]``).
- :func:`redact_url` — one URL: the whole user-info masked (``https://***@host/…``, as git
  does), secret query and fragment values hidden.
- :func:`redact_urls_in_text` — every URL inside free text (error messages, logs, command
  lines) passed through :func:`redact_url`.
- :func:`redact_form` — an ``application/x-www-form-urlencoded`` body, secret values hidden.
- :func:`redact_json` — a parsed JSON value, secret *scalars* hidden (containers are walked).
- :func:`redact_json_text` — JSON text pretty-printed with secret scalars hidden, every
  member kept (a repeated key is shown each time and reported).
- :func:`redact_argv` / :func:`redact_command_line` — a command as shown: URLs, values of
  secret-looking long options (``--password=x``, ``--token x``), ``NAME=value`` assignments
  and credential headers hidden. Single-letter options (``-p secret``, ``-u user:pw``) are
  too ambiguous across programs and are **not** redacted.

Names are matched by whole segments (split at ``_ - . `` spaces and camelCase), so
``keys``, ``keyword``, ``monkey``, ``session`` and ``author`` are ordinary while ``api_key``,
``apiKey``, ``session_id``, ``X-Auth-Token`` and ``GITHUB_TOKEN`` are secret. A secret under
an innocent name is not recognised.
"""

from __future__ import annotations

import itertools
import json
import re
import string
from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

__all__ = [
    "SECRET_PAIRS",
    "SECRET_WORDS",
    "is_secret_name",
    "is_secret_query_key",
    "redact_argv",
    "redact_command_line",
    "redact_form",
    "redact_header",
    "redact_json",
    "redact_json_text",
    "redact_url",
    "redact_urls_in_text",
    "redacted",
]

#: Name segments (lower case) that mark a value as secret wherever they appear in a name.
SECRET_WORDS: frozenset[str] = frozenset(
    {
        "token",
        "secret",
        "secrets",
        "password",
        "passwd",
        "passphrase",
        "pass",
        "pw",
        "pwd",
        "psk",
        "credential",
        "credentials",
        "auth",
        "authorization",
        "authentication",
        "cookie",
        "apikey",
        "accesskey",
        "privatekey",
        "secretkey",
        "sessionid",
        "signature",
        "sig",
    }
)

#: Adjacent segments that together mark a secret (``api_key``, ``session_id``, ``SigningKey``).
SECRET_PAIRS: frozenset[tuple[str, str]] = frozenset(
    {
        ("api", "key"),
        ("access", "key"),
        ("private", "key"),
        ("secret", "key"),
        ("signing", "key"),
        ("encryption", "key"),
        ("master", "key"),
        ("client", "key"),
        ("account", "key"),
        ("license", "key"),
        ("session", "id"),
        ("session", "key"),
    }
)

# Glued words ending like a credential: authtoken, csrftoken, clientsecret, dbpassword.
_SECRET_SUFFIXES = ("token", "secret", "password", "passwd", "passphrase")
# Names that contain a secret-looking segment but are not secrets ($PWD is a directory).
_NOT_SECRET = frozenset({"pwd", "oldpwd"})
# In a URL query, a bare ``key`` is almost always an API key (Google, many others), and a key
# that merely contains one of these words is hidden too (``db_pwd``, ``apikey``, ``authz``).
_QUERY_SECRET_NAMES = frozenset({"key"})
QUERY_SECRET_FRAGMENTS = (
    "password",
    "passwd",
    "pwd",
    "secret",
    "token",
    "key",
    "auth",
    "credential",
)
_SEGMENT = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def _segments(name: str) -> list[str]:
    return [part.lower() for part in _SEGMENT.findall(name)]


def is_secret_name(name: str) -> bool:
    """True when ``name`` (a variable, header, query, form, JSON key or option) looks secret."""
    if name.strip().lower() in _NOT_SECRET:
        return False
    parts = _segments(name)
    if any(part in SECRET_WORDS or part.endswith(_SECRET_SUFFIXES) for part in parts):
        return True
    # A plural second word counts too: api_keys, session_ids.
    return any((a, b.removesuffix("s")) in SECRET_PAIRS for a, b in itertools.pairwise(parts))


def is_secret_query_key(name: str) -> bool:
    """True when a URL query key (HTTP requests, database URLs) looks secret: the name rule of
    :func:`is_secret_name`, or a bare ``key``, or a key containing a credential word."""
    lowered = name.strip().lower()
    return (
        is_secret_name(name)
        or lowered in _QUERY_SECRET_NAMES
        or any(fragment in lowered for fragment in QUERY_SECRET_FRAGMENTS)
    )


def redacted(value: str | bytes) -> str:
    """What is shown instead of a secret: its length only, never any of its characters."""
    unit = "character" if len(value) == 1 else "characters"
    return f"[redacted: {len(value):,} {unit}]"


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
    """``url`` with its whole user-info masked and secret query and fragment values hidden.

    ``https://user:pw@host/x`` and ``https://ghp_token@host/x`` both show as
    ``https://***@host/x``: a token is often passed as the user name alone. The rest is
    shown exactly as given (no re-encoding). A URL that cannot be parsed is shown as
    ``[unparseable URL …]`` with its length.
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return f"[unparseable URL: {redacted(url)}]"
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rpartition("@")[2]
    query = "&".join(_redact_pair(item, query=True) for item in parts.query.split("&"))
    fragment = parts.fragment
    if fragment and "=" in fragment:
        # OAuth implicit flows put tokens in the fragment (#access_token=...).
        fragment = "&".join(_redact_pair(item, query=True) for item in fragment.split("&"))
    return urlunsplit((parts.scheme, netloc, parts.path, query, fragment))


# A URL in text is a scheme (a letter, then letters, digits, "+", "." or "-"), "://", then
# anything up to white space or a quote or bracket that ends it in text.
_LETTERS = frozenset(string.ascii_letters)
_SCHEME_CHARACTERS = _LETTERS | frozenset(string.digits + "+.-")
_URL_ENDS_AT = re.compile(r"[\s'\"<>`]")


def redact_urls_in_text(text: str) -> str:
    """``text`` with every URL in it passed through :func:`redact_url` (for messages, logs).

    Linear in the length of ``text``: an agent's argument can be megabytes long, and a regular
    expression that tries a scheme at every position took seconds on 64 KiB without a URL.
    Each "://" is found once; its scheme is read backwards from it, never further back than
    where the previous URL ended.
    """
    pieces: list[str] = []
    shown_up_to = 0
    separator = text.find("://")
    while separator != -1:
        start = separator
        while start > shown_up_to and text[start - 1] in _SCHEME_CHARACTERS:
            start -= 1
        # The scheme starts at the run's first letter: "1http://x" holds the URL "http://x".
        while start < separator and text[start] not in _LETTERS:
            start += 1
        end_match = _URL_ENDS_AT.search(text, separator + 3)
        end = end_match.start() if end_match else len(text)
        if start == separator or end == separator + 3:
            separator = text.find("://", separator + 1)
            continue
        pieces.append(text[shown_up_to:start])
        pieces.append(redact_url(text[start:end]))
        shown_up_to = end
        separator = text.find("://", end)
    pieces.append(text[shown_up_to:])
    return "".join(pieces)


def _redact_pair(item: str, query: bool = False) -> str:
    name, equals, value = item.partition("=")
    plain = unquote(name.replace("+", " "))
    secret = is_secret_query_key(plain) if query else is_secret_name(plain)
    if equals and value and secret:
        return f"{name}={redacted(unquote(value.replace('+', ' ')))}"
    return item


def redact_form(body: str) -> str:
    """A ``application/x-www-form-urlencoded`` body with values of secret-looking names hidden."""
    return "&".join(_redact_pair(item) for item in body.split("&"))


def _redact_scalar(value: Any) -> Any:
    # null and booleans cannot carry a secret; showing them keeps the payload readable.
    if value is None or isinstance(value, (bool, dict, list)):
        return value
    return redacted(value if isinstance(value, str) else json.dumps(value))


def redact_json(value: Any) -> Any:
    """A copy of a parsed JSON value with scalars under secret-looking keys redacted.

    Containers are walked, never hidden whole: ``{"session": {"delete_all": true}}`` stays
    visible. Items of a list under a secret key count as secret (they have no name of
    their own); members of an object are judged by their own keys.
    """
    return _redact_parsed(value, False)


def _redact_parsed(value: Any, secret: bool) -> Any:
    if isinstance(value, dict):
        return {k: _redact_parsed(v, is_secret_name(str(k))) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_parsed(item, secret) for item in value]
    return _redact_scalar(value) if secret else value


class _Members(list[tuple[str, Any]]):
    """A JSON object as its members in order, repeated keys included."""


def _walk(value: Any, secret: bool, repeated: list[str]) -> Any:
    if isinstance(value, _Members):
        seen: set[str] = set()
        members = _Members()
        for key, item in value:
            if key in seen and key not in repeated:
                repeated.append(key)
            seen.add(key)
            members.append((key, _walk(item, is_secret_name(key), repeated)))
        return members
    if isinstance(value, list):
        return [_walk(item, secret, repeated) for item in value]
    return _redact_scalar(value) if secret else value


def _pretty(value: Any, indent: str, depth: int, out: list[str], prefix: str, end: str) -> None:
    pad = indent * depth
    if isinstance(value, _Members):
        items: list[tuple[str, Any]] = [
            (json.dumps(k, ensure_ascii=False) + ": ", v) for k, v in value
        ]
        opening, closing = "{", "}"
    elif isinstance(value, list):
        items = [("", v) for v in value]
        opening, closing = "[", "]"
    else:
        out.append(f"{pad}{prefix}{json.dumps(value, ensure_ascii=False)}{end}")
        return
    if not items:
        out.append(f"{pad}{prefix}{opening}{closing}{end}")
        return
    out.append(f"{pad}{prefix}{opening}")
    for index, (key, item) in enumerate(items):
        _pretty(item, indent, depth + 1, out, key, "," if index < len(items) - 1 else "")
    out.append(f"{pad}{closing}{end}")


def redact_json_text(text: str | bytes, indent: int = 2) -> tuple[list[str], list[str]]:
    """JSON text as pretty lines with secret scalars redacted, and the keys that repeat.

    Every member is kept in its order, so ``{"to": "a", "to": "b"}`` shows both ``"to"``
    lines (servers disagree on which one counts); the second list names such keys so the
    caller can warn. Raises ``ValueError`` (or ``RecursionError`` for absurd nesting) when
    ``text`` is not JSON.
    """
    parsed = json.loads(text, object_pairs_hook=_Members)
    repeated: list[str] = []
    shown = _walk(parsed, False, repeated)
    lines: list[str] = []
    _pretty(shown, " " * indent, 0, lines, "", "")
    return lines, repeated


# --- commands ------------------------------------------------------------------------------

# --name=value or NAME=value (an option or an environment assignment in argv).
_ASSIGNMENT = re.compile(r"(-{0,2})([A-Za-z_][A-Za-z0-9_.-]*)=(.*)", re.DOTALL)
# "Authorization: Bearer x" given as one argument (curl -H, wget --header).
_HEADER_ITEM = re.compile(r"([A-Za-z][A-Za-z0-9-]*):[ \t]*(\S.*)", re.DOTALL)
# --user / --proxy-user take user:password (curl, wget); the password part is hidden.
_USER_OPTIONS = frozenset({"--user", "--proxy-user"})


def _secret_option(item: str) -> bool:
    # Long options only: a single letter (-p, -u) means different things in each program.
    name = item.lstrip("-")
    return (
        item.startswith("-")
        and len(name) > 1
        and not name.startswith("no-")
        and is_secret_name(name)
    )


def _redact_item(item: str) -> str:
    assignment = _ASSIGNMENT.fullmatch(item)
    if assignment and not (assignment.group(1) == "-" and len(assignment.group(2)) == 1):
        dashes, name, value = assignment.groups()
        if value and is_secret_name(name):
            return f"{dashes}{name}={redacted(value)}"
        return f"{dashes}{name}={redact_urls_in_text(value)}"
    header = _HEADER_ITEM.fullmatch(item)
    if header and is_secret_name(header.group(1)):
        return f"{header.group(1)}: {redact_header(header.group(1), header.group(2))}"
    return redact_urls_in_text(item)


def redact_argv(argv: Sequence[str]) -> list[str]:
    """An argv as shown: URLs, secret option values, assignments and credential headers hidden.

    ``--password=x``, ``--token x``, ``API_KEY=x``, ``-H "Authorization: Bearer x"``,
    ``--user me:pw`` and ``https://me:pw@host`` lose their secret part. Single-letter options
    (``mysql -pX``, ``curl -u me:pw``) are not recognised: their meaning depends on the program.
    """
    shown: list[str] = []
    hide_next = False
    for index, item in enumerate(argv):
        if hide_next and item and not item.startswith("-"):
            shown.append(redacted(item))
        elif index > 0 and argv[index - 1] in _USER_OPTIONS and ":" in item:
            user, _, password = item.partition(":")
            shown.append(f"{user}:{redacted(password)}")
        else:
            shown.append(_redact_item(item))
        hide_next = index > 0 and "=" not in item and _secret_option(item)
    return shown


# In a shell line: a (quoted) word, then the forms redact_argv hides.
_WORD = r"(?:'[^']*'|\"(?:[^\"\\]|\\.)*\"|[^\s'\"]+)"
_LINE_OPTION = re.compile(rf"(?<![\w-])(--?[A-Za-z][A-Za-z0-9_.-]+)(=|[ \t]+)({_WORD})")
_LINE_ASSIGNMENT = re.compile(rf"(?<![\w-])([A-Za-z_][A-Za-z0-9_]*)=({_WORD})")
_LINE_HEADER = re.compile(r"(['\"])([A-Za-z][A-Za-z0-9-]*):[ \t]*([^'\"\n]+)\1")


def _hide_word(word: str) -> str:
    if len(word) >= 2 and word[0] == word[-1] and word[0] in "'\"":
        return f"{word[0]}{redacted(word[1:-1])}{word[0]}"
    return redacted(word)


def redact_command_line(line: str) -> str:
    """A shell command line as shown, hiding what :func:`redact_argv` hides (best effort).

    A shell line cannot be parsed reliably, so this matches common forms: URLs,
    ``--secret=value``, ``--secret value``, ``NAME=value`` and quoted credential headers.
    """

    def option(match: re.Match[str]) -> str:
        name, separator, word = match.groups()
        if not _secret_option(name) or (separator != "=" and word.startswith("-")):
            return match.group()
        return f"{name}{separator}{_hide_word(word)}"

    def assignment(match: re.Match[str]) -> str:
        name, word = match.groups()
        return f"{name}={_hide_word(word)}" if is_secret_name(name) else match.group()

    def header(match: re.Match[str]) -> str:
        quote, name, value = match.groups()
        if not is_secret_name(name):
            return match.group()
        return f"{quote}{name}: {redact_header(name, value)}{quote}"

    line = _LINE_HEADER.sub(header, line)
    line = _LINE_OPTION.sub(option, line)
    line = _LINE_ASSIGNMENT.sub(assignment, line)
    return redact_urls_in_text(line)
