"""http_request's structured preview: the method and exact URL first, then headers and body.

Asking never sends anything, so these tests need no server.
"""

from __future__ import annotations

import hashlib
import json

from jupyter_approvals.core.structured import checked_structured
from jupyter_approvals.ops import http_request
from jupyter_approvals.previews.structured import STRUCTURED_BUDGET

from ..conftest import ask, request_of

BASE = "http://127.0.0.1:9"


def _blocks(document: dict, kind: str) -> list[dict]:
    return [block for block in document["blocks"] if block["type"] == kind]


def _facts(document: dict, title: str | None) -> dict[str, str]:
    [block] = [b for b in _blocks(document, "facts") if b["title"] == title]
    return {item["label"]: item["value"] for item in block["items"]}


def test_the_request_line_comes_first_with_secrets_hidden_as_in_the_text(session):
    # Given a JSON request with a secret in the query, a bearer token and a secret JSON value
    url = f"{BASE}/upload?api_key=k-12345&page=2"
    headers = {"Authorization": "Bearer tok-98765", "Accept": "application/json"}
    payload = {"user": "alice", "password": "pw-55555", "n": [1, 2]}
    # When it is asked for
    info = request_of(
        session, ask(lambda: http_request("put", url, headers=headers, json=payload, timeout=7))
    )
    document = info.structured
    # Then the headline counts the headers and the body's bytes
    body = json.dumps(payload).encode()
    assert document["headline"] == [
        {"label": "headers", "count": 3, "tone": "neutral"},
        {"label": "body bytes", "count": len(body), "tone": "neutral"},
    ]
    # And the first block is the method and the exact URL, the secret hidden as the text hides it
    first = document["blocks"][0]
    shown_url = f"{BASE}/upload?api_key=[redacted: 7 characters]&page=2"
    assert (first["type"], first["method"], first["url"]) == ("request", "PUT", shown_url)
    assert info.preview.splitlines()[1] == f"PUT {shown_url}"
    # And where it goes, the headers and the body are facts
    assert _facts(document, None) == {
        "host": "127.0.0.1",
        "port": "9",
        "TLS": "no",
        "redirects": "not followed",
        "timeout": "7 s",
    }
    shown_headers = _facts(document, "headers (3)")
    assert shown_headers["Authorization"] == "Bearer [redacted: 9 characters]"
    assert shown_headers["Content-Type"] == "application/json"
    assert _facts(document, "body")["size"] == f"{len(body)} bytes"
    # And the body is JSON code, pretty-printed as in the text, the secret value hidden
    [code] = _blocks(document, "code")
    assert code["language"] == "json"
    assert json.loads(code["text"]) == {**payload, "password": "[redacted: 8 characters]"}
    for secret in ("k-12345", "tok-98765", "pw-55555"):
        assert secret not in json.dumps(document)
    assert checked_structured(document, 64_000) == document


def test_form_text_and_binary_bodies_and_their_text(session):
    # Given a form body, a text body and a binary body
    form = "user=bob&password=hunter2&next=%2Fhome"
    kind = {"Content-Type": "application/x-www-form-urlencoded"}
    form_info = request_of(
        session, ask(lambda: http_request("POST", BASE, headers=kind, body=form))
    )
    text_info = request_of(
        session, ask(lambda: http_request("POST", f"{BASE}/t", body="line one\nline 2"))
    )
    binary = bytes(range(256)) * 4
    binary_info = request_of(session, ask(lambda: http_request("POST", f"{BASE}/b", body=binary)))
    # Then a form is one field a line, secrets hidden
    [fields] = _blocks(form_info.structured, "code")
    assert fields["text"] == "user=bob\npassword=[redacted: 7 characters]\nnext=%2Fhome"
    # And text is a text code block
    [lines] = _blocks(text_info.structured, "code")
    assert (lines["language"], lines["text"]) == ("text", "line one\nline 2")
    # And binary is named as such, with no code block
    assert _facts(binary_info.structured, "body")["content"] == "binary (not shown)"
    assert _blocks(binary_info.structured, "code") == []
    # And the text preview of the form says the same, block by block
    assert form_info.preview == "\n".join(
        [
            "1 header, 38 body bytes",
            f"POST {BASE}",
            "host: 127.0.0.1",
            "port: 9",
            "TLS: no",
            "redirects: not followed",
            "timeout: 30 s",
            "headers (1):",
            "  Content-Type: application/x-www-form-urlencoded",
            "  added by the client: Host, Accept-Encoding: identity and, with a body, "
            "Content-Length",
            "body:",
            "  size: 38 bytes",
            f"  sha256: {hashlib.sha256(b'user=bob&password=hunter2&next=%2Fhome').hexdigest()}",
            "  content type: application/x-www-form-urlencoded",
            "form fields (values of secret-looking names redacted):",
            "  user=bob",
            "  password=[redacted: 7 characters]",
            "  next=%2Fhome",
        ]
    )


def test_a_repeated_json_key_is_a_warning_fact_and_every_member_is_shown(session):
    # Given a JSON body that repeats a key
    kind = {"Content-Type": "application/json"}
    info = request_of(
        session, ask(lambda: http_request("POST", BASE, headers=kind, body='{"a": 1, "a": 2}'))
    )
    # Then the body's facts warn, and the code shows both members
    assert _facts(info.structured, "body")["warning"].startswith('The JSON repeats the key(s) "a"')
    [code] = _blocks(info.structured, "code")
    assert code["text"] == '{\n  "a": 1,\n  "a": 2\n}'


def test_huge_bodies_stay_within_the_budget_with_the_cuts_announced(session):
    # Given a 5 MB text body and a JSON body of 10,000 rows
    big_text = ("x" * 99 + "\n").encode() * 50_000
    info = request_of(session, ask(lambda: http_request("POST", BASE, body=big_text)))
    rows = [{"row": i, "value": "v" * 40} for i in range(10_000)]
    json_info = request_of(session, ask(lambda: http_request("POST", f"{BASE}/j", json=rows)))
    for document in (info.structured, json_info.structured):
        # Then each fits the budget, the request line and the facts are kept
        compact = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
        assert len(compact) <= STRUCTURED_BUDGET
        assert checked_structured(document, 64_000) == document
        assert document["blocks"][0]["type"] == "request"
        # And the lines left out are counted
        [code] = _blocks(document, "code")
        [left_out] = document["left_out"]
        assert left_out["kind"] == "code lines"
        assert left_out["count"] > 0
    # And every line the text looked at is either shown or counted
    [code] = _blocks(info.structured, "code")
    [left_out] = info.structured["left_out"]
    assert len(code["text"].split("\n")) + left_out["count"] == 65_536 // 100 + 1
    assert any("more are sent and covered" in note for note in info.structured["notes"])
    [code] = _blocks(json_info.structured, "code")
    [left_out] = json_info.structured["left_out"]
    assert len(code["text"].split("\n")) + left_out["count"] == 2 + 10_000 * 4
