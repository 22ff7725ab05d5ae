"""The body part of an ``http_request`` card: JSON, form fields, text or binary, redacted.

Only :data:`BODY_PREVIEW_BYTES` of a text body and :data:`JSON_PREVIEW_BYTES` of a JSON body
are looked at; every cut is announced and the fingerprint covers all the bytes.
"""

from __future__ import annotations

import hashlib

from ...previews.text import Deadline, PreviewText, size_text
from ..common.redact import redact_form, redact_json_text

__all__ = ["BODY_PREVIEW_BYTES", "JSON_PREVIEW_BYTES", "body_preview"]

#: Body bytes looked at for the preview of text and form bodies; the fingerprint covers all.
BODY_PREVIEW_BYTES = 64 * 1024
#: Largest JSON body parsed for a pretty preview; larger ones are shown as text.
JSON_PREVIEW_BYTES = 1024 * 1024


def body_preview(text: PreviewText, body: bytes, content_type: str) -> None:
    """Add the body to ``text``: size and digest, then its content as fits its type."""
    digest = hashlib.sha256(body).hexdigest()[:16]
    text.add(f"body: {size_text(len(body))}, sha256 {digest}…")
    if "json" in content_type and len(body) <= JSON_PREVIEW_BYTES and _json(text, body):
        return
    decoded = _head_text(body)
    if decoded is None or "\x00" in decoded:
        text.add("  binary (not shown)")
        return
    if len(body) > BODY_PREVIEW_BYTES:
        text.note(
            f"Only the first {size_text(BODY_PREVIEW_BYTES)} of the body were looked at; "
            f"{size_text(len(body) - BODY_PREVIEW_BYTES)} more are sent and covered by the "
            "fingerprint."
        )
    if "x-www-form-urlencoded" in content_type:
        text.add("  form fields, one a line (values of secret-looking names redacted):")
        # A field cut at the end of the head is shown cut; its name comes before its value.
        text.extend((f"    {redact_form(field)}" for field in decoded.split("&")), "form fields")
        return
    text.add("  text:")
    text.extend((f"    {line}" for line in decoded.splitlines()), kind="body lines")


def _json(text: PreviewText, body: bytes) -> bool:
    """Add the JSON body pretty-printed and redacted; False if it does not parse."""
    try:
        lines, repeated = redact_json_text(body)
    except (ValueError, RecursionError):
        text.add("  (declared JSON, but it does not parse; shown as text)")
        return False
    if repeated:
        names = ", ".join(f'"{name}"' for name in repeated[:10])
        more = f" and {len(repeated) - 10:,} more" if len(repeated) > 10 else ""
        text.add(
            f"  WARNING: the JSON repeats the key(s) {names}{more} in one object. Servers "
            "disagree on which value counts; every member is shown below as sent."
        )
    text.add("  JSON (scalar values under secret-looking keys redacted):")
    deadline = Deadline()
    for index, line in enumerate(lines):
        if deadline.passed():
            text.note("The rest of the JSON was not shown: the preview ran out of time.")
            break
        if not text.add(f"    {line}", kind="JSON lines"):
            text.left_out(len(lines) - index - 1, "JSON lines")  # counted, not rendered
            break
    return True


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
