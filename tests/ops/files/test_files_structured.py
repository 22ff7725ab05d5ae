"""The structured previews of write_file, delete_path and move_path, and the text from them."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from jupyter_approvals.core.structured import checked_structured
from jupyter_approvals.ops import delete_path, move_path, write_file
from jupyter_approvals.previews.structured import STRUCTURED_BUDGET

from ..conftest import ask, request_of


@pytest.fixture
def csv(session, tmp_path: Path) -> Path:
    path = tmp_path / "work" / "data.csv"
    path.write_text("id,name\n1,ann\n2,bob\n3,cy\n")
    path.chmod(0o640)
    return path


def facts(document: dict) -> dict[str, str]:
    return {
        item["label"]: item["value"]
        for block in document["blocks"]
        if block["type"] == "facts"
        for item in block["items"]
    }


def headline(document: dict) -> dict[str, tuple[int, str]]:
    return {item["label"]: (item["count"], item["tone"]) for item in document["headline"]}


def checked(document: dict) -> dict:
    kept = checked_structured(document, 64_000)
    assert kept == json.loads(json.dumps(document))
    return document


def test_a_write_shows_counts_facts_then_the_diff_with_changed_words(session, csv):
    # Given a CSV and new content changing one row
    # When its write is asked for
    info = request_of(session, ask(lambda: write_file(csv, "id,name\n1,ann\n2,bea\n3,cy\n")))
    document = checked(info.structured)
    # Then the headline counts the lines, and the facts name the file, sizes and mode
    assert headline(document) == {"line to add": (1, "added"), "line to remove": (1, "removed")}
    assert facts(document) == {
        "file": str(csv),
        "change": "Replace",
        "size": "25 bytes -> 25 bytes",
        "mode": "0o640 (kept)",
    }
    assert document["blocks"][0]["items"][0]["path"] is True
    # And the diff marks the changed name on line 3 of both sides
    [diff] = [block for block in document["blocks"] if block["type"] == "diff"]
    [hunk] = diff["hunks"]
    removed, added = (line for line in hunk["lines"] if line["op"] != "context")
    assert (removed["old"], added["new"]) == (3, 3)
    assert added["parts"] == [{"text": "2,", "changed": False}, {"text": "bea", "changed": True}]
    # And the text preview is rendered from it: the counts, the facts, the unified diff
    assert info.preview == (
        f"1 line to add, 1 line to remove\nfile: {csv}\nchange: Replace\n"
        "size: 25 bytes -> 25 bytes\nmode: 0o640 (kept)\n"
        f"--- {csv} (current)\n+++ {csv} (new)\n"
        "@@ -1,4 +1,4 @@\n id,name\n 1,ann\n-2,bob\n+2,bea\n 3,cy"
    )


def test_a_binary_write_shows_sizes_and_the_full_digests(session, csv):
    # Given binary content
    data = b"\x00\x01" * 10
    # When its write is asked for
    info = request_of(session, ask(lambda: write_file(csv, data)))
    document = checked(info.structured)
    # Then the sizes are counted and both full sha256 digests given, with the text's note
    assert headline(document) == {"bytes now": (25, "neutral"), "bytes after": (20, "changed")}
    old_sha = hashlib.sha256(b"id,name\n1,ann\n2,bob\n3,cy\n").hexdigest()
    assert facts(document)["sha256"] == f"{old_sha} -> {hashlib.sha256(data).hexdigest()}"
    assert document["notes"] == [
        "Binary content (a NUL byte in the first 8 KiB): no line diff shown."
    ]
    assert f"sha256: {old_sha} -> {hashlib.sha256(data).hexdigest()}\n" in info.preview


def test_a_new_file_is_all_lines_added(session, tmp_path):
    target = tmp_path / "work" / "new.txt"
    info = request_of(session, ask(lambda: write_file(target, b"a\nb\n")))
    document = checked(info.structured)
    assert headline(document)["lines to add"] == (2, "added")
    assert facts(document)["mode"] == "new file (umask)"
    [diff] = [block for block in document["blocks"] if block["type"] == "diff"]
    assert diff["old_path"] == "/dev/null"
    assert [(line["op"], line["new"]) for line in diff["hunks"][0]["lines"]] == [
        ("added", 1),
        ("added", 2),
    ]


def test_a_delete_counts_files_folders_and_bytes_and_lists_the_paths(session, tmp_path):
    # Given a folder with two files, one in a subfolder
    folder = tmp_path / "work" / "out"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.csv").write_text("1\n")
    (folder / "sub" / "b.csv").write_text("22\n")
    # When its deletion is asked for
    info = request_of(session, ask(lambda: delete_path(folder, recursive=True)))
    document = checked(info.structured)
    # Then the headline counts what goes (the folder itself too), and the paths are listed
    # with their details
    assert headline(document) == {
        "files to delete": (2, "removed"),
        "folders to delete": (2, "removed"),
        "bytes to delete": (5, "removed"),
    }
    assert facts(document)["delete"] == str(folder)
    [paths] = [block for block in document["blocks"] if block["type"] == "paths"]
    assert [(item["path"], item["detail"]) for item in paths["items"]] == [
        ("a.csv", "2 bytes"),
        ("sub/", "directory"),
        ("sub/b.csv", "3 bytes"),
    ]
    # And the text lists the same
    assert info.preview.endswith("  a.csv  2 bytes\n  sub/  directory\n  sub/b.csv  3 bytes")


def test_a_move_names_both_ends_and_what_it_replaces(session, csv):
    # Given a destination that exists
    destination = csv.parent / "old.csv"
    destination.write_text("old\n")
    # When the move is asked for (overwrite allowed)
    info = request_of(session, ask(lambda: move_path(csv, destination, overwrite=True)))
    document = checked(info.structured)
    # Then source and destination come first as paths, then what is replaced
    [block] = [block for block in document["blocks"] if block["type"] == "facts"]
    assert [(item["label"], item["path"]) for item in block["items"][:2]] == [
        ("source", True),
        ("destination", True),
    ]
    assert facts(document)["destination"] == str(destination)
    assert facts(document)["replaces"] == "file, 4 bytes"
    assert headline(document)["path to replace"] == (1, "removed")
    assert headline(document)["file to move"] == (1, "neutral")
    # And the summary and the text agree with it
    assert "(replacing it)" in info.summary
    assert "replaces: file, 4 bytes" in info.preview


def test_a_huge_delete_keeps_the_budget_and_counts_the_paths_left_out(session, tmp_path):
    # Given a folder of 3,000 files
    folder = tmp_path / "work" / "many"
    folder.mkdir()
    for n in range(3_000):
        (folder / f"file-{n:04}.csv").write_bytes(b"")
    # When its deletion is asked for
    info = request_of(session, ask(lambda: delete_path(folder, recursive=True)))
    document = checked(info.structured)
    # Then the headline still counts every file, and the paths not shown are announced
    assert headline(document)["files to delete"] == (3_000, "removed")
    [paths] = [block for block in document["blocks"] if block["type"] == "paths"]
    [left_out] = document["left_out"]
    assert left_out["kind"] == "paths"
    assert len(paths["items"]) + left_out["count"] == 3_000
    assert len(json.dumps(document, ensure_ascii=False, separators=(",", ":"))) <= STRUCTURED_BUDGET
