"""An agent's Yjs updates to a notebook room, judged on the document the room will keep.

Each attempt is a real pycrdt update made by an agent's copy of the room's document, as an
agent client connected to jupyter-collaboration would send it; the room's document is a real
pycrdt document that applies what the screen lets through, as the room does. The attacks:
updates sent out of order (applied later by the room, unchecked), trusted output under a cell
id that is or was the person's, a trusted cell's content copied into a new cell, ids changed
or duplicated, and the label of who inserted a cell rewritten.
"""

from __future__ import annotations

import asyncio

import pytest
from pycrdt import Array, Doc, Map, Text

from jupyter_approvals.core.protocol import HELD_MIMETYPE
from jupyter_approvals.server.gate.approved_outputs import data_key
from jupyter_approvals.server.gate.notebook_shadow import NotebookShadow, RoomRefusal
from jupyter_approvals.server.gate.rooms import restore_outputs

SCRIPT = {"text/html": "<script>document.title = 'pwned'</script>"}


def cell(cell_id: str, source: str = "x = 1", trusted: bool = False, data=None) -> Map:
    outputs = []
    if data is not None:
        outputs.append(Map({"output_type": "display_data", "data": Map(data), "metadata": Map()}))
    return Map(
        {
            "id": cell_id,
            "cell_type": "code",
            "source": Text(source),
            "metadata": Map({"trusted": True} if trusted else {}),
            "outputs": Array(outputs),
            "execution_count": None,
        }
    )


class Room:
    """A room's document, the gate's shadow of it, and an agent's copy that makes updates."""

    def __init__(self, *cells: Map) -> None:
        self.doc = Doc()
        self.cells = self.doc.get("cells", type=Array)
        for made in cells:
            self.cells.append(made)
        self.shadow = NotebookShadow(self.doc)
        self.agent = self.copy()

    def copy(self) -> Doc:
        other = Doc()
        other.apply_update(self.doc.get_update())
        return other

    def change(self, edit, doc: Doc | None = None) -> bytes:
        """The update an edit of the agent's copy (or ``doc``) makes."""
        doc = doc or self.agent
        before = doc.get_state()
        edit(doc.get("cells", type=Array))
        return doc.get_update(before)

    def send(self, update: bytes) -> list[str]:
        """Screen ``update``; the room applies it when it passes."""
        labelled = self.shadow.screen(update, "bot")
        self.doc.apply_update(update)
        return labelled

    def trusted_rich(self) -> list[str]:
        return [
            c["id"]
            for c in self.cells.to_py()
            if c["metadata"].get("trusted")
            and any(set(o.get("data", {})) - {"text/plain"} for o in c["outputs"])
        ]


def test_an_update_sent_before_the_one_it_builds_on_is_refused():
    # Given an agent that inserts a cell, then trusts it and gives it a script output
    room = Room(cell("mine"))
    insert = room.change(lambda cells: cells.append(cell("agent", data=SCRIPT)))
    trust = room.change(lambda cells: cells[1]["metadata"].__setitem__("trusted", True))
    # When it sends the second update first (it changes nothing the room has yet)
    with pytest.raises(RoomRefusal, match="out of order"):
        room.send(trust)
    # Then the first alone passes, and nothing in the room is trusted
    room.send(insert)
    assert room.trusted_rich() == []
    assert "trusted" not in room.cells[1]["metadata"].to_py()


def test_a_deletion_of_items_the_room_has_not_seen_is_refused():
    room = Room(cell("mine"))
    room.change(lambda cells: cells.append(cell("agent")))  # made, never sent
    delete = room.change(lambda cells: cells.__delitem__(1))
    with pytest.raises(RoomRefusal, match="out of order"):
        room.send(delete)


def test_a_person_s_cell_id_cannot_be_taken_over_with_its_trusted_output():
    # Given the person's trusted cell with a rich output
    room = Room(cell("persons", trusted=True, data={"text/html": "<b>ok</b>"}))

    # When the agent deletes it and inserts its own cell under the same id, trusted, with a
    # script output (or the same output): the old gate compared by id and saw no change
    def swap(cells):
        del cells[0]
        cells.append(cell("persons", source="evil()", trusted=True, data=SCRIPT))

    with pytest.raises(RoomRefusal):
        room.send(room.change(swap))
    assert room.trusted_rich() == ["persons"]
    assert room.cells[0]["source"].to_py() == "x = 1"


def test_a_second_cell_with_a_persons_id_is_refused():
    room = Room(cell("persons", trusted=True, data={"text/html": "<b>ok</b>"}))
    with pytest.raises(RoomRefusal, match="id"):
        room.send(
            room.change(
                lambda cells: cells.append(
                    cell("persons", trusted=True, data={"text/html": "<b>ok</b>"})
                )
            )
        )


def test_an_id_the_room_had_before_cannot_be_reused():
    # Given a person's cell deleted by the person earlier
    room = Room(cell("old"), cell("other"))
    person = room.copy()
    room.doc.apply_update(room.change(lambda cells: cells.__delitem__(0), doc=person))
    agent = room.copy()
    # When the agent inserts a cell with that id
    with pytest.raises(RoomRefusal, match="id"):
        room.send(room.change(lambda cells: cells.append(cell("old")), doc=agent))


