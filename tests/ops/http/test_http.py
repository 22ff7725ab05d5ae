"""http_request (http.request): a real local server receives exactly what was approved."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

import jupyter_approvals as ja
from jupyter_approvals.core import errors
from jupyter_approvals.ops import http_request
from jupyter_approvals.previews.text import PREVIEW_BUDGET

from ..conftest import approve, ask, decide, request_of


class Recorder(BaseHTTPRequestHandler):
    """Records every request; /redirect answers 302 to /moved, /missing answers 404."""

    received: list[dict[str, Any]]

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.received.append(
            {"method": self.command, "path": self.path, "headers": self.headers, "body": body}
        )
        if self.path.startswith("/redirect"):
            self.send_response(302)
            self.send_header("Location", "/moved?to=here")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        status = 404 if self.path == "/missing" else 200
        reply = json.dumps({"got": self.command, "bytes": len(body)}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _handle

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean


@pytest.fixture
def server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A real HTTP server on 127.0.0.1 (free port); yields its base URL and what it received."""
    received: list[dict[str, Any]] = []
    handler = type("Handler", (Recorder,), {"received": received})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", received
    httpd.shutdown()
    httpd.server_close()
    thread.join()


def test_approved_request_sends_exactly_what_was_approved(session, server):
    # Given an approved POST with headers and a JSON body
    base, received = server
    call = lambda: http_request(  # noqa: E731
        "post", f"{base}/items?x=1", headers={"X-Trace": "abc"}, json={"name": "north", "n": 3}
    )
    info = approve(session, call)
    assert info.action == "http.request"
    assert received == []  # asking sent nothing
    # When it is called again
    response = call()
    # Then the server got exactly that method, path, headers and body, once
    [got] = received
    assert (got["method"], got["path"]) == ("POST", "/items?x=1")
    assert got["headers"]["X-Trace"] == "abc"
    assert got["headers"]["Content-Type"] == "application/json"
    assert json.loads(got["body"]) == {"name": "north", "n": 3}
    # And the response is returned with its helpers
    assert (response.status, response.reason, response.ok) == (200, "OK", True)
    assert response.json() == {"got": "POST", "bytes": len(got["body"])}
    assert response.text().startswith('{"got"')
    assert response.header("content-type") == "application/json; charset=utf-8"
    # And a second run needs a new approval
    ask(call)
    assert len(received) == 1


def test_error_statuses_are_returned_not_raised(session, server):
    # Given an approved GET of a missing resource
    base, _ = server
    approve(session, lambda: http_request("GET", f"{base}/missing"))
    # When it runs
    response = http_request("GET", f"{base}/missing")
    # Then the 404 is returned
    assert (response.status, response.ok) == (404, False)


def test_redirect_stops_and_names_the_new_url_which_is_never_requested(session, server):
    # Given an approved request that the server redirects
    base, received = server
    approve(session, lambda: http_request("GET", f"{base}/redirect"))
    # When it runs
    with pytest.raises(errors.ApprovalRedirected) as redirected:
        http_request("GET", f"{base}/redirect")
    # Then the call ends naming the absolute new URL, which needs its own approval
    assert redirected.value.code == "APPROVAL_REDIRECTED"
    assert f"{base}/moved?to=here" in redirected.value.message
    assert "needs its own approval" in redirected.value.message
    assert redirected.value.details["status"] == 302
    assert redirected.value.details["location"] == f"{base}/moved?to=here"
    # And the redirect target was never requested
    assert [r["path"] for r in received] == ["/redirect"]
    assert session.store.recent(1)[0].status.value == "failed"


def test_rejected_request_is_never_sent(session, server):
    # Given a request a person rejects
    base, received = server
    pending = ask(lambda: http_request("DELETE", f"{base}/items/1"))
    decide(session, pending, "reject", reason="keep it")
    # When it is called again
    with pytest.raises(ja.ApprovalRejected):
        http_request("DELETE", f"{base}/items/1")
    # Then the server never saw it
    assert received == []


