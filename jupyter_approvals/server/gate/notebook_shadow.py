"""What an agent's update would do to a notebook room, judged on the document the room will keep.

Each notebook room an agent writes to gets a :class:`NotebookShadow`: a copy of the room's
document that follows every transaction of the room, with a short summary of each cell (its
id, a digest of its content, its trusted rich outputs, the jupyter-approvals metadata). An
agent's update is applied to the shadow first; the shadow's own change events say which cells
it inserted, deleted or changed, so the cost of a check grows with the edit, not with the
notebook. Refused (:class:`RoomRefusal`):

- an update that depends on changes the room has not seen (structs or deletions it would keep
  pending, then apply once their dependency arrives, unchecked);
- a cell left trusted with rich output (anything but plain text and images) that it did not
  have trusted before, judged by content, whatever the cell's id;
- an inserted cell that takes an id the room already has or had (the person's cell, deleted in
  the same update or before), unless it is the same cell moved: the same id and content as a
  cell the update deleted;
- a changed cell id, and a change of any cell's ``metadata.jupyter_approvals`` (who inserted
  it), except an inserted cell carrying exactly the label the gate writes.

A refused update leaves the shadow behind the room's real state: it is built again from the
room on next use. pycrdt comes with jupyter-collaboration, which is the only way rooms exist.
"""

from __future__ import annotations

import hashlib
import json
import time
import weakref
from dataclasses import dataclass, field
from typing import Any

from ...core.protocol import CELL_METADATA_KEY, HELD_MIMETYPE
from .approved_outputs import data_key

#: Output data an untrusted page shows as is; anything else is rich content.
PLAIN_MIME_TYPES = frozenset({"text/plain", "image/png", "image/jpeg", "image/gif"})


class RoomRefusal(Exception):
    """An agent's update a notebook room must not apply; the message says why."""


@dataclass(frozen=True)
class CellSummary:
    """What the checks need of one cell."""

    cell_id: object
    digest: str
    #: Its outputs (JSON) when the cell is trusted and has rich output, else None.
    trusted_rich: str | None
    #: Its ``metadata.jupyter_approvals`` (JSON), None when absent.
    mark: str | None
    #: Whether ``metadata.trusted`` is set.
    trusted: bool = False
    #: Its outputs (JSON) and execution count, as they are.
    outputs: str = "[]"
    execution_count: object = None


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def rich(outputs: Any) -> bool:
    """Whether any output carries data an untrusted page would not show as is."""
    for output in outputs if isinstance(outputs, list) else []:
        data = output.get("data") if isinstance(output, dict) else None
        if isinstance(data, dict) and set(data) - PLAIN_MIME_TYPES:
            return True
    return False


def summarize(cell: Any) -> CellSummary:
    """The summary of a cell of the document (a pycrdt Map, or anything else it holds)."""
    value = cell.to_py() if hasattr(cell, "to_py") else cell
    if not isinstance(value, dict):
        return CellSummary(None, hashlib.sha256(_json(value).encode()).hexdigest(), None, None)
    metadata = value.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    outputs = value.get("outputs")
    trusted_rich = _json(outputs) if metadata.get("trusted") and rich(outputs) else None
    mark = _json(metadata[CELL_METADATA_KEY]) if CELL_METADATA_KEY in metadata else None
    digest = hashlib.sha256(_json(value).encode()).hexdigest()
    return CellSummary(
        value.get("id"),
        digest,
        trusted_rich,
        mark,
        bool(metadata.get("trusted")),
        _json(outputs if isinstance(outputs, list) else []),
        value.get("execution_count"),
    )


def _answered_by_the_gate(outputs_json: str) -> bool:
    """Whether the cell's only outputs are the gate's answer in a kernel's place, as an agent
    client writes it: the held code's card (docs/protocol.md 7.3) or an error whose name is an
    APPROVAL_* code (refused)."""
    outputs = json.loads(outputs_json)
    return bool(outputs) and all(
        isinstance(o, dict)
        and (
            (o.get("output_type") == "error" and str(o.get("ename", "")).startswith("APPROVAL_"))
            or (
                o.get("output_type") == "display_data"
                and isinstance(o.get("data"), dict)
                and HELD_MIMETYPE in o["data"]
            )
        )
        for o in outputs
    )


def _rich_data(outputs_json: str | None) -> list[str]:
    """The ``data`` (as compared, :func:`.approved_outputs.data_key`) of each rich output."""
    outputs = json.loads(outputs_json) if outputs_json is not None else []
    return [
        data_key(output["data"])
        for output in outputs
        if isinstance(output, dict) and rich([output])
    ]