def test_a_trusted_cells_content_copied_into_a_new_cell_is_refused():
    room = Room(cell("persons", trusted=True, data={"text/html": "<b>ok</b>"}))
    with pytest.raises(RoomRefusal, match="trusted"):
        room.send(
            room.change(
                lambda cells: cells.append(
                    cell("copy", trusted=True, data={"text/html": "<b>ok</b>"})
                )
            )
        )


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(lambda cells: cells[0]["metadata"].__setitem__("trusted", True), id="trust"),
        pytest.param(
            lambda cells: cells[1]["outputs"].append(
                Map({"output_type": "display_data", "data": Map(SCRIPT)})
            ),
            id="add-output-to-trusted",
        ),
        pytest.param(
            lambda cells: cells[1]["outputs"].append(
                Map({"output_type": "update_display_data", "data": Map(SCRIPT)})
            ),
            id="update-display-data",
        ),
        pytest.param(
            lambda cells: cells[1]["outputs"][0]["data"].__setitem__(
                "text/html", "<script>1</script>"
            ),
            id="rewrite-trusted-html",
        ),
    ],
)
def test_an_output_never_becomes_trusted_through_an_agent(edit):
    # Given an untrusted cell with a script output and a trusted cell with harmless HTML
    room = Room(
        cell("untrusted", data=SCRIPT),
        cell("trusted", trusted=True, data={"text/html": "<b>ok</b>"}),
    )
    before = room.cells.to_py()
    with pytest.raises(RoomRefusal, match="trusted"):
        room.send(room.change(edit))
    assert room.cells.to_py() == before


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(lambda cells: cells[0].__setitem__("id", "renamed"), id="change-id"),
        pytest.param(
            lambda cells: cells[0]["metadata"].__setitem__(
                "jupyter_approvals", {"inserted_by": "agent bot"}
            ),
            id="label-persons-cell",
        ),
        pytest.param(
            lambda cells: cells.append(
                Map(
                    {
                        "id": "sneaky",
                        "source": Text("x"),
                        "metadata": Map({"jupyter_approvals": {"inserted_by": None}}),
                        "outputs": Array([]),
                    }
                )
            ),
            id="insert-with-foreign-label",
        ),
    ],
)
def test_ids_and_labels_are_not_an_agents_to_change(edit):
    room = Room(cell("mine"))
    with pytest.raises(RoomRefusal):
        room.send(room.change(edit))


def test_an_agent_cannot_remove_the_label_of_a_cell_it_inserted():
    room = Room(cell("mine"))
    [labelled] = room.send(room.change(lambda cells: cells.append(cell("agent"))))
    assert labelled == "agent"
    room.cells[1]["metadata"]["jupyter_approvals"] = {"inserted_by": "agent bot"}  # the gate
    agent = room.copy()
    with pytest.raises(RoomRefusal, match="inserted"):
        room.send(
            room.change(lambda cells: cells[1]["metadata"].pop("jupyter_approvals"), doc=agent)
        )


def test_ordinary_agent_edits_pass_and_new_cells_are_named_for_labelling():
    # Given the person's trusted cell and an agent editing around it
    room = Room(cell("persons", trusted=True, data={"text/html": "<b>ok</b>"}), cell("plain"))

    def edits(cells):
        cells[1]["source"] += "\nprint(2)"
        cells[1]["outputs"].append(Map({"output_type": "stream", "name": "stdout", "text": "2\n"}))
        cells.append(cell("new-1"))
        cells.insert(0, cell("new-0", data={"text/html": "<b>untrusted is fine</b>"}))

    # When it sends them
    labelled = room.send(room.change(edits))
    # Then they pass, and the new cells are named for their label
    assert sorted(labelled) == ["new-0", "new-1"]
    assert [c["id"] for c in room.cells.to_py()] == ["new-0", "persons", "plain", "new-1"]


def test_moving_the_persons_trusted_cell_keeps_it_as_it_was():
    room = Room(cell("a"), cell("persons", trusted=True, data={"text/html": "<b>ok</b>"}))
    content = room.cells[1].to_py()

    def move(cells):
        moved = cells[1].to_py()
        del cells[1]
        cells.insert(
            0,
            Map(
                {
                    **moved,
                    "source": Text(moved["source"]),
                    "metadata": Map(moved["metadata"]),
                    "outputs": Array(
                        [
                            Map({**o, "data": Map(o["data"]), "metadata": Map(o["metadata"])})
                            for o in moved["outputs"]
                        ]
                    ),
                }
            ),
        )

    assert room.send(room.change(move)) == []
    assert room.cells[0].to_py() == content