def test_secrets_are_redacted_in_the_preview_but_sent_to_the_server(session, server):
    # Given a request carrying secrets in the URL, the headers and the JSON body
    base, received = server
    host = base.removeprefix("http://")
    url = f"http://{host}/upload?api_key=K3Y-VALUE&page=2"
    headers = {
        "Authorization": "Bearer TOKEN-VALUE-123",
        "Cookie": "session=COOKIE-VALUE",
        "X-Api-Key": "HEADER-KEY",
        "X-Refresh-Token": "REFRESH-VALUE",
        "Accept": "application/json",
    }
    body = {"user": "alice", "password": "BODY-PASSWORD"}
    call = lambda: http_request("PUT", url, headers=headers, json=body)  # noqa: E731
    # When it is asked for
    info = request_of(session, ask(call))
    # Then no secret appears in the preview or the summary, while the rest is shown
    shown = info.preview + info.summary
    for secret in (
        "K3Y-VALUE",
        "TOKEN-VALUE-123",
        "COOKIE-VALUE",
        "HEADER-KEY",
        "REFRESH-VALUE",
        "BODY-PASSWORD",
    ):
        assert secret not in shown
    assert f"PUT http://{host}/upload?api_key=[redacted: 9 characters]&page=2" in info.preview
    assert "&page=2" in info.preview
    assert "  Authorization: Bearer [redacted: 15 characters]" in info.preview
    assert "  Accept: application/json" in info.preview
    assert '"user": "alice"' in info.preview
    # And once approved, the server receives the real values
    decide(session, ask(call))
    call()
    [got] = received
    assert got["path"] == "/upload?api_key=K3Y-VALUE&page=2"
    assert got["headers"]["Authorization"] == "Bearer TOKEN-VALUE-123"
    assert got["headers"]["X-Api-Key"] == "HEADER-KEY"
    assert json.loads(got["body"])["password"] == "BODY-PASSWORD"


def test_changing_a_secret_needs_a_new_approval(session, server):
    # Given an approved request with a token
    base, received = server
    approve(session, lambda: http_request("GET", base, headers={"Authorization": "Bearer one"}))
    # When the same request is made with another token
    # Then the approval does not cover it (same method and URL compete) and nothing is sent
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        http_request("GET", base, headers={"Authorization": "Bearer two"})
    assert received == []


def test_url_credentials_are_hidden_whole_and_sent_as_basic_auth(session, server):
    # Given an approved URL with user info
    base, received = server
    url = base.replace("http://", "http://bob:s%40fe@") + "/x"
    info = approve(session, lambda: http_request("GET", url))
    # Then the card, the summary and the journal mask the whole user info and say how it is sent
    host = base.removeprefix("http://")
    assert info.preview.splitlines()[1] == f"GET http://***@{host}/x"
    assert info.summary == f"GET http://***@{host}/x"
    assert "  Authorization: Basic (the user name and password from the URL, hidden)" in (
        info.preview
    )
    assert "s%40fe" not in session.journal.path.read_text()
    # When it runs
    http_request("GET", url)
    # Then the server gets Basic auth with the decoded credentials
    assert received[0]["headers"]["Authorization"] == "Basic Ym9iOnNAZmU="


