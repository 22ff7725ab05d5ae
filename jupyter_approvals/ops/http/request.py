"""``http_request`` (action ``http.request``): send one HTTP request after a person approved it.

The approval covers the method, the URL, every header and the exact body bytes (a ``json``
value is serialized once, before the preview). The preview redacts secrets (the whole URL
user-info, secret-looking query and form values, credential headers, scalar JSON values under
secret-looking keys, see :mod:`.redact`); the fingerprint covers them unredacted, so a
changed token needs a new approval. A JSON object that repeats a key is shown member by
member under a warning. There is no subject: the request is made of its arguments only, and
nothing local is changed.

What cannot be sent is refused before anything is asked (APPROVAL_INVALID_ARGUMENT): control
characters in the URL, header values that are not Latin-1, a URL user name without a
password (``https://TOKEN@host``; URL credentials are sent as Basic auth, both parts), URL
credentials together with an ``Authorization`` header. Non-ASCII characters of the URL are
percent-encoded (UTF-8) and an internationalised host name is converted to its ASCII (IDNA)
form before the preview, so the card shows, and the fingerprint covers, what is sent.

Standard library only (:mod:`http.client`): the request goes straight to the host named in
the URL (proxy variables such as ``HTTPS_PROXY`` are not used) with only the headers shown
plus ``Host``, ``Accept-Encoding: identity`` and ``Content-Length``. HTTPS verifies the
certificate with the system's trust store. Redirects are not followed: a 3xx answer with a
``Location`` ends the call with APPROVAL_REDIRECTED naming the new URL, which needs its own
approval. Any other status (4xx, 5xx included) is returned, not raised.
"""

from __future__ import annotations

import base64
import http.client
import json as jsonlib
import re
import ssl
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, unquote, urljoin, urlsplit

from ...core.errors import ApprovalRedirected
from ...core.lease import require_lease
from ...kernel.gate import protected
from ...previews.redact import redact_header, redact_url
from ...previews.render_text import preview_of
from ...previews.structured import Preview, StructuredPreview
from ..common.refusal import invalid_argument
from .preview import body_preview

__all__ = ["REDIRECT_STATUSES", "HttpResponse", "http_request"]

#: Statuses that name a new location; the call ends with APPROVAL_REDIRECTED instead.
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})