def test_the_shadow_follows_the_persons_edits_and_recovers_after_a_refusal():
    # Given a room where the person trusts a cell after the shadow was made
    room = Room(cell("persons", data={"text/html": "<b>ok</b>"}))
    person = room.copy()
    room.doc.apply_update(
        room.change(lambda cells: cells[0]["metadata"].__setitem__("trusted", True), doc=person)
    )
    agent = room.copy()
    # When an agent's refused update is followed by an ordinary one
    with pytest.raises(RoomRefusal):
        room.send(
            room.change(
                lambda cells: cells[0]["outputs"].append(
                    Map({"output_type": "display_data", "data": Map(SCRIPT)})
                ),
                doc=agent,
            )
        )
    fresh = room.copy()
    # Then the ordinary one is judged against the room as it is, and passes
    assert room.send(room.change(lambda cells: cells.append(cell("next")), doc=fresh)) == ["next"]
    assert room.trusted_rich() == ["persons"]


def html_output(html: str) -> dict:
    return {"output_type": "display_data", "data": {"text/html": html}, "metadata": {}}


def rerun(outputs: list[dict]):
    """What an agent client does when it runs a cell: clear its outputs, then append each."""

    def edit(cells):
        del cells[0]["outputs"][:]
        for output in outputs:
            cells[0]["outputs"].append(output)

    return edit


def test_the_kernels_output_for_approved_code_may_go_into_a_cell_the_person_trusted():
    # Given the person's trusted cell, and output the kernel produced for approved code
    room = Room(cell("persons", trusted=True, data={"text/html": "<b>old</b>"}))
    approved = frozenset({data_key({"text/html": "<b>new</b>"})})
    # When the agent client writes that output into the cell
    labelled = room.shadow.screen(room.change(rerun([html_output("<b>new</b>")])), "bot", approved)
    # Then it passes
    assert labelled == []


@pytest.mark.parametrize(
    ("trusted", "written"),
    [
        pytest.param(True, "<script>1</script>", id="output-no-kernel-produced"),
        pytest.param(False, "<b>new</b>", id="into-an-untrusted-cell-it-trusts"),
    ],
)
def test_other_rich_output_into_a_trusted_cell_is_still_refused(trusted, written):
    room = Room(cell("persons", trusted=trusted, data={"text/html": "<b>old</b>"}))
    approved = frozenset({data_key({"text/html": "<b>new</b>"})})

    def edit(cells):
        rerun([html_output(written)])(cells)
        cells[0]["metadata"]["trusted"] = True

    with pytest.raises(RoomRefusal, match="trusted"):
        room.shadow.screen(room.change(edit), "bot", approved)


GATE_ANSWERS = {
    "held code's card": {
        "output_type": "display_data",
        "data": {
            HELD_MIMETYPE: {"version": 1, "request_id": "0123456789abcdef", "fingerprint": "x"},
            "text/plain": "APPROVAL_PENDING: nothing ran",
        },
        "metadata": {},
    },
    "refusal": {
        "output_type": "error",
        "ename": "APPROVAL_AGENT_FORBIDDEN",
        "evalue": "nothing ran",
        "traceback": ["APPROVAL_AGENT_FORBIDDEN: nothing ran"],
    },
}


@pytest.mark.parametrize("answer", GATE_ANSWERS)
def test_a_run_the_gate_answered_gives_the_person_s_outputs_back(answer):
    # Given the person's cell with outputs, and an agent client running it: it clears the
    # outputs, its code is held or refused, it writes the gate's answer into the cell
    room = Room(cell("persons", data={"text/html": "<b>the person's chart</b>"}))
    room.cells[0]["execution_count"] = 7
    before = room.cells[0].to_py()
    agent = room.copy()
    room.send(room.change(rerun([]), doc=agent))
    held = GATE_ANSWERS[answer]
    room.send(room.change(lambda cells: cells[0]["outputs"].append(held), doc=agent))
    # When the gate gives back what the answer replaced
    restore = room.shadow.take_restorations()
    assert list(restore) == ["persons"]
    asyncio.run(restore_outputs(room.doc, restore))
    # Then the cell shows the person's outputs again, with their count, then the answer
    after = room.cells[0].to_py()
    assert after["outputs"] == [*before["outputs"], held]
    assert after["execution_count"] == 7
    # When the client then sets the count of its run, as it does last
    agent = room.copy()
    room.send(room.change(lambda cells: cells[0].__setitem__("execution_count", 0), doc=agent))
    asyncio.run(restore_outputs(room.doc, room.shadow.take_restorations()))
    # Then the person's count is set again, the outputs as they were
    assert room.cells[0].to_py()["execution_count"] == 7
    assert room.cells[0].to_py()["outputs"] == [*before["outputs"], held]


def test_outputs_of_a_run_that_really_ran_are_left_as_the_agent_wrote_them():
    room = Room(cell("persons", data={"text/html": "<b>old</b>"}))
    agent = room.copy()
    room.send(room.change(rerun([]), doc=agent))
    real_error = {
        "output_type": "error",
        "ename": "ZeroDivisionError",
        "evalue": "",
        "traceback": [],
    }
    room.send(room.change(lambda cells: cells[0]["outputs"].append(real_error), doc=agent))
    assert room.shadow.take_restorations() == {}
