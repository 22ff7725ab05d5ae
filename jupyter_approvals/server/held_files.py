"""Agent writes through the contents API, held until a person approved exactly that change.

Held: a ``PUT`` of a file that is not a notebook (create or overwrite, any format), every
``DELETE`` (file, folder or notebook), every ``PATCH`` (rename or move), a ``POST`` copy, and a
checkpoint restore or delete. Creating and saving notebooks stays open to agents (that is how
agent clients edit cells); the notebook screen of :mod:`.agent_notebooks` applies to them.

Each held request is fingerprinted with the target's current state (file content, or every
entry of a folder) and previewed with the engines the ready operations use: a line diff for
text, sizes and sha256 for binary or large content, a listing for a deletion. After approval
the agent sends the identical request again and it is carried out once; if the target changed
in between, the identical request is refused with APPROVAL_FINGERPRINT_MISMATCH.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core import errors
from ..core.fingerprint import fingerprint
from ..previews.file_tree import add_listing, add_tree_counts, describe, scan, tree_state
from ..previews.line_diff import add_diff_preview, is_binary
from ..previews.structured import Preview, StructuredPreview
from ..previews.text import Deadline, PreviewText, size_text
from .agent_routes import json_body, os_path

_CONTENTS = "jupyter_server.services.contents.handlers"
#: Held writes are diffed up to this size, above the ready operations' MAX_DIFF_BYTES: the
#: server already holds the whole request body in memory, and the diff is what a person reads.
MAX_HELD_DIFF_BYTES = 256 << 20


@dataclass(frozen=True)
class HeldWrite:
    """What an agent's contents request would change, as a person will judge it."""

    action: str
    summary: str
    preview: str
    fingerprint: str
    slot: str
    #: The structured preview (docs/protocol.md 4.1) built beside ``preview``.
    structured: dict[str, Any] | None = None


def _new_bytes(model: dict[str, Any]) -> bytes | None:
    """The bytes a ``PUT`` of type ``file`` writes, decoded as jupyter_server decodes them
    (``base64.decodebytes``, which skips stray characters). None: jupyter_server refuses it too.
    """
    content = model.get("content")
    if not isinstance(content, str):
        return None
    try:
        if model.get("format") == "base64":
            return base64.decodebytes(content.encode("ascii"))
        return content.encode("utf-8")
    except (binascii.Error, UnicodeError, ValueError):
        return None


def _state(path: Path) -> Any:
    """What the fingerprint binds of a target: its entries (files by content), or None."""
    return tree_state(os.fspath(path))


