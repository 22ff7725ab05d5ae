"""What an agent's change through the contents manager is, as a person will judge it.

:mod:`.contents` holds every change the contents manager would make for an agent (save,
new, copy, rename, delete, checkpoints) where the manager makes it; this module turns one such
change into a :class:`HeldWrite`: its action, summary, preview and fingerprint, computed from
what would be written (the decoded bytes, the final path) and the target's current state (file
content, or every entry of a folder). The preview uses the engines of the ready operations: a
line diff for text, sizes and sha256 for binary or large content, a listing for a deletion.
After approval the identical change is carried out once; if the target changed in between, it
is refused with APPROVAL_FINGERPRINT_MISMATCH.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...core import errors
from ...core.fingerprint import fingerprint
from ...previews.file_change import MAX_HELD_DIFF_BYTES, change_preview
from ...previews.file_tree import add_listing, add_tree_counts, describe, scan, tree_state
from ...previews.render_text import preview_of
from ...previews.structured import Preview, StructuredPreview
from .routes import os_path


@dataclass(frozen=True)
class HeldWrite:
    """What an agent's contents request would change, as a person will judge it."""

    action: str
    summary: str
    preview: str
    fingerprint: str
    slot: str
    #: The structured preview (docs/protocol.md 4.1) ``preview`` is rendered from.
    structured: dict[str, Any] | None = None


def _state(path: Path) -> Any:
    """What the fingerprint binds of a target: its entries (files by content), or None."""
    return tree_state(os.fspath(path))


def _write_preview(
    api_path: str, target: Path, new: bytes, facts: tuple[tuple[str, str], ...] = ()
) -> tuple[str, Preview]:
    if not target.is_file():
        return change_preview(api_path, None, 0, new, facts=facts)
    try:
        size = target.stat().st_size
        old = target.read_bytes() if size <= MAX_HELD_DIFF_BYTES else b""
    except OSError:
        size, old = 0, b""
    return change_preview(api_path, old, size, new, facts=facts)


def _tree_preview(
    verb: str,
    api_path: str,
    target: Path,
    extra: str = "",
    facts: tuple[tuple[str, str], ...] = (),
    tone: str = "neutral",
) -> tuple[str, Preview]:
    entries = scan(os.fspath(target))
    structured = StructuredPreview()
    add_tree_counts(structured, entries, tone)
    structured.facts(
        [("change", verb), ("path:path", api_path), *facts, ("what", describe(entries))]
    )
    add_listing(structured, entries, "Inside")
    return f"{verb} {api_path}{extra}", preview_of(structured)


def _held(
    action: str,
    summary: str,
    preview: Preview,
    agent: str,
    request: dict[str, Any],
    state: dict[str, Any],
) -> HeldWrite:
    # The slot names the change without the target's state: an approval of it meets a
    # changed target as a fingerprint mismatch, not as a new request.
    slot = fingerprint({"action": action, "agent": agent, "request": request})
    digest = fingerprint({"action": action, "agent": agent, "request": request, "state": state})
    return HeldWrite(action, summary, preview.text, digest, slot, preview.structured)


def held_file_write(
    api_path: str, new: bytes, root: Path, agent: str, copy_of: str | None = None
) -> HeldWrite:
    """Writing ``new`` at ``api_path`` (create or replace); ``copy_of`` names a copy's source."""
    target = os_path(root, api_path)
    facts = (("copy of", copy_of),) if copy_of is not None else ()
    summary, preview = _write_preview(api_path, target, new, facts)
    request: dict[str, Any] = {
        "op": "write",
        "path": api_path,
        "content_sha256": hashlib.sha256(new).hexdigest(),
    }
    if copy_of is not None:
        summary = f"{summary}, a copy of {copy_of}"
        request["copy_of"] = copy_of
    action = "file.copy" if copy_of is not None else "file.write"
    return _held(action, summary, preview, agent, request, {"target": _state(target)})


def held_new_folder(api_path: str, root: Path, agent: str) -> HeldWrite:
    """Creating the folder ``api_path``."""
    structured = StructuredPreview()
    structured.count("folders to create", 1, "added")
    structured.facts([("change", "Create folder"), ("path:path", api_path)])
    shown = preview_of(structured)
    request = {"op": "mkdir", "path": api_path}
    state = {"target": _state(os_path(root, api_path))}
    return _held("file.mkdir", f"Create the folder {api_path}", shown, agent, request, state)


def held_delete(api_path: str, root: Path, agent: str) -> HeldWrite:
    """Deleting ``api_path`` (a file, or a folder with all it holds)."""
    target = os_path(root, api_path)
    summary, preview = _tree_preview("Delete", api_path, target, tone="removed")
    request = {"op": "delete", "path": api_path}
    return _held("file.delete", summary, preview, agent, request, {"target": _state(target)})


def held_rename(old_path: str, new_path: str, root: Path, agent: str) -> HeldWrite:
    """Renaming or moving ``old_path`` to ``new_path``."""
    target = os_path(root, old_path)
    summary, preview = _tree_preview(
        "Rename", old_path, target, f" to {new_path}", (("path:to", new_path),)
    )
    request = {"op": "rename", "path": old_path, "to": new_path}
    state = {"target": _state(target), "destination": _state(os_path(root, new_path))}
    return _held("file.move", summary, preview, agent, request, state)


def held_checkpoint(
    op: str, api_path: str, checkpoint_id: str, root: Path, agent: str
) -> HeldWrite:
    """A checkpoint change of ``api_path``: ``create`` (replaces the one a person would restore
    from), ``restore`` or ``delete``."""
    target = os_path(root, api_path)
    if op == "create":
        action = "file.checkpoint"
        summary, preview = _tree_preview("Replace the checkpoint of", api_path, target)
    else:
        verb = "Restore" if op == "restore" else "Delete checkpoint of"
        action = "file.restore" if op == "restore" else "file.delete_checkpoint"
        summary, preview = _tree_preview(
            verb,
            api_path,
            target,
            f" (checkpoint {checkpoint_id})",
            (("checkpoint", checkpoint_id),),
        )
    request = {"op": f"checkpoint.{op}", "path": api_path, "checkpoint_id": checkpoint_id}
    return _held(action, summary, preview, agent, request, {"target": _state(target)})


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