@pytest.mark.parametrize(
    ("args", "kwargs", "fragment"),
    [
        (("GET", "ftp://example.com/x"), {}, "http:// or https://"),
        (("GET", "http:///path"), {}, "with a host"),
        (("GET", "example.com"), {}, "http:// or https://"),
        (("GET", "http://example.com:99999/"), {}, "not a valid URL"),
        (("GET", "http://exa mple.com/"), {}, "whitespace"),
        (("BAD METHOD", "http://example.com/"), {}, "method must be"),
        ((1, "http://example.com/"), {}, "method must be"),
        (("POST", "http://example.com/"), {"body": b"x", "json": {}}, "not both"),
        (("POST", "http://example.com/"), {"body": 12}, "body must be bytes or str"),
        (("POST", "http://example.com/"), {"json": {1, 2}}, "not JSON-serialisable"),
        (("POST", "http://example.com/"), {"json": float("nan")}, "not JSON-serialisable"),
        (("GET", "http://example.com/"), {"headers": {"X": "a\r\nInjected: 1"}}, "line breaks"),
        (("GET", "http://example.com/"), {"headers": {"Bad Name": "1"}}, "not a valid HTTP"),
        (("GET", "http://example.com/"), {"headers": {"X": 1}}, "must be a str"),
        (("GET", "http://example.com/"), {"headers": [("X", "1")]}, "mapping"),
        (("GET", "http://example.com/"), {"headers": {"Content-Length": "9"}}, "set from the body"),
        (("GET", "http://example.com/"), {"headers": {"a": "1", "A": "2"}}, "given twice"),
        (("GET", "http://example.com/"), {"timeout": 0}, "timeout must be"),
        (("GET", "http://example.com/a\x01b"), {}, "control characters"),
        (("GET", "http://example.com/a\x7fb"), {}, "control characters"),
        (("GET", "https://ghp_TOKEN@example.com/"), {}, "user name but no password"),
        (
            ("GET", "https://u:p@example.com/"),
            {"headers": {"Authorization": "Bearer x"}},
            "only one of them",
        ),
        (("GET", "http://example.com/"), {"headers": {"X-Name": "名前"}}, "Latin-1"),
        (("GET", "http://bü..x/"), {}, "cannot be sent"),
    ],
)
def test_invalid_arguments_are_refused_before_anything_is_asked(session, args, kwargs, fragment):
    # When a request is made with arguments it cannot be sent with
    with pytest.raises(errors.ApprovalInvalidArgument) as invalid:
        http_request(*args, **kwargs)
    # Then it is refused with a clear message and nothing was asked
    assert invalid.value.code == "APPROVAL_INVALID_ARGUMENT"
    assert fragment in invalid.value.message
    assert session.store.pending() == []


def test_preview_shows_method_destination_headers_and_pretty_json(session, server):
    # Given a JSON request
    base, _ = server
    # When it is asked for
    info = request_of(session, ask(lambda: http_request("patch", base, json={"a": [1, 2]})))
    lines = info.preview.splitlines()
    # Then the preview shows the request line, where it goes, and the body pretty-printed
    assert lines[:3] == ["1 header, 13 body bytes", f"PATCH {base}", "host: 127.0.0.1"]
    assert "redirects: not followed" in lines
    assert "  Content-Type: application/json" in lines
    assert "body:\n  size: 13 bytes\n  sha256: " in info.preview
    assert '    "a": [' in lines
    assert info.summary == f"PATCH {base} (13 bytes)"


def test_preview_of_text_and_binary_bodies(session, server):
    # Given a text body and a binary body
    base, _ = server
    text_info = request_of(
        session, ask(lambda: http_request("POST", base, body="line one\nline 2"))
    )
    binary = bytes(range(256)) * 4
    binary_info = request_of(session, ask(lambda: http_request("POST", f"{base}/b", body=binary)))
    # Then text is shown as text, binary by size and digest only
    assert "body (text):\n  line one\n  line 2" in text_info.preview
    assert "  Content-Type: text/plain; charset=utf-8" in text_info.preview
    assert "  size: 1,024 bytes (1.0 KiB)\n  sha256: " in binary_info.preview
    assert "  content: binary (not shown)" in binary_info.preview


def test_preview_stays_bounded_for_a_50_mb_body(session, server):
    # Given a 50 MB text body and a 50 MB JSON body
    base, received = server
    big_text = ("x" * 99 + "\n").encode() * 500_000
    info = request_of(session, ask(lambda: http_request("POST", base, body=big_text)))
    rows = [{"row": i, "value": "v" * 40} for i in range(1_000_000)]
    json_info = request_of(session, ask(lambda: http_request("POST", f"{base}/j", json=rows)))
    # Then both previews fit the budget and say what they left out
    assert len(info.preview) <= PREVIEW_BUDGET
    assert "  size: 50,000,000 bytes (47.7 MiB)" in info.preview
    assert "more code lines not shown" in info.preview
    assert "more are sent and covered by the fingerprint" in info.preview
    assert len(json_info.preview) <= PREVIEW_BUDGET
    assert received == []