def _write_preview(api_path: str, target: Path, new: bytes) -> tuple[str, Preview]:
    if not target.is_file():
        return change_preview(api_path, None, 0, new)
    try:
        size = target.stat().st_size
        old = target.read_bytes() if size <= MAX_HELD_DIFF_BYTES else b""
    except OSError:
        size, old = 0, b""
    return change_preview(api_path, old, size, new)


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
    The structured form, built in the same pass, carries the same facts (and ``facts`` after
    them), the diff's counts and hunks, or the sizes and the full digest.
    """
    preview = PreviewText()
    structured = StructuredPreview()
    verb = "Create" if old is None else "Replace"
    summary = f"{verb} {api_path} ({size_text(len(new))})"
    preview.add(f"{verb} {api_path}")
    items = [("path:file", api_path), ("change", verb)]
    if old is not None:
        sizes = f"{size_text(old_size)} -> {size_text(len(new))}"
        preview.add(f"Size: {sizes}")
        items.append(("size", sizes))
        if old_size > MAX_HELD_DIFF_BYTES or len(new) > MAX_HELD_DIFF_BYTES:
            note = f"Not diffed: content over {size_text(MAX_HELD_DIFF_BYTES)}."
            preview.note(note)
            _undiffed(structured, old_size, new, [*items, *facts], note, digest=False)
            return summary, Preview(preview.render(), structured.document())
    else:
        items.append(("size", size_text(len(new))))
    before = old or b""
    if is_binary(before) or is_binary(new):
        digest = hashlib.sha256(new).hexdigest()
        preview.add(f"sha256: -> {digest[:12]}")
        note = "Binary content (a NUL byte in the first 8 KiB): no line diff shown."
        preview.note(note)
        size = old_size if old is not None else None
        _undiffed(structured, size, new, [*items, *facts], note, digest=True)
        return summary, Preview(preview.render(), structured.document())
    structured.facts([*items, *facts])
    fromfile = f"{api_path} ({where})" if old is not None else "/dev/null"
    add_diff_preview(
        preview, before, new, fromfile, f"{api_path} (new)", Deadline(), structured=structured
    )
    return summary, Preview(preview.render(), structured.document())


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
        structured.count("bytes before", old_size)
    structured.count("bytes after", len(new), "changed" if old_size is not None else "added")
    if digest:
        items = [*items, ("sha256", f"-> {hashlib.sha256(new).hexdigest()}")]
    structured.facts(items)
    structured.note(note)


def _tree_preview(
    verb: str,
    api_path: str,
    target: Path,
    extra: str = "",
    facts: tuple[tuple[str, str], ...] = (),
    tone: str = "neutral",
) -> tuple[str, Preview]:
    entries = scan(os.fspath(target))
    what = describe(entries)
    preview = PreviewText()
    preview.add(f"{verb} {api_path}{extra}: {what}")
    structured = StructuredPreview()
    add_tree_counts(structured, entries, tone)
    structured.facts([("change", verb), ("path:path", api_path), *facts, ("what", what)])
    add_listing(preview, entries, structured=structured, title="Inside")
    return f"{verb} {api_path}{extra}", Preview(preview.render(), structured.document())


def held_write(
    handler_name: str,
    method: str,
    path_kwargs: dict[str, Any],
    raw_body: bytes,
    root: Path,
    agent: str,
) -> HeldWrite | None:
    """The held form of an agent's contents request, or None when it is not held."""
    api_path = str(path_kwargs.get("path") or "").strip("/")
    target = os_path(root, api_path)
    model = json_body(raw_body)  # admit() refused bodies that do not parse
    request: dict[str, Any] = {"method": method, "path": api_path}
    state: dict[str, Any] = {"target": _state(target)}
    if handler_name == f"{_CONTENTS}.ContentsHandler" and method == "PUT":
        if model.get("copy_from") is not None:
            return None  # a copy by PUT is refused by jupyter_server itself (405)
        if model.get("type") != "file":
            return None  # notebooks (screened elsewhere, at .ipynb paths only) and folders
        new = _new_bytes(model)
        if new is None:
            # Whatever jupyter_server would make of it, it is held, never let through.
            new = json.dumps(model.get("content"), sort_keys=True).encode("utf-8")
        action = "file.write"
        summary, preview = _write_preview(api_path, target, new)
        request["content_sha256"] = hashlib.sha256(new).hexdigest()
        request["format"] = model.get("format")
    elif handler_name == f"{_CONTENTS}.ContentsHandler" and method == "DELETE":
        action = "file.delete"
        summary, preview = _tree_preview("Delete", api_path, target, tone="removed")
    elif handler_name == f"{_CONTENTS}.ContentsHandler" and method == "PATCH":
        destination = str(model.get("path") or "").strip("/")
        action = "file.move"
        summary, preview = _tree_preview(
            "Rename", api_path, target, f" to {destination}", (("path:to", destination),)
        )
        request["to"] = destination
        state["destination"] = _state(os_path(root, destination))
    elif handler_name == f"{_CONTENTS}.ContentsHandler" and method == "POST":
        source = model.get("copy_from")
        if not isinstance(source, str):
            return None  # a new untitled file, folder or notebook
        action = "file.copy"
        source_path = os_path(root, source)
        summary, preview = _tree_preview(
            "Copy",
            source.strip("/"),
            source_path,
            f" into {api_path or '/'}",
            (("path:into", api_path or "/"),),
        )
        request["copy_from"] = source.strip("/")
        state["source"] = _state(source_path)
    elif handler_name == f"{_CONTENTS}.CheckpointsHandler" and method == "POST":
        # A new checkpoint replaces the one a person would restore from.
        action = "file.checkpoint"
        summary, preview = _tree_preview("Replace the checkpoint of", api_path, target)
    elif handler_name == f"{_CONTENTS}.ModifyCheckpointsHandler":
        checkpoint = str(path_kwargs.get("checkpoint_id") or "")
        verb = "Restore" if method == "POST" else "Delete checkpoint of"
        action = "file.restore" if method == "POST" else "file.delete_checkpoint"
        summary, preview = _tree_preview(
            verb, api_path, target, f" (checkpoint {checkpoint})", (("checkpoint", checkpoint),)
        )
        request["checkpoint_id"] = checkpoint
    else:
        return None
    # The slot names the request without the target's state: an approval of it meets a
    # changed target as a fingerprint mismatch, not as a new request.
    slot = fingerprint({"action": action, "agent": agent, "request": request})
    digest = fingerprint({"action": action, "agent": agent, "request": request, "state": state})
    return HeldWrite(action, summary, preview.text, digest, slot, preview.structured)


def pending_write_error(info_id: str, fp: str, summary: str) -> errors.ApprovalPending:
    """What the agent's HTTP call answers while its write waits (status 409)."""
    return errors.ApprovalPending(
        f"APPROVAL_PENDING: nothing was written. '{summary}' is held at the Jupyter server until "
        f"a person approves it (request {info_id}). Ask the person to review it in JupyterLab's "
        "Approvals sidebar, then send exactly the same request again: it is then carried out "
        "once.",
        request_id=info_id,
        fingerprint=fp,
    )
