"""What the gate reads and shows before a file operation runs: for each of ``write_file``,
``delete_path`` and ``move_path``, its subject (the reading of the file system its approval
covers), its summary line and its preview (built structured; its text is rendered from it).

A write shows a unified diff against the current content (sizes and sha256 for binary or
very large content), a delete lists every path it removes, a move names both ends and whether
something is replaced. The subject keeps its reading for the call (:mod:`...kernel.handoff`)
and the summary and preview peek at it, so the card shows exactly what was fingerprinted.
The operations themselves are in :mod:`.operations`.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

from ...kernel.handoff import peek, remember
from ...previews.file_tree import (
    Entry,
    add_listing,
    add_tree_counts,
    describe,
    scan,
    tree_state,
)
from ...previews.line_diff import MAX_DIFF_BYTES, add_diff, is_binary
from ...previews.render_text import preview_of
from ...previews.structured import Preview, StructuredPreview
from ...previews.text import Deadline, size_text
from ..common.files_state import FileState, read_state

# -- write_file -------------------------------------------------------------------------------


def _read_for_write(path: str) -> FileState:
    return read_state(path, keep=MAX_DIFF_BYTES)


def write_subject(path: str, data: bytes, encoding: str) -> dict[str, Any]:
    # One read gives both the digest approved here and the content the preview diffs.
    # The mode matters: the new file keeps it, so a chmod after the preview changes the result.
    state: FileState = remember(("write", path), _read_for_write(path))
    return state.subject(path)


def write_summary(path: str, data: bytes, encoding: str) -> str:
    state: FileState | None = peek(("write", path))
    exists = state.mode is not None if state is not None else os.path.exists(path)
    return f"{'Replace' if exists else 'Create'} {path} ({size_text(len(data))})"


def write_preview(path: str, data: bytes, encoding: str) -> Preview:
    structured = StructuredPreview()
    # Peeked, not recalled: the summary reads the same reading (the gate renders it first,
    # and forgets the reading when the call ends).
    state: FileState = peek(("write", path)) or _read_for_write(path)
    exists = state.mode is not None
    verb = "Replace" if exists else "Create"
    before = size_text(state.size) if state.size is not None else "(no file)"
    mode = state.mode
    facts = [
        ("path:file", path),
        ("change", verb),
        ("size", f"{before} -> {size_text(len(data))}"),
        ("mode", f"{oct(mode)} (kept)" if mode is not None else "new file (umask)"),
    ]
    if (state.data is None and exists) or len(data) > MAX_DIFF_BYTES:
        note = f"Not diffed: content over {size_text(MAX_DIFF_BYTES)}."
    else:
        old = state.data or b""
        if not (is_binary(old) or is_binary(data)):
            structured.facts(facts)
            fromfile = f"{path} (current)" if exists else "/dev/null"
            add_diff(structured, old, data, fromfile, f"{path} (new)", Deadline())
            return preview_of(structured)
        note = "Binary content (a NUL byte in the first 8 KiB): no line diff shown."
    new_sha = hashlib.sha256(data).hexdigest()
    if state.size is not None:
        structured.count("bytes now", state.size)
    structured.count("bytes after", len(data), "changed" if exists else "added")
    full_old = state.sha256 if state.size is not None else "-"
    structured.facts([*facts, ("sha256", f"{full_old} -> {new_sha}")])
    structured.note(note)
    return preview_of(structured)


# -- delete_path ------------------------------------------------------------------------------


def delete_summary(path: str, recursive: bool) -> str:
    entries: list[Entry] | None = peek(("delete", path))
    if entries is None:
        entries = scan(path)
    if entries and entries[0].kind == "dir":
        return f"Delete the directory {path} and everything in it"
    return f"Delete {path}"


def delete_preview(path: str, recursive: bool) -> Preview:
    structured = StructuredPreview()
    entries: list[Entry] | None = peek(("delete", path))  # as in write_preview
    if entries is None:
        entries = scan(path)
    add_tree_counts(structured, entries, "removed", verb="to delete")
    structured.facts([("path:delete", path), ("what", describe(entries))])
    add_listing(structured, entries, "Deleted with it")
    return preview_of(structured)


def delete_subject(path: str, recursive: bool) -> Any:
    # The listing approved here is the one the preview shows.
    return tree_state(path, remember(("delete", path), scan(path)))


# -- move_path --------------------------------------------------------------------------------


def _move_scans(source: str, destination: str) -> tuple[list[Entry], list[Entry]]:
    """The scans of both ends the subject made for this call, else new ones.

    Peeked, not recalled: the summary and the preview both read them, in either order (the
    gate forgets them when the call ends).
    """
    kept = peek(("move", source, destination))
    return kept if kept is not None else (scan(source), scan(destination))


def move_summary(source: str, destination: str, overwrite: bool) -> str:
    _, existing = _move_scans(source, destination)
    replaced = " (replacing it)" if existing else ""
    return f"Move {source} -> {destination}{replaced}"


def move_preview(source: str, destination: str, overwrite: bool) -> Preview:
    structured = StructuredPreview()
    entries, existing = _move_scans(source, destination)
    add_tree_counts(structured, entries, verb="to move")
    facts = [
        ("path:source", source),
        ("path:destination", destination),
        ("source", describe(entries)),
    ]
    if existing:
        structured.count("paths to replace", len(existing), "removed")
        facts.append(("replaces", describe(existing)))
    else:
        facts.append(("destination now", "does not exist yet"))
    same_device = os.lstat(source).st_dev == os.stat(os.path.dirname(destination)).st_dev
    how = (
        "renamed in one step (same file system)"
        if same_device
        else "copied, then the source removed (another file system)"
    )
    facts.append(("how", how))
    structured.facts(facts)
    add_listing(structured, entries, "Moved with it")
    return preview_of(structured)


def move_subject(source: str, destination: str, overwrite: bool) -> dict[str, Any]:
    entries, existing = remember(("move", source, destination), (scan(source), scan(destination)))
    return {"source": tree_state(source, entries), "destination": tree_state(destination, existing)}
