"""An agent's edits of a notebook through a collaboration room cannot make an output trusted.

JupyterLab takes a cell's ``trusted`` from the room's shared document, and runs the script of a
trusted output in the person's page, where script can press Approve. So every document update
an agent sends on a room websocket (jupyter-collaboration) is first applied to a copy of the
room's document: if afterwards a cell is trusted and has rich output (anything but plain text
and images) that it did not have trusted before, the update is dropped and the agent's socket
closed. Everything else an agent client does in a room (insert, edit, delete cells, write the
outputs of code the person approved) passes unchanged.

pycrdt is imported when a room message is screened: it comes with jupyter-collaboration, which
is the only way rooms exist.
"""

from __future__ import annotations

import json
from typing import Any

#: Output data an untrusted page shows as is; anything else is rich content.
PLAIN_MIME_TYPES = frozenset({"text/plain", "image/png", "image/jpeg", "image/gif"})
#: y-websocket: message type SYNC, and its sub-types that carry document updates.
_SYNC, _SYNC_STEP2, _SYNC_UPDATE = 0, 1, 2


def _rich(outputs: Any) -> bool:
    for output in outputs or []:
        data = output.get("data") if isinstance(output, dict) else None
        if isinstance(data, dict) and set(data) - PLAIN_MIME_TYPES:
            return True
    return False


def _trusted_rich_cells(doc: Any) -> dict[str, str]:
    """Cell id -> its rich outputs (as JSON), for every trusted cell that has some."""
    from pycrdt import Array

    found: dict[str, str] = {}
    for index, cell in enumerate(doc.get("cells", type=Array).to_py() or []):
        if not isinstance(cell, dict):
            continue
        metadata = cell.get("metadata")
        trusted = isinstance(metadata, dict) and bool(metadata.get("trusted"))
        if trusted and _rich(cell.get("outputs")):
            key = str(cell.get("id") or f"#{index}")
            found[key] = json.dumps(cell.get("outputs"), sort_keys=True, default=str)
    return found


def update_of(message: bytes) -> bytes | None:
    """The document update a room message carries (None: awareness, sync step 1, raw, ...)."""
    if len(message) < 3 or message[0] != _SYNC or message[1] not in (_SYNC_STEP2, _SYNC_UPDATE):
        return None
    from pycrdt import read_message

    return bytes(read_message(message[2:]))


def makes_trusted_rich_output(room_doc: Any, update: bytes) -> bool:
    """Whether ``update`` would leave a trusted cell with rich output it did not have trusted."""
    from pycrdt import Doc

    before = _trusted_rich_cells(room_doc)
    scratch = Doc()
    scratch.apply_update(room_doc.get_update())
    scratch.apply_update(update)
    after = _trusted_rich_cells(scratch)
    return any(before.get(cell) != outputs for cell, outputs in after.items())


def screen_room_messages(handler: Any, agent: str, log: Any) -> None:
    """Put the screen in front of this room websocket's message handler (an agent's)."""
    original = handler.on_message

    async def on_message(message: Any) -> Any:
        room = getattr(handler, "room", None)
        doc = getattr(room, "ydoc", None)
        update = update_of(message) if isinstance(message, bytes) and doc is not None else None
        if update is not None:
            try:
                refused = makes_trusted_rich_output(doc, update)
            except Exception:  # an update we cannot read is not one we let through
                refused = True
            if refused:
                log.warning(
                    "jupyter-approvals refused agent %s: a room update would make an output "
                    "trusted; the socket is closed",
                    agent,
                )
                handler.close(4003, "APPROVAL_AGENT_FORBIDDEN: agents may not trust outputs")
                return None
        return await original(message)

    handler.on_message = on_message
