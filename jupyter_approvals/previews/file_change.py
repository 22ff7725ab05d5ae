"""The preview of one file's change, from its bytes before and after: a line diff for text,
sizes and the new sha256 for binary or very large content.

One builder for every place the server shows a whole file changing: an agent's held contents
write or room edit (``server/gate``) and a sandboxed kernel's change set (``server/sandbox``).
"""

from __future__ import annotations

import hashlib

from .line_diff import add_diff, is_binary
from .render_text import preview_of
from .source_encoding import refuse_misread_source
from .structured import Preview, StructuredPreview
from .text import Deadline, size_text

#: Content is diffed up to this size, above the ready operations' MAX_DIFF_BYTES: the server
#: holds the whole content in memory anyway, and the diff is what a person reads.
MAX_HELD_DIFF_BYTES = 256 << 20


def change_preview(
    api_path: str,
    old: bytes | None,
    old_size: int,
    new: bytes,
    where: str = "current",
    facts: tuple[tuple[str, str], ...] = (),
) -> tuple[str, Preview]:
    """(summary, preview) of replacing ``old`` (None: no such file) with ``new``.

    A line diff from the engine ``ops.write_file`` shows; sizes and a digest for binary
    content or content over :data:`MAX_HELD_DIFF_BYTES` (``old_size`` is the old size then).
    The preview is built structured (the path, the change, the sizes, then ``facts``; the
    diff's counts and hunks, or the sizes and the full digest); its text is rendered from it.

    Raises APPROVAL_SOURCE_ENCODING when Python would read ``new`` otherwise than it is shown
    (a PEP 263 coding cookie).
    """
    refuse_misread_source(api_path, new)
    structured = StructuredPreview()
    verb = "Create" if old is None else "Replace"
    summary = f"{verb} {api_path} ({size_text(len(new))})"
    items = [("path:file", api_path), ("change", verb)]
    if old is not None:
        items.append(("size", f"{size_text(old_size)} -> {size_text(len(new))}"))
        if old_size > MAX_HELD_DIFF_BYTES or len(new) > MAX_HELD_DIFF_BYTES:
            note = f"Not diffed: content over {size_text(MAX_HELD_DIFF_BYTES)}."
            _undiffed(structured, old_size, new, [*items, *facts], note, digest=False)
            return summary, preview_of(structured)
    else:
        items.append(("size", size_text(len(new))))
    before = old or b""
    if is_binary(before) or is_binary(new):
        note = "Binary content (a NUL byte in the first 8 KiB): no line diff shown."
        size = old_size if old is not None else None
        _undiffed(structured, size, new, [*items, *facts], note, digest=True)
        return summary, preview_of(structured)
    structured.facts([*items, *facts])
    fromfile = f"{api_path} ({where})" if old is not None else "/dev/null"
    add_diff(structured, before, new, fromfile, f"{api_path} (new)", Deadline())
    return summary, preview_of(structured)


def _undiffed(
    structured: StructuredPreview,
    old_size: int | None,
    new: bytes,
    items: list[tuple[str, str]],
    note: str,
    digest: bool,
) -> None:
    """The structured form of a write shown without a diff: sizes, and the new digest."""
    if old_size is not None:
        structured.count("bytes now", old_size)
    structured.count("bytes after", len(new), "changed" if old_size is not None else "added")
    if digest:
        items = [*items, ("sha256", f"-> {hashlib.sha256(new).hexdigest()}")]
    structured.facts(items)
    structured.note(note)