def test_writer_refuses_outside_a_lease(session, server):
    # When the function body is called directly, skipping the gate
    base, received = server
    with pytest.raises(errors.ApprovalRequired):
        http_request.fn("GET", base, headers={}, body=None, json=None, timeout=5.0)
    # Then nothing was sent
    assert received == []


def test_json_payload_under_ordinary_names_is_shown_only_secret_scalars_hidden(session, server):
    # Given a JSON body whose keys contain "key" or "session" but are payload, and a password
    base, _ = server
    body = {
        "keys": ["prod-db", "backups"],
        "session": {"delete_all": True},
        "monkey": "business",
        "auth": {"user": "al", "password": "PW-VALUE"},
    }
    # When it is asked for
    info = request_of(session, ask(lambda: http_request("POST", base, json=body)))
    # Then the payload is shown and only the password is hidden
    for shown in ('"prod-db",', '"backups"', '"delete_all": true', '"monkey": "business"'):
        assert shown in info.preview
    assert '"user": "al",' in info.preview
    assert '"password": "[redacted: 8 characters]"' in info.preview
    assert "PW-VALUE" not in info.preview


def test_a_repeated_json_key_is_shown_every_time_with_a_warning(session, server):
    # Given a JSON body that names the recipient twice
    base, received = server
    body = '{"to":"alice","amount":10,"to":"attacker"}'
    headers = {"Content-Type": "application/json"}
    call = lambda: http_request("POST", base, headers=headers, body=body)  # noqa: E731
    # When it is asked for
    info = request_of(session, ask(call))
    lines = info.preview.splitlines()
    # Then both members are shown, in order, under a warning
    assert any(line.startswith('  warning: The JSON repeats the key(s) "to"') for line in lines)
    members = [line.strip() for line in lines if line.strip().startswith('"')]
    assert members == ['"to": "alice",', '"amount": 10,', '"to": "attacker"']
    # And the exact bytes are what is sent
    decide(session, ask(call))
    call()
    assert received[0]["body"] == body.encode()


def test_form_bodies_show_one_field_a_line_with_secrets_hidden(session, server):
    # Given a form body with a password
    base, received = server
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    body = "user=bob&password=hunter2&next=%2Fhome"
    call = lambda: http_request("POST", base, headers=headers, body=body)  # noqa: E731
    # When it is asked for
    info = request_of(session, ask(call))
    # Then every field is listed, the password hidden
    assert "hunter2" not in info.preview
    assert "  user=bob\n  password=[redacted: 7 characters]\n  next=%2Fhome" in info.preview
    # And the server receives the real body
    decide(session, ask(call))
    call()
    assert received[0]["body"] == body.encode()


def test_non_ascii_urls_are_shown_and_sent_percent_encoded(session, server):
    # Given a URL with non-ASCII characters in the path and the query
    base, received = server
    url = f"{base}/café?q=ü"
    # When it is asked for
    info = request_of(session, ask(lambda: http_request("GET", url)))
    # Then the card shows the encoded form, which is what is sent
    assert info.preview.splitlines()[0] == f"GET {base}/caf%C3%A9?q=%C3%BC"
    decide(session, ask(lambda: http_request("GET", url)))
    response = http_request("GET", url)
    assert response.status == 200
    assert received[0]["path"] == "/caf%C3%A9?q=%C3%BC"


def test_an_internationalised_host_is_shown_in_its_ascii_form(session):
    # When a request to an internationalised host name is asked for
    info = request_of(session, ask(lambda: http_request("GET", "https://bücher.example/x")))
    # Then the card shows the host as it is sent (punycode)
    lines = info.preview.splitlines()
    assert lines[0:2] == ["GET https://xn--bcher-kva.example/x", "host: xn--bcher-kva.example"]
    assert "host name: internationalised, shown as sent: in its ASCII form" in info.preview
