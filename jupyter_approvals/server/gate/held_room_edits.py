"""An agent's edit of a text file through a collaboration room, held like a contents write.

A room saves what is typed into it through the contents manager, inside the server, so an
agent's Yjs update to the room of a file that is not a notebook is a file write. Each such
update is applied to a copy of the room's document first: one that leaves the text as it is
passes; one that changes the text becomes a held ``file.write`` request, previewed as the line
diff from the room's text to the text it leads to, and fingerprinted with both. Until a person
approved exactly that change, the update never reaches the room (the agent is told with a
coded message, then the socket closes); a client that sends it again after approval (on
reconnecting, Yjs clients send what the server lacks) has it applied once.

What binds is the text: the same change made by a fresh client is the same request, and one
made on a room whose text changed since it was approved is refused with
APPROVAL_FINGERPRINT_MISMATCH (the approval is spent).

pycrdt is imported when a room message is screened: it comes with jupyter-collaboration, which
is the only way rooms exist.
"""

from __future__ import annotations

import hashlib
from typing import Any

from ...core import errors
from ...core.fingerprint import fingerprint
from ...previews.file_change import change_preview
from .held_files import HeldWrite

ACTION = "file.write"
#: The room document's root that jupyter_ydoc's text document saves, and its metadata map.
_SOURCE, _STATE = "source", "state"


def room_kind(room_id: str) -> str:
    """``notebook``, ``text`` (a file's room as text), ``document`` (any other file's room),
    or ``transient`` (awareness and the like: nothing saved), from a room id
    ``format:type:file_id`` as jupyter-collaboration names them."""
    parts = room_id.split(":", 2)
    if len(parts) < 3:
        return "transient"
    if parts[:2] == ["json", "notebook"]:
        return "notebook"
    if parts[:2] == ["text", "file"]:
        return "text"
    return "document"


def _text_and_state(doc: Any) -> tuple[str, Any]:
    from pycrdt import Map, Text

    return str(doc.get(_SOURCE, type=Text)), doc.get(_STATE, type=Map).to_py()


def room_texts(room_doc: Any, update: bytes, api_path: str) -> tuple[str, str] | None:
    """(the room's text, the text ``update`` leads to), or None when the text stays as it is
    (a sync message with nothing new, a cursor). Runs on the event loop (pycrdt documents
    stay in their thread); the preview of the change does not (:func:`held_text_change`).

    Raises APPROVAL_AGENT_FORBIDDEN for an update that changes the document's metadata
    (path, dirty flag, hash: what clients read about the file, never an agent's to set).
    """
    from pycrdt import Doc

    before, state_before = _text_and_state(room_doc)
    scratch: Any = Doc()
    scratch.apply_update(room_doc.get_update())
    scratch.apply_update(update)
    after, state_after = _text_and_state(scratch)
    if state_after != state_before:
        raise errors.ApprovalAgentForbidden(
            f"Agents may change only the text of {api_path!r} in its room, not the document's "
            "metadata. The update was dropped.",
            path=api_path,
        )
    return None if after == before else (before, after)


def held_text_change(api_path: str, before: str, after: str, agent: str) -> HeldWrite:
    """The held form of changing text file ``api_path``'s room from ``before`` to ``after``."""
    old, new = before.encode("utf-8"), after.encode("utf-8")
    summary, preview = change_preview(
        api_path, old, len(old), new, where="as in the room", facts=(("via", "collaboration room"),)
    )
    request = {"method": "ROOM", "path": api_path}
    # The slot is the file: a later, different edit meets an approval as a mismatch.
    slot = fingerprint({"action": ACTION, "agent": agent, "request": request})
    digest = fingerprint(
        {
            "action": ACTION,
            "agent": agent,
            "request": {**request, "content_sha256": hashlib.sha256(new).hexdigest()},
            "state": {"room_text_sha256": hashlib.sha256(old).hexdigest()},
        }
    )
    return HeldWrite(
        ACTION,
        f"{summary} in a collaboration room",
        preview.text,
        digest,
        slot,
        preview.structured,
    )


def held_room_edit(room_doc: Any, update: bytes, api_path: str, agent: str) -> HeldWrite | None:
    """The held form of ``update`` to the room of text file ``api_path``, or None when the
    text stays as it is: :func:`room_texts`, then :func:`held_text_change`."""
    texts = room_texts(room_doc, update, api_path)
    return None if texts is None else held_text_change(api_path, *texts, agent)
