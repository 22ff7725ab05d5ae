"""The body part of an ``http_request`` card: JSON, form fields, text or binary, redacted.

Written into the request's structured preview; its text is rendered from that document.

Only :data:`BODY_PREVIEW_BYTES` of a text body and :data:`JSON_PREVIEW_BYTES` of a JSON body
are looked at; every cut is announced and the fingerprint covers all the bytes.
"""

from __future__ import annotations

import hashlib

from ...previews.redact import redact_form, redact_json_text
from ...previews.structured import SHARE_ITEM_COST, StructuredPreview, fitting
from ...previews.text import LINE_BUDGET, Deadline, size_text

__all__ = ["BODY_PREVIEW_BYTES", "JSON_PREVIEW_BYTES", "body_preview"]

#: Body bytes looked at for the preview of text and form bodies; the fingerprint covers all.
BODY_PREVIEW_BYTES = 64 * 1024
#: Largest JSON body parsed for a pretty preview; larger ones are shown as text.
JSON_PREVIEW_BYTES = 1024 * 1024


def body_preview(structured: StructuredPreview, body: bytes, content_type: str) -> None:
    """Add the body to ``structured``: size and digest, then its content."""
    digest = hashlib.sha256(body).hexdigest()
    facts = [
        ("size", size_text(len(body))),
        ("sha256", digest),
        ("content type", content_type or "none"),
    ]
    if "json" in content_type and len(body) <= JSON_PREVIEW_BYTES:
        parsed = _parsed(body)
        if parsed is not None:
            _json(structured, facts, *parsed)
            return
        facts.append(("content", "declared JSON, but it does not parse; shown as text"))
    decoded = _head_text(body)
    if decoded is None or "\x00" in decoded:
        facts.append(("content", "binary (not shown)"))
        structured.facts(facts, title="body")
        return
    structured.facts(facts, title="body")
    if len(body) > BODY_PREVIEW_BYTES:
        structured.note(
            f"Only the first {size_text(BODY_PREVIEW_BYTES)} of the body were looked at; "
            f"{size_text(len(body) - BODY_PREVIEW_BYTES)} more are sent and covered by the "
            "fingerprint."
        )
    if "x-www-form-urlencoded" in content_type:
        # A field cut at the end of the head is shown cut; its name comes before its value.
        fields = [redact_form(field) for field in decoded.split("&")]
        _code(structured, fields, "text", "form fields (values of secret-looking names redacted)")
        return
    _code(structured, decoded.splitlines(), "text", "body (text)")


def _code(structured: StructuredPreview, lines: list[str], language: str, title: str) -> None:
    """As many of the first ``lines`` as the budget can hold as a code block; the rest counted."""
    kept = fitting(lines, structured.budget)
    structured.code("\n".join(lines[:kept]), language, title=title)
    structured.left_out(len(lines) - kept, "code lines")


def _parsed(body: bytes) -> tuple[list[str], list[str]] | None:
    """The pretty-printed, redacted lines of a JSON body and its repeated keys; None if not JSON."""
    try:
        return redact_json_text(body)
    except (ValueError, RecursionError):
        return None


def _json(
    structured: StructuredPreview,
    facts: list[tuple[str, str]],
    lines: list[str],
    repeated: list[str],
) -> None:
    """Add the JSON body pretty-printed and redacted."""
    if repeated:
        names = ", ".join(f'"{name}"' for name in repeated[:10])
        more = f" and {len(repeated) - 10:,} more" if len(repeated) > 10 else ""
        facts.append(
            (
                "warning",
                f"The JSON repeats the key(s) {names}{more} in one object. Servers disagree on "
                "which value counts; every member is shown below as sent.",
            )
        )
    structured.facts(facts, title="body")
    deadline = Deadline()
    room = structured.budget
    kept = 0
    for line in lines:
        if deadline.passed():
            structured.note("The rest of the JSON was not shown: the preview ran out of time.")
            break
        if room <= 0:
            break
        kept += 1
        room -= min(len(line), LINE_BUDGET) + SHARE_ITEM_COST
    title = "JSON (scalar values under secret-looking keys redacted)"
    structured.code("\n".join(lines[:kept]), "json", title=title)
    structured.left_out(len(lines) - kept, "code lines")


def _head_text(body: bytes) -> str | None:
    """The first BODY_PREVIEW_BYTES decoded as UTF-8, or None if they are not UTF-8 text."""
    head = body[:BODY_PREVIEW_BYTES]
    try:
        return head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A cut in the middle of a character at the end of the head is still text.
        if exc.start < len(head) - 3 or len(head) == len(body):
            return None
        return head[: exc.start].decode("utf-8")