# RFC 9110 token characters: what a method and a header name may contain.
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
# Characters http.client refuses in a request target or host (it would fail after approval).
_CONTROL = re.compile(r"[\x00-\x20\x7f]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
# Set from the body at send time; a caller's own value could contradict what was approved.
_AUTOMATIC_HEADERS = frozenset({"content-length", "transfer-encoding"})


class HttpResponse:
    """The answer to an approved request: status, reason, headers and the whole body."""

    __slots__ = ("body", "headers", "method", "reason", "status", "url")

    def __init__(
        self,
        method: str,
        url: str,
        status: int,
        reason: str,
        headers: list[tuple[str, str]],
        body: bytes,
    ) -> None:
        self.method = method
        self.url = url
        self.status = status
        self.reason = reason
        #: Response headers in the order received (a name may repeat, e.g. Set-Cookie).
        self.headers = headers
        self.body = body

    def __repr__(self) -> str:
        return (
            f"<HttpResponse {self.status} {self.reason} {self.method} {redact_url(self.url)} "
            f"({len(self.body):,} bytes)>"
        )

    @property
    def ok(self) -> bool:
        """True for a 2xx status."""
        return 200 <= self.status < 300

    def header(self, name: str, default: str | None = None) -> str | None:
        """The first value of header ``name`` (case-insensitive), or ``default``."""
        wanted = name.lower()
        return next((v for k, v in self.headers if k.lower() == wanted), default)

    def text(self, encoding: str | None = None) -> str:
        """The body decoded with ``encoding``, else the Content-Type charset, else UTF-8."""
        charset = encoding or _charset(self.header("Content-Type") or "") or "utf-8"
        return self.body.decode(charset, errors="replace")

    def json(self) -> Any:
        """The body parsed as JSON (``ValueError`` if it is not JSON)."""
        return jsonlib.loads(self.body)


def _charset(content_type: str) -> str | None:
    match = re.search(r"charset=\"?([\w.:-]+)", content_type, re.IGNORECASE)
    return match.group(1) if match else None


_invalid = invalid_argument


def _prepare(
    method: Any,
    url: Any,
    headers: Any = None,
    body: Any = None,
    json: Any = None,
    timeout: Any = 30.0,
) -> dict[str, Any]:
    """Check and normalize: method upper-cased, headers a dict, body bytes (json serialized)."""
    if not isinstance(method, str) or not _TOKEN.fullmatch(method):
        raise _invalid(
            f"method must be an HTTP method name such as 'GET' or 'POST', got {method!r:.60}.",
            argument="method",
        )
    method = method.upper()
    url = _check_url(url)
    checked = _check_headers(headers)
    if urlsplit(url).password is not None and _has_authorization(checked):
        raise _invalid(
            "url has credentials and headers has Authorization: only one of them can be sent.",
            argument="headers",
        )
    if body is not None and json is not None:
        raise _invalid("pass either body or json, not both.", argument="json")
    if json is not None:
        try:
            body = jsonlib.dumps(json, ensure_ascii=False, allow_nan=False).encode("utf-8")
        except (TypeError, ValueError) as exc:
            raise _invalid(f"json is not JSON-serialisable: {exc}.", argument="json") from None
        if not any(name.lower() == "content-type" for name in checked):
            checked["Content-Type"] = "application/json"
    elif isinstance(body, str):
        body = body.encode("utf-8")
        if not any(name.lower() == "content-type" for name in checked):
            checked["Content-Type"] = "text/plain; charset=utf-8"
    elif isinstance(body, (bytearray, memoryview)):
        body = bytes(body)
    elif body is not None and not isinstance(body, bytes):
        raise _invalid(
            f"body must be bytes or str (or use json=...), got {type(body).__name__}.",
            argument="body",
        )
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise _invalid(f"timeout must be a positive number of seconds, got {timeout!r}.")
    return {
        "method": method,
        "url": url,
        "headers": checked,
        "body": body,
        "json": None,
        "timeout": float(timeout),
    }


def _check_url(url: Any) -> str:
    """The URL as it is sent: checked, non-ASCII percent-encoded, the host in IDNA form."""
    if not isinstance(url, str):
        raise _invalid(f"url must be a str, got {type(url).__name__}.", argument="url")
    if _CONTROL.search(url):
        raise _invalid("url must not contain whitespace or control characters.", argument="url")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise _invalid(f"url is not a valid URL: {exc}.", argument="url") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise _invalid(
            f"url must be an http:// or https:// URL with a host, got {redact_url(url)!r:.200}.",
            argument="url",
            scheme=parts.scheme,
        )
    if port == 0:
        raise _invalid("url has port 0.", argument="url")
    if parts.username is not None and parts.password is None:
        # A lone user name is often a token (https://TOKEN@host); sending it as Basic auth
        # with no password, or dropping it, would both differ from what a person expects.
        raise _invalid(
            "url has a user name but no password (user@host). URL credentials are sent as "
            "Basic auth and need both parts (user:password@host, or user:@host for an empty "
            "password); to send a token, pass it in headers instead.",
            argument="url",
        )
    return _ascii_url(url)


def _ascii_url(url: str) -> str:
    # Only non-ASCII characters change, so what a person reads is what is sent, byte for byte.
    scheme, _, rest = url.partition("://")
    end = min([i for i in (rest.find(c) for c in "/?#") if i >= 0] or [len(rest)])
    userinfo, at, hostport = rest[:end].rpartition("@")
    try:
        if not hostport.isascii():
            host, colon, port = hostport.rpartition(":") if ":" in hostport else (hostport, "", "")
            hostport = host.encode("idna").decode("ascii") + colon + port
        return f"{scheme}://{_percent(userinfo)}{at}{hostport}{_percent(rest[end:])}"
    except UnicodeError as exc:
        raise _invalid(
            f"url cannot be sent: {exc}. Host names must be valid internationalised names.",
            argument="url",
        ) from None


def _percent(text: str) -> str:
    return _NON_ASCII.sub(lambda match: quote(match.group(), safe=""), text)


def _check_headers(headers: Any) -> dict[str, str]:
    if headers is None:
        return {}
    if not isinstance(headers, Mapping):
        raise _invalid(
            f"headers must be a mapping of name to str, got {type(headers).__name__}.",
            argument="headers",
        )
    checked: dict[str, str] = {}
    seen: set[str] = set()
    for name, value in headers.items():
        if not isinstance(name, str) or not _TOKEN.fullmatch(name):
            raise _invalid(f"header name {name!r:.60} is not a valid HTTP header name.")
        if not isinstance(value, str) or any(ch in value for ch in "\r\n\x00"):
            raise _invalid(
                f"header {name!r} must be a str without line breaks, got {type(value).__name__}.",
                argument="headers",
                name=name,
            )
        try:
            value.encode("latin-1")
        except UnicodeEncodeError:
            raise _invalid(
                f"header {name!r} has characters HTTP cannot send in a header (only Latin-1 "
                "text is sent as is); encode the value first, e.g. percent-encoding or base64.",
                argument="headers",
                name=name,
            ) from None
        if name.lower() in _AUTOMATIC_HEADERS:
            raise _invalid(f"header {name!r} is set from the body; leave it out.", name=name)
        if name.lower() in seen:
            raise _invalid(f"header {name!r} is given twice (names are case-insensitive).")
        seen.add(name.lower())
        checked[name] = value
    return checked


def _summary(method: str, url: str, body: bytes | None, **_: Any) -> str:
    shown = redact_url(url)
    if len(shown) > 100:
        shown = shown[:99] + "…"
    return f"{method} {shown}" + (f" ({len(body):,} bytes)" if body else "")


def _target(method: str, url: str, **_: Any) -> dict[str, str]:
    # The same method on the same URL competes: an approval for it is spent, without sending,
    # by a call with other headers or another body. Another URL is another request.
    return {"method": method, "url": url}


def _has_authorization(headers: Mapping[str, str]) -> bool:
    return any(name.lower() == "authorization" for name in headers)


def _preview(
    method: str,
    url: str,
    headers: dict[str, str],
    body: bytes | None,
    json: Any,
    timeout: float,
) -> Preview:
    """Request line, where it goes, headers and body, with every secret redacted."""
    structured = StructuredPreview()
    parts = urlsplit(url)
    shown_url = redact_url(url)
    shown = {name: redact_header(name, value) for name, value in headers.items()}
    if parts.password is not None:
        shown["Authorization"] = "Basic (the user name and password from the URL, hidden)"
    if shown:
        structured.count("headers", len(shown))
    if body is not None:
        structured.count("body bytes", len(body))
    structured.request(method, shown_url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    facts = [
        ("host", parts.hostname or ""),
        ("port", str(port)),
        ("TLS", "yes, the certificate is checked" if parts.scheme == "https" else "no"),
        ("redirects", "not followed"),
    ]
    if any(label.startswith("xn--") for label in (parts.hostname or "").split(".")):
        facts.append(("host name", "internationalised, shown as sent: in its ASCII form"))
    facts.append(("timeout", f"{timeout:g} s"))
    structured.facts(facts)
    added = (
        "added by the client",
        "Host, Accept-Encoding: identity and, with a body, Content-Length",
    )
    structured.facts([*shown.items(), added], title=f"headers ({len(shown)})")
    if body is None:
        structured.facts([("body", "none")])
    else:
        body_preview(structured, body, _content_type(headers))
    return preview_of(structured)


def _content_type(headers: Mapping[str, str]) -> str:
    return next((v for k, v in headers.items() if k.lower() == "content-type"), "").lower()


@protected("http.request", summary=_summary, preview=_preview, target=_target, prepare=_prepare)
def http_request(
    method: str,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    body: bytes | str | None = None,
    json: Any = None,
    timeout: float = 30.0,
) -> HttpResponse:
    """Send one HTTP request once a person approved it; return the :class:`HttpResponse`.

    ``body`` (bytes, or str sent as UTF-8) or ``json`` (any JSON value, sent as
    ``application/json``) — not both. Statuses other than redirects are returned, not raised;
    a redirect raises ``ApprovalRedirected`` (APPROVAL_REDIRECTED) naming the new URL.
    """
    require_lease("http.request")
    parts = urlsplit(url)
    send = dict(headers or {})
    if parts.password is not None:  # _prepare refused a URL password with an Authorization
        # Credentials in the URL are sent as Basic auth, as curl and browsers do.
        pair = f"{unquote(parts.username or '')}:{unquote(parts.password)}".encode()
        send["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
    connection: http.client.HTTPConnection
    if parts.scheme == "https":
        connection = http.client.HTTPSConnection(
            parts.hostname or "", parts.port, timeout=timeout, context=ssl.create_default_context()
        )
    else:
        connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=timeout)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        connection.request(method, target, body=body, headers=send)
        answer = connection.getresponse()
        data = answer.read()
        response = HttpResponse(
            method, url, answer.status, answer.reason, list(answer.getheaders()), data
        )
    finally:
        connection.close()
    location = response.header("Location")
    if response.status in REDIRECT_STATUSES and location is not None:
        new_url = urljoin(url, location)
        raise ApprovalRedirected(
            f"{method} {redact_url(url)} was sent and answered {response.status} "
            f"{response.reason}: redirect to {redact_url(new_url)}. It was not followed; "
            "requesting the new URL needs its own approval: call http_request with that URL.",
            status=response.status,
            # Unredacted, so a program can ask for the new URL; the message (journaled) is not.
            location=new_url,
            url=redact_url(url),
        )
    return response
