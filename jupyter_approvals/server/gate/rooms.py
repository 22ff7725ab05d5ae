"""What an agent's updates to a collaboration room may do.

A text file's room: every change of the text is held for a person (:mod:`.held_room_edits`).
A room of any other file that is not a notebook: refused. A notebook's room: edits pass, judged
on the document the room will keep (:mod:`.notebook_shadow`): an update that the room would keep
pending, that makes an output trusted, takes another cell's id or rewrites who inserted a cell
is dropped, the agent told with a coded message and its socket closed. Everything else an agent
client does in a room (insert, edit, delete and move cells, write the outputs of code the
person approved) passes; the cells it inserts are then marked
``metadata.jupyter_approvals.inserted_by = "agent NAME"`` in the shared document.

JupyterLab takes a cell's ``trusted`` from the room's shared document, and runs the script of a
trusted output in the person's page, where script can press Approve: that is why trust is
screened. pycrdt is imported when a room message is screened: it comes with
jupyter-collaboration, which is the only way rooms exist.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from typing import Any

from ...core import errors
from ...core.model import Lease
from ...core.protocol import CELL_METADATA_KEY
from . import held_room_edits
from .held_files import pending_write_error
from .hold import AgentHold
from .limits import AgentLimits
from .notebook_shadow import RoomRefusal, label, shadow_of

#: Marking tasks in flight (kept referenced until they end).
_marking: set[asyncio.Future[None]] = set()
#: y-websocket: message type SYNC, and its sub-types that carry document updates;
#: jupyter-collaboration's RAW messages (JSON text).
_SYNC, _SYNC_STEP2, _SYNC_UPDATE = 0, 1, 2
_RAW = 2
#: Close codes of an agent's room socket: a forbidden update, a held or refused edit, and an
#: agent past its rate.
CLOSE_FORBIDDEN, CLOSE_HELD, CLOSE_OVER_LIMIT = 4003, 4009, 4029


def update_of(message: bytes) -> bytes | None:
    """The document update a room message carries (None: awareness, sync step 1, raw, ...)."""
    if len(message) < 3 or message[0] != _SYNC or message[1] not in (_SYNC_STEP2, _SYNC_UPDATE):
        return None
    from pycrdt import read_message

    return bytes(read_message(message[2:]))


async def mark_inserted_cells(room_doc: Any, cell_ids: set[str], agent: str) -> None:
    """Mark the cells an agent added as its own, once the room has applied its update.

    The room applies client messages from a queue of its own, so the cells appear a moment
    after the message was handed on; the mark, written into the shared document, reaches every
    client of the room and the saved notebook.
    """
    from pycrdt import Array, Map

    remaining = set(cell_ids)
    for _ in range(50):  # up to about 5 s
        cells = room_doc.get("cells", type=Array)
        with room_doc.transaction():
            for cell in cells:
                cell_id = cell.get("id") if isinstance(cell, Map) else None
                if cell_id in remaining and isinstance(cell.get("metadata"), Map):
                    # A plain value, as JupyterLab stores metadata (it reads it as JSON).
                    cell["metadata"][CELL_METADATA_KEY] = label(agent)
                    remaining.discard(cell_id)
        if not remaining:
            return
        await asyncio.sleep(0.1)


async def restore_outputs(
    room_doc: Any, restore: dict[str, tuple[list[Any] | None, object]]
) -> None:
    """Give cells back the outputs the gate's answer to an agent's run replaced, once the room
    has applied the agent's update (its client cleared them before its code was held): the
    earlier outputs and count, then the gate's answer after them (the agent reads it there)."""
    from pycrdt import Array, Map

    remaining = dict(restore)
    for _ in range(50):  # up to about 5 s
        cells = room_doc.get("cells", type=Array)
        with room_doc.transaction():
            for cell in cells:
                cell_id = cell.get("id") if isinstance(cell, Map) else None
                if cell_id not in remaining:
                    continue
                outputs = cell.get("outputs")
                saved, count = remaining[cell_id]
                if saved is None:  # the count alone, set again after the client's own
                    del remaining[cell_id]
                    cell["execution_count"] = count
                elif isinstance(outputs, Array) and len(outputs):
                    del remaining[cell_id]
                    answer = list(outputs.to_py() or [])
                    del outputs[:]
                    outputs.extend([*saved, *answer])
                    cell["execution_count"] = count
        if not remaining:
            return
        await asyncio.sleep(0.1)


def raw_message(payload: dict[str, Any]) -> bytes:
    """A jupyter-collaboration RAW message (type 2) carrying ``payload`` as JSON text."""
    from pycrdt import Encoder

    encoder = Encoder()
    encoder.write_var_uint(_RAW)
    encoder.write_var_string(json.dumps(payload))
    return bytes(encoder.to_bytes())


