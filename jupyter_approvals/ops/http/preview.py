"""The body part of an ``http_request`` card: JSON, form fields, text or binary, redacted.

Only :data:`BODY_PREVIEW_BYTES` of a text body and :data:`JSON_PREVIEW_BYTES` of a JSON body
are looked at; every cut is announced and the fingerprint covers all the bytes.
"""

from __future__ import annotations

import hashlib

from ...previews.structured import SHARE_ITEM_COST, StructuredPreview, fitting
from ...previews.text import LINE_BUDGET, Deadline, PreviewText, size_text
from ..common.redact import redact_form, redact_json_text

__all__ = ["BODY_PREVIEW_BYTES", "JSON_PREVIEW_BYTES", "body_preview"]

#: Body bytes looked at for the preview of text and form bodies; the fingerprint covers all.
BODY_PREVIEW_BYTES = 64 * 1024
#: Largest JSON body parsed for a pretty preview; larger ones are shown as text.
JSON_PREVIEW_BYTES = 1024 * 1024


def body_preview(
    text: PreviewText, body: bytes, content_type: str, structured: StructuredPreview
) -> None:
    """Add the body to ``text`` and ``structured``: size and digest, then its content."""
    digest = hashlib.sha256(body).hexdigest()
    text.add(f"body: {size_text(len(body))}, sha256 {digest[:16]}…")
    facts = [
        ("size", size_text(len(body))),
        ("sha256", digest),
        ("content type", content_type or "none"),
    ]
    if "json" in content_type and len(body) <= JSON_PREVIEW_BYTES:
        parsed = _parsed(body)
        if parsed is not None:
            _json(text, structured, facts, *parsed)
            return
        text.add("  (declared JSON, but it does not parse; shown as text)")
        facts.append(("content", "declared JSON, but it does not parse; shown as text"))
    decoded = _head_text(body)
    if decoded is None or "\x00" in decoded:
        text.add("  binary (not shown)")
        facts.append(("content", "binary (not shown)"))
        structured.facts(facts, title="body")
        return
    structured.facts(facts, title="body")
    if len(body) > BODY_PREVIEW_BYTES:
        cut = (
            f"Only the first {size_text(BODY_PREVIEW_BYTES)} of the body were looked at; "
            f"{size_text(len(body) - BODY_PREVIEW_BYTES)} more are sent and covered by the "
            "fingerprint."
        )
        text.note(cut)
        structured.note(cut)
    if "x-www-form-urlencoded" in content_type:
        text.add("  form fields, one a line (values of secret-looking names redacted):")
        # A field cut at the end of the head is shown cut; its name comes before its value.
        fields = [redact_form(field) for field in decoded.split("&")]
        text.extend((f"    {field}" for field in fields), "form fields")
        _code(structured, fields, "text", "form fields (values of secret-looking names redacted)")
        return
    text.add("  text:")
    lines = decoded.splitlines()
    text.extend((f"    {line}" for line in lines), kind="body lines")
    _code(structured, lines, "text", "body (text)")


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
    text: PreviewText,
    structured: StructuredPreview,
    facts: list[tuple[str, str]],
    lines: list[str],
    repeated: list[str],
) -> None:
    """Add the JSON body pretty-printed and redacted."""
    if repeated:
        names = ", ".join(f'"{name}"' for name in repeated[:10])
        more = f" and {len(repeated) - 10:,} more" if len(repeated) > 10 else ""
        warning = (
            f"the JSON repeats the key(s) {names}{more} in one object. Servers "
            "disagree on which value counts; every member is shown below as sent."
        )
        text.add(f"  WARNING: {warning}")
        facts.append(("warning", warning[0].upper() + warning[1:]))
    structured.facts(facts, title="body")
    text.add("  JSON (scalar values under secret-looking keys redacted):")
    deadline = Deadline()
    # The text keeps fewer lines than the structured form may: each stops on its own budget.
    text_open = True
    room = structured.budget
    kept = 0
    for index, line in enumerate(lines):
        if deadline.passed():
            late = "The rest of the JSON was not shown: the preview ran out of time."
            if text_open:
                text.note(late)
            structured.note(late)
            break
        if text_open and not text.add(f"    {line}", kind="JSON lines"):
            text.left_out(len(lines) - index - 1, "JSON lines")  # counted, not rendered
            text_open = False
        if room > 0:
            kept += 1
            room -= min(len(line), LINE_BUDGET) + SHARE_ITEM_COST
        elif not text_open:
            break
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
