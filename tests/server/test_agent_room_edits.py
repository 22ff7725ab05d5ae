"""An agent's edit of a text file through a collaboration room is held like a contents write.

These tests apply real Yjs updates (pycrdt, the CRDT library of jupyter-collaboration) to a
document shaped like jupyter_ydoc's text document; the browser test with a real room is
tests/e2e/test_room_edits.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pycrdt import Doc, Map, Text

from jupyter_approvals.core import errors
from jupyter_approvals.core.model import Lease, RequestInfo, Status
from jupyter_approvals.core.policy import Limits, ManualClock
from jupyter_approvals.server.gate.held_room_edits import held_room_edit, room_kind
from jupyter_approvals.server.gate.hold import AgentHold
from jupyter_approvals.server.gate.limits import AgentLimits
from jupyter_approvals.server.mirror.journals import ServerJournals

NOTES = "def total(rows):\n    return sum(rows)\n"


def room_with(text: str) -> Doc:
    """A room document as jupyter_ydoc's text document keeps it: source text, state map."""
    doc = Doc()
    doc["source"] = Text(text)
    doc["state"] = Map({"dirty": False, "path": "notes.py"})
    return doc


def agent_edit(room: Doc, edit) -> bytes:
    """The update a fresh agent client sends after syncing ``room`` and making ``edit``."""
    client = Doc()
    client.apply_update(room.get_update())
    before = client.get_state()
    edit(client)
    return client.get_update(before)


def append(line: str):
    def edit(doc: Doc) -> None:
        source = doc.get("source", type=Text)
        source += line

    return edit


@pytest.fixture
def hold(tmp_path: Path) -> tuple[AgentHold, ManualClock]:
    clock = ManualClock()
    root = tmp_path / "project"
    root.mkdir()
    journals = ServerJournals(lambda: tmp_path / "state", root)
    return AgentHold(Limits(), journals, clock), clock


def approve(hold: AgentHold, clock: ManualClock, info: RequestInfo) -> None:
    hold.listing(shown=True)  # the person's sidebar received it
    clock.advance(1.5)  # and they read it
    hold.decide(info.id, "approve", info.fingerprint, "", "person")


def test_room_ids_are_sorted_by_what_the_room_saves():
    # Given the room ids jupyter-collaboration makes, Then each is of the kind the gate treats
    assert room_kind("json:notebook:3f2a") == "notebook"
    assert room_kind("text:file:3f2a") == "text"
    assert room_kind("base64:file:3f2a") == "document"
    assert room_kind("JupyterLab:globalAwareness") == "transient"


def test_a_text_change_is_held_with_a_line_diff_from_the_rooms_text():
    # Given the room of notes.py
    room = room_with(NOTES)
    # When an agent's update appends a line
    write = held_room_edit(room, agent_edit(room, append("print(total([1]))\n")), "notes.py", "bot")
    # Then it is a held file write of that file, shown as a diff from the room's text
    assert write is not None
    assert write.action == "file.write"
    assert write.summary.startswith("Replace notes.py")
    assert "collaboration room" in write.summary
    assert "+print(total([1]))" in write.preview
    assert "notes.py (as in the room)" in write.preview
    # And the room itself is untouched
    assert str(room.get("source", type=Text)) == NOTES


def test_an_update_that_leaves_the_text_as_it_is_passes():
    # Given the room of notes.py, When an agent sends an update that changes nothing
    room = room_with(NOTES)
    # Then there is nothing to hold
    assert held_room_edit(room, agent_edit(room, lambda doc: None), "notes.py", "bot") is None


def test_an_update_to_the_documents_metadata_is_refused():
    # Given the room of notes.py
    room = room_with(NOTES)

    def rename(doc: Doc) -> None:
        doc.get("state", type=Map)["path"] = "elsewhere.py"

    # When an agent's update changes the path a client reads from the document's state
    with pytest.raises(errors.ApprovalAgentForbidden) as refused:
        held_room_edit(room, agent_edit(room, rename), "notes.py", "bot")
    # Then it is refused, naming the file
    assert refused.value.details["path"] == "notes.py"


def test_the_same_change_by_a_fresh_client_is_the_same_request():
    # Given one change made twice, by two clients that never met
    room = room_with(NOTES)
    first = held_room_edit(room, agent_edit(room, append("x = 1\n")), "notes.py", "bot")
    second = held_room_edit(room, agent_edit(room, append("x = 1\n")), "notes.py", "bot")
    # Then they fingerprint alike: what binds is the text, not the CRDT's item ids
    assert first is not None
    assert second is not None
    assert first.fingerprint == second.fingerprint
    # And a change of the room's text in between makes another request of the same slot
    moved = room_with(NOTES + "# the person's line\n")
    third = held_room_edit(moved, agent_edit(moved, append("x = 1\n")), "notes.py", "bot")
    assert third is not None
    assert third.slot == first.slot
    assert third.fingerprint != first.fingerprint


