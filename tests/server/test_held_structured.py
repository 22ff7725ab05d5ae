"""The structured previews of what the server holds: agent code, agent file requests, room
edits. Built beside the text (which stays as it was) and kept by the store with the request."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pycrdt import Doc, Map, Text

from jupyter_approvals.core.model import RequestInfo
from jupyter_approvals.core.policy import Limits, ManualClock
from jupyter_approvals.core.structured import checked_structured
from jupyter_approvals.server.gate.held_code import held_preview
from jupyter_approvals.server.gate.held_files import held_delete, held_file_write, held_rename
from jupyter_approvals.server.gate.held_room_edits import held_room_edit
from jupyter_approvals.server.gate.hold import AgentHold
from jupyter_approvals.server.mirror.journals import ServerJournals


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def hold(tmp_path: Path, root: Path) -> AgentHold:
    journals = ServerJournals(lambda: tmp_path / "state", root)
    return AgentHold(Limits(), journals, ManualClock())


def blocks(document: dict, kind: str) -> list[dict]:
    return [block for block in document["blocks"] if block["type"] == kind]


def facts(document: dict) -> dict[str, str]:
    return {item["label"]: item["value"] for b in blocks(document, "facts") for item in b["items"]}


def headline(document: dict) -> dict[str, int]:
    return {item["label"]: item["count"] for item in document["headline"]}


def checked(document: dict | None) -> dict:
    assert document is not None
    assert checked_structured(document, 64_000) == json.loads(json.dumps(document))
    return document


def test_held_code_is_a_python_block_after_who_runs_it_where(hold, root):
    # Given agent code with a user expression, sent from a notebook's kernel
    (root / "work").mkdir()
    code = "import pandas as pd\ndf = pd.read_csv('sales.csv')\ndf.head()"
    content = {"code": code, "silent": True, "user_expressions": {"rows": "len(df)"}}
    # When the server holds it
    info = hold.screen(content, "kernel-1234", "bot", "work/analysis.ipynb")
    assert isinstance(info, RequestInfo)  # pending, not let through
    document = checked(info.structured)
    # Then the headline counts the code's lines and the expressions
    assert headline(document) == {"lines of code": 3, "user expression": 1}
    # And the facts name the agent, the notebook (as a path), the kernel and the unusual flag
    assert facts(document) == {
        "agent": "bot",
        "notebook": "work/analysis.ipynb",
        "kernel": "kernel-1234",
        "silent": "True",
        "rows": "len(df)",
    }
    # And the code is a python block, whole
    [block] = blocks(document, "code")
    assert (block["language"], block["text"]) == ("python", code)
    # And the text is what it always was
    assert info.preview == held_preview(code, {"rows": "len(df)"})


def test_held_code_of_many_short_lines_is_shown_whole(hold):
    # Given 2,000 short lines (within the text's limit, far past the builder's per-line budget)
    code = "\n".join(f"v{n % 10} = {n % 7}" for n in range(2_000))
    assert len(code) < Limits().max_preview_chars
    # When held
    info = hold.screen({"code": code}, "kernel-1", "bot", None)
    assert isinstance(info, RequestInfo)
    document = checked(info.structured)
    # Then the code block holds all of it and nothing is left out
    [block] = blocks(document, "code")
    assert block["text"] == code
    assert document["left_out"] == []
    assert "notebook" not in facts(document)


def test_an_overwrite_by_an_agent_is_a_diff_with_changed_words(hold, root):
    # Given data.csv, and an agent PUT changing one value
    (root / "data.csv").write_text("region,units\nnorth,120\nsouth,80\n")
    new = b"region,units\nnorth,120\nsouth,95\n"
    # When the server makes its held form
    write = held_file_write("data.csv", new, root, "bot")
    document = checked(write.structured)
    # Then the counts, the file and the changed value are there
    assert headline(document) == {"line to add": 1, "line to remove": 1}
    assert facts(document)["file"] == "data.csv"
    [diff] = blocks(document, "diff")
    changed = [line for line in diff["hunks"][0]["lines"] if line["op"] == "added"]
    assert changed[0]["new"] == 3
    assert changed[0]["parts"] == [
        {"text": "south,", "changed": False},
        {"text": "95", "changed": True},
    ]
    assert "-south,80\n+south,95" in write.preview
    # And the request the store opens carries it
    info = hold.screen_write(write, "bot")
    assert isinstance(info, RequestInfo)
    assert info.structured == document


def test_a_binary_write_by_an_agent_gives_sizes_and_the_digest(root):
    (root / "blob.bin").write_bytes(b"\x00" * 10)
    write = held_file_write("blob.bin", b"\x00\x01", root, "bot")
    document = checked(write.structured)
    assert headline(document) == {"bytes now": 10, "bytes after": 2}
    assert facts(document)["sha256"].startswith("-> ")
    assert document["notes"] == [
        "Binary content (a NUL byte in the first 8 KiB): no line diff shown."
    ]


def test_an_agent_delete_counts_and_lists_what_goes(root):
    # Given a folder with two files
    (root / "out").mkdir()
    (root / "out" / "a.csv").write_text("1\n")
    (root / "out" / "b.csv").write_text("22\n")
    # When an agent deletes it
    write = held_delete("out", root, "bot")
    document = checked(write.structured)
    # Then the counts say what goes, and the paths are listed
    assert document["headline"][0] == {"label": "files", "count": 2, "tone": "removed"}
    assert headline(document)["bytes"] == 5
    [paths] = blocks(document, "paths")
    assert [item["path"] for item in paths["items"]] == ["a.csv", "b.csv"]
    assert write.preview.startswith("2 files, 1 folder, 5 bytes\nchange: Delete\npath: out\n")
    assert "what: directory with 2 files and 0 directories inside" in write.preview


def test_an_agent_rename_names_both_paths(root):
    (root / "a.txt").write_text("x\n")
    write = held_rename("a.txt", "b.txt", root, "bot")
    document = checked(write.structured)
    assert facts(document)["path"] == "a.txt"
    assert facts(document)["to"] == "b.txt"
    assert [item["path"] for item in blocks(document, "facts")[0]["items"]][:3] == [
        False,
        True,
        True,
    ]


def test_a_room_edit_is_a_diff_from_the_rooms_text():
    # Given the room of notes.py, and an agent's update appending a line
    room = Doc()
    room["source"] = Text("def total(rows):\n    return sum(rows)\n")
    room["state"] = Map({"dirty": False, "path": "notes.py"})
    client = Doc()
    client.apply_update(room.get_update())
    before = client.get_state()
    source = client.get("source", type=Text)
    source += "print(total([1]))\n"
    # When held
    write = held_room_edit(room, client.get_update(before), "notes.py", "bot")
    assert write is not None
    document = checked(write.structured)
    # Then it is the diff from the room's text, the new line numbered 3
    assert facts(document)["via"] == "collaboration room"
    [diff] = blocks(document, "diff")
    assert diff["old_path"] == "notes.py (as in the room)"
    [added] = [line for line in diff["hunks"][0]["lines"] if line["op"] == "added"]
    assert (added["new"], added["parts"][0]["text"]) == (3, "print(total([1]))")
    assert "+print(total([1]))" in write.preview


def test_a_huge_agent_write_keeps_the_budget_and_announces_the_rest(root):
    # Given a file of 50,000 lines of which every 5th changes
    (root / "big.txt").write_text("".join(f"line {n}\n" for n in range(50_000)))
    new = "".join(f"line {n}{' x' if n % 5 == 0 else ''}\n" for n in range(50_000))
    # When held
    write = held_file_write("big.txt", new.encode(), root, "bot")
    document = checked(write.structured)
    # Then the structured form is within budget and says what it left out
    compact = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    assert len(compact) <= 48_000
    left_out = {item["kind"]: item["count"] for item in document["left_out"]}
    assert left_out["diff lines"] > 0
    assert headline(document) == {"lines to add": 10_000, "lines to remove": 10_000}