def tell_and_close(handler: Any, error: errors.ApprovalError, close_code: int) -> None:
    """Tell the agent's client why its update did not reach the room, then close the socket.

    The RAW message carries what a contents call would answer (``code``, ``message``, the
    request id and fingerprint of a held edit); the close reason starts with the code.
    """
    payload = {"type": "jupyter_approvals", "ok": False, "code": error.code}
    payload.update(message=error.message, **error.details)
    with contextlib.suppress(Exception):  # a client already gone
        handler.write_message(raw_message(payload), binary=True)
    request_id = error.details.get("request_id")
    reason = f"{error.code} request {request_id}" if request_id else error.code
    handler.close(close_code, reason)


def socket_room_kind(handler: Any) -> str:
    """The kind of room a room websocket connects to (its room id ends the URL path, as
    jupyter-collaboration reads it)."""
    return held_room_edits.room_kind(str(handler.request.path).rsplit("/", 1)[-1])


def screen_room_messages(
    handler: Any,
    agent: str,
    log: Any,
    hold: AgentHold,
    limits: AgentLimits,
    approved_outputs: Callable[[str], frozenset[str]] = lambda _agent: frozenset(),
) -> None:
    """Put the screen in front of this room websocket's message handler (an agent's)."""
    kind = socket_room_kind(handler)
    original = handler.on_message

    async def on_message(message: Any) -> Any:
        room = getattr(handler, "room", None)
        doc = getattr(room, "ydoc", None)
        update = update_of(message) if isinstance(message, bytes) else None
        if update is None or kind == "transient":
            return await original(message)
        try:
            limits.take(agent)
        except errors.ApprovalAgentOverLimit as exc:
            log.warning("jupyter-approvals refused agent %s: %s", agent, exc.message)
            tell_and_close(handler, exc, CLOSE_OVER_LIMIT)
            return None
        if doc is None:
            # No document to screen against (a room not ready, or a jupyter-collaboration
            # whose room keeps it elsewhere): an update that cannot be screened is refused.
            log.warning("jupyter-approvals refused agent %s: a room update it cannot screen", agent)
            handler.close(CLOSE_FORBIDDEN, "APPROVAL_AGENT_FORBIDDEN: this room cannot be screened")
            return None
        if kind == "text":
            return await _held_text_edit(handler, original, message, update, agent, hold, log)
        if kind != "notebook":
            log.warning("jupyter-approvals refused agent %s: a room agents may not edit", agent)
            handler.close(CLOSE_FORBIDDEN, "APPROVAL_AGENT_FORBIDDEN: not a room agents may edit")
            return None
        shadow = shadow_of(doc)
        try:
            added = shadow.screen(update, agent, approved_outputs(agent))
        except RoomRefusal as refusal:
            log.warning(
                "jupyter-approvals refused agent %s's room update: %s; the socket is closed",
                agent,
                refusal,
            )
            tell_and_close(
                handler,
                errors.ApprovalAgentForbidden(
                    f"The update was dropped: {refusal}. Nothing reached the room."
                ),
                CLOSE_FORBIDDEN,
            )
            return None
        result = await original(message)
        restore = shadow.take_restorations()
        for task in (
            mark_inserted_cells(doc, set(added), agent) if added else None,
            restore_outputs(doc, restore) if restore else None,
        ):
            if task is not None:
                future = asyncio.ensure_future(task)
                _marking.add(future)
                future.add_done_callback(_marking.discard)
        return result

    handler.on_message = on_message


async def _held_text_edit(
    handler: Any,
    original: Any,
    message: bytes,
    update: bytes,
    agent: str,
    hold: AgentHold,
    log: Any,
) -> Any:
    """Hand ``update`` to a text file's room only with a person's approval of its change."""
    room = handler.room
    api_path = getattr(getattr(room, "_file", None), "path", None)
    try:
        if not isinstance(api_path, str):
            raise errors.ApprovalAgentForbidden(
                "The gate cannot tell which file this room saves to, so it cannot hold the edit "
                "for a person. The update was dropped."
            )
        texts = held_room_edits.room_texts(room.ydoc, update, api_path)
        write = None
        if texts is not None:
            # The diff of a whole file is the costly part: off the event loop.
            write = await asyncio.get_running_loop().run_in_executor(
                None, held_room_edits.held_text_change, api_path, *texts, agent
            )
    except Exception as exc:  # an update we cannot read is not one we let through
        refusal = (
            exc
            if isinstance(exc, errors.ApprovalError)
            else errors.ApprovalAgentForbidden(
                "The gate cannot read this room update. It was dropped."
            )
        )
        log.warning("jupyter-approvals refused agent %s: %s", agent, refusal.message)
        tell_and_close(handler, refusal, CLOSE_FORBIDDEN)
        return None
    if write is None:
        return await original(message)
    try:
        outcome = hold.screen_write(write, agent, supersede=True)
    except errors.ApprovalError as exc:
        tell_and_close(handler, exc, CLOSE_HELD)
        return None
    if not isinstance(outcome, Lease):
        tell_and_close(
            handler, pending_write_error(outcome.id, outcome.fingerprint, write.summary), CLOSE_HELD
        )
        return None
    try:
        result = await original(message)
    except Exception as exc:
        hold.ran(outcome, exc)
        raise
    hold.ran(outcome)
    return result