def approved_edit(code_hold: AgentHold, clock: ManualClock, line: str):
    """An agent's edit of notes.py, held and then approved by the person: (write, request)."""
    room = room_with(NOTES)
    write = held_room_edit(room, agent_edit(room, append(line)), "notes.py", "bot")
    assert write is not None
    info = code_hold.screen_write(write, "bot", supersede=True)
    assert isinstance(info, RequestInfo)
    approve(code_hold, clock, info)
    return write, info


def test_an_approved_room_edit_is_applied_once(hold):
    # Given an agent's held room edit that the person approved
    write, info = approved_edit(*hold, "x = 1\n")
    code_hold, _ = hold
    # When the agent's client sends it again
    lease = code_hold.screen_write(write, "bot", supersede=True)
    # Then it may go to the room, once
    assert isinstance(lease, Lease)
    code_hold.ran(lease)
    again = code_hold.screen_write(write, "bot", supersede=True)
    assert isinstance(again, RequestInfo)
    assert again.id != info.id


def test_an_approved_room_edit_meets_a_changed_room_as_a_mismatch(hold):
    # Given an agent's room edit that the person approved
    _, info = approved_edit(*hold, "x = 1\n")
    code_hold, _ = hold
    # When the room's text changed before the agent sent it again
    moved = room_with(NOTES + "# the person's line\n")
    later = held_room_edit(moved, agent_edit(moved, append("x = 1\n")), "notes.py", "bot")
    assert later is not None
    # Then it is refused, and the approval is spent
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        code_hold.screen_write(later, "bot", supersede=True)
    assert code_hold.store_for("bot").get(info.id).status is Status.REFUSED


def test_a_further_edit_withdraws_the_one_still_pending(hold):
    # Given an agent's held room edit
    code_hold, _ = hold
    room = room_with(NOTES)
    first = held_room_edit(room, agent_edit(room, append("x = 1\n")), "notes.py", "bot")
    assert first is not None
    earlier = code_hold.screen_write(first, "bot", supersede=True)
    # When its client sends the edit with more typed since (the text it would now lead to)
    more = held_room_edit(room, agent_edit(room, append("x = 1\ny = 2\n")), "notes.py", "bot")
    assert more is not None
    latest = code_hold.screen_write(more, "bot", supersede=True)
    # Then only the latest text waits for the person; the earlier one is withdrawn
    assert isinstance(latest, RequestInfo)
    store = code_hold.store_for("bot")
    assert store.get(earlier.id).status is Status.WITHDRAWN
    assert [item.id for item in store.pending()] == [latest.id]


class _RoomSocket:
    """What the screen reads of jupyter-collaboration's room websocket handler: the request
    path, the room (here one without a document, as a room not ready yet or a version that
    keeps it elsewhere), its message handler and close."""

    def __init__(self, room_id: str) -> None:
        self.request = type("Request", (), {"path": f"/api/collaboration/room/{room_id}"})()
        self.room = object()
        self.passed: list[bytes] = []
        self.closed: tuple[int, str] | None = None

    async def on_message(self, message: bytes) -> None:
        self.passed.append(message)

    def close(self, code: int, reason: str) -> None:
        self.closed = (code, reason)


@pytest.mark.parametrize("room_id", ["json:notebook:0123", "text:file:0456"])
def test_an_agent_update_to_a_room_that_cannot_be_screened_is_refused(hold, room_id):
    import asyncio
    import logging

    from pycrdt import create_update_message

    from jupyter_approvals.server.gate.rooms import screen_room_messages

    # Given an agent's socket to a room whose document the screen cannot find
    socket = _RoomSocket(room_id)
    screen_room_messages(
        socket, "bot", logging.getLogger("test"), hold[0], AgentLimits(1 << 20, 600)
    )
    update = agent_edit(room_with(NOTES), append("import os\n"))
    # When the agent sends a document update
    asyncio.run(socket.on_message(create_update_message(update)))
    # Then nothing reaches the room, and the socket is closed with the code
    assert socket.passed == []
    assert socket.closed is not None
    assert socket.closed[1].startswith("APPROVAL_AGENT_FORBIDDEN")