def label(agent: str) -> dict[str, str]:
    """The metadata the gate writes on a cell an agent inserted."""
    return {"inserted_by": f"agent {agent}"}


@dataclass
class _Changes:
    """The cells one transaction on the shadow inserted, deleted and changed."""

    inserted: list[CellSummary] = field(default_factory=list)
    deleted: list[CellSummary] = field(default_factory=list)
    changed: list[tuple[CellSummary, CellSummary]] = field(default_factory=list)


def _missing_dependencies(update: bytes, doc: Any) -> bool:
    """Whether ``update``, applied to ``doc``, left structs or deletions pending.

    What the document kept of the update is what its state vector covers; the rest of the
    update (``get_update`` against that state) must carry no structs, and its deletions must
    name only items the document has.
    """
    from pycrdt import Decoder, get_update

    state = doc.get_state()
    decoder = Decoder(state)
    known = {
        decoder.read_var_uint(): decoder.read_var_uint() for _ in range(decoder.read_var_uint())
    }
    rest = Decoder(get_update(update, state))
    if rest.read_var_uint():  # structs the document could not integrate
        return True
    for _ in range(rest.read_var_uint()):
        client = rest.read_var_uint()
        for _ in range(rest.read_var_uint()):
            clock, length = rest.read_var_uint(), rest.read_var_uint()
            if clock + length > known.get(client, 0):
                return True
    return False


class NotebookShadow:
    """A copy of one notebook room's document that follows the room, and judges agents' updates."""

    def __init__(self, room_doc: Any) -> None:
        # Weakly: the room's document holds the shadow (through its observer), not back.
        self._room = weakref.ref(room_doc)
        self._recording: _Changes | None = None
        self._stale = False
        #: Cells an agent emptied of their outputs: id -> (outputs JSON, count, when).
        self._cleared: dict[str, tuple[str, object, float]] = {}
        #: Cells to give back their outputs: id -> (outputs JSON, or None for the count alone,
        #: count); see take_restorations.
        self._restore: dict[str, tuple[str | None, object]] = {}
        #: Cells given back their outputs: id -> (count, when); the agent client sets the count
        #: of its run last, after the outputs were given back.
        self._restored: dict[str, tuple[object, float]] = {}
        self._build()
        self._following = room_doc.observe(self._follow)

    def _build(self) -> None:
        from pycrdt import Array, Doc

        room_doc = self._room()
        self.doc: Any = Doc()
        if room_doc is not None:
            self.doc.apply_update(room_doc.get_update())
        self.cells: Any = self.doc.get("cells", type=Array)
        self.summaries = [summarize(cell) for cell in self.cells]
        self.ids_seen = {s.cell_id for s in self.summaries if isinstance(s.cell_id, str)}
        self.cells.observe_deep(self._on_change)
        self._stale = False

    def _follow(self, event: Any) -> None:
        # Every transaction of the room, the person's and the agents' alike.
        if not self._stale:
            self.doc.apply_update(event.update)

    def _on_change(self, events: list[Any]) -> None:
        changes = self._recording if self._recording is not None else _Changes()
        inserted_at: set[int] = set()
        touched: set[int] = set()
        for event in events:
            if list(event.path):
                touched.add(int(event.path[0]))
                continue
            position = 0
            for op in event.delta:
                if "retain" in op:
                    position += int(op["retain"])
                elif "delete" in op:
                    count = int(op["delete"])
                    changes.deleted.extend(self.summaries[position : position + count])
                    del self.summaries[position : position + count]
                elif "insert" in op:
                    for cell in op["insert"]:
                        summary = summarize(cell)
                        self.summaries.insert(position, summary)
                        changes.inserted.append(summary)
                        inserted_at.add(position)
                        position += 1
        for index in sorted(touched - inserted_at):
            if 0 <= index < len(self.summaries):
                before, after = self.summaries[index], summarize(self.cells[index])
                self.summaries[index] = after
                changes.changed.append((before, after))
        for summary in self.summaries:
            if isinstance(summary.cell_id, str):
                self.ids_seen.add(summary.cell_id)

    def screen(
        self, update: bytes, agent: str, approved_outputs: frozenset[str] = frozenset()
    ) -> list[str]:
        """Judge an agent's update; return the ids of the cells it inserts, to label.

        ``approved_outputs`` are the outputs (their ``data``, as compared) the kernel produced
        for code of this agent a person approved: they may go into a cell the person trusted.
        Raises :class:`RoomRefusal` when the room must not apply it.
        """
        if self._stale:
            self._build()
        seen_before = set(self.ids_seen)
        self._recording = _Changes()
        try:
            self.doc.apply_update(update)
            changes = self._recording
        except Exception as exc:
            self._stale = True
            raise RoomRefusal("the gate cannot read this update") from exc
        finally:
            self._recording = None
        try:
            if _missing_dependencies(update, self.doc):
                raise RoomRefusal(
                    "it depends on changes the room has not seen (sent out of order); send "
                    "the changes it builds on first"
                )
            return self._judge(changes, seen_before, agent, approved_outputs)
        except RoomRefusal:
            self._stale = True  # the shadow holds what the room will not
            raise

    def _judge(
        self,
        changes: _Changes,
        seen_before: set[str],
        agent: str,
        approved_outputs: frozenset[str],
    ) -> list[str]:
        self._note_outputs(changes)
        for before, after in changes.changed:
            if after.cell_id != before.cell_id:
                raise RoomRefusal("agents may not change a cell's id")
            if after.mark != before.mark:
                raise RoomRefusal("agents may not change who a cell says inserted it")
            if after.trusted_rich is not None and after.trusted_rich != before.trusted_rich:
                # Into a cell the person trusted, only what was there or what the kernel
                # produced for code the person approved.
                allowed = set(_rich_data(before.trusted_rich)) | approved_outputs
                if not before.trusted or not set(_rich_data(after.trusted_rich)) <= allowed:
                    raise RoomRefusal("agents may not make an output trusted")
        moved = {(s.cell_id, s.digest) for s in changes.deleted}
        to_label: list[str] = []
        for summary in changes.inserted:
            if (summary.cell_id, summary.digest) in moved:
                moved.discard((summary.cell_id, summary.digest))
                continue  # the same cell, moved: as it was
            if not isinstance(summary.cell_id, str) or summary.cell_id in seen_before:
                raise RoomRefusal(
                    f"a cell it inserts takes the id {summary.cell_id!r}, which is another "
                    "cell's; give new cells new ids"
                )
            if summary.trusted_rich is not None:
                raise RoomRefusal("agents may not make an output trusted")
            if summary.mark not in (None, _json(label(agent))):
                raise RoomRefusal("agents may not say who inserted a cell")
            to_label.append(summary.cell_id)
        ids = [s.cell_id for s in self.summaries if isinstance(s.cell_id, str)]
        if len(ids) != len(set(ids)):
            raise RoomRefusal("two cells would have the same id")
        return to_label

    def _note_outputs(self, changes: _Changes) -> None:
        # An agent client clears a cell's outputs before it runs the cell; when the run is
        # answered by the gate (held, refused), the person's outputs are given back.
        now = time.monotonic()
        for cell_id in [c for c, (_, _, when) in self._cleared.items() if now - when > 60]:
            del self._cleared[cell_id]
        for before, after in changes.changed:
            if not isinstance(after.cell_id, str):
                continue
            if after.outputs == "[]" and before.outputs != "[]":
                self._cleared[after.cell_id] = (before.outputs, before.execution_count, now)
            elif after.cell_id in self._cleared and _answered_by_the_gate(after.outputs):
                outputs, count, _ = self._cleared.pop(after.cell_id)
                self._restore[after.cell_id] = (outputs, count)
                self._restored[after.cell_id] = (count, now)
            elif (
                after.cell_id in self._restored
                and after.execution_count != before.execution_count
                and now - self._restored[after.cell_id][1] <= 60
            ):
                count, _ = self._restored.pop(after.cell_id)
                self._restore.setdefault(after.cell_id, (None, count))

    def take_restorations(self) -> dict[str, tuple[list[Any] | None, object]]:
        """Cells whose earlier outputs (and execution count) the gate's answer replaced in the
        agent's last update: id -> (outputs, count), to write back before that answer once the
        room applied it."""
        restore = {
            cell_id: (None if o is None else json.loads(o), count)
            for cell_id, (o, count) in self._restore.items()
        }
        self._restore.clear()
        return restore


_shadows: weakref.WeakKeyDictionary[Any, NotebookShadow] = weakref.WeakKeyDictionary()


def shadow_of(room_doc: Any) -> NotebookShadow:
    """The shadow of a notebook room's document (made on an agent's first update)."""
    shadow = _shadows.get(room_doc)
    if shadow is None:
        shadow = _shadows[room_doc] = NotebookShadow(room_doc)
    return shadow
