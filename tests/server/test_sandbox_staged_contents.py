"""Under the sandbox policy an agent's deletions, renames and copies over the contents API are
staged in its change set like its saves, and its REST reads show the project as its sandboxed
code sees it: what it staged, not what the project holds."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path

import pytest

from jupyter_approvals.core.journal.reader import read_entries
from jupyter_approvals.core.project import journal_path

from .agent_client import (
    APPROVALS_API,
    KernelSocket,
    add_agent,
    call,
    change_sets,
    decide_changes,
    rename,
)
from .test_sandbox_staged_writes import agents_kernel, run, save

pytestmark = [pytest.mark.timeout(120), pytest.mark.kernel]


async def read(jp_fetch, token: str, path: str, **params: str) -> tuple[int, dict]:
    status, _, model = await call(jp_fetch, "api", "contents", path, token=token, params=params)
    return status, model


async def listed(jp_fetch, token: str, folder: str = "") -> list[str]:
    status, model = await read(jp_fetch, token, folder)
    assert status == 200, model
    return sorted(entry["name"] for entry in model["content"])


async def decide_all(jp_fetch, change_set: dict, decision: str) -> dict:
    await asyncio.sleep(1.1)  # the reading floor
    status, _, decided = await decide_changes(
        jp_fetch,
        change_set["kernel_id"],
        {"decision": decision, "fingerprint": change_set["fingerprint"]},
    )
    assert status == 200, decided
    return decided


async def test_a_deletion_waits_in_the_change_set_and_its_code_no_longer_sees_the_file(
    sandboxed_kernelspec, jp_fetch, jp_http_port, jp_base_url, jp_root_dir, state_dir
):
    # Given a project file and an agent with a sandboxed kernel
    (Path(jp_root_dir) / "sales.csv").write_text("region,total\nnorth,10\n")
    token = add_agent(state_dir, "bot")
    kernel_id = await agents_kernel(jp_fetch, token)
    # When the agent deletes the file over the contents API
    status, _, answer = await call(
        jp_fetch, "api", "contents", "sales.csv", method="DELETE", token=token
    )
    # Then the deletion answers at once, and the project still has the file
    assert status == 204, answer
    assert (Path(jp_root_dir) / "sales.csv").read_text() == "region,total\nnorth,10\n"
    # And the agent's reads, and its sandboxed code, no longer find it
    assert (await read(jp_fetch, token, "sales.csv"))[0] == 404
    assert "sales.csv" not in await listed(jp_fetch, token)
    socket = await KernelSocket.open(jp_http_port, jp_base_url, kernel_id, token, v1=False)
    try:
        assert await run(socket, "import os; print(os.path.exists('sales.csv'))") == "False\n"
    finally:
        socket.close()
    # And the person's own reads still find it
    status, _, model = await call(jp_fetch, "api", "contents", "sales.csv")
    assert status == 200, model
    # And the kernel's change set lists the deletion, with nothing held one by one
    [change_set] = await change_sets(jp_fetch)
    assert (change_set["kernel_id"], change_set["changes"][0]["path"]) == (kernel_id, "sales.csv")
    assert change_set["changes"][0]["kind"] == "deleted"
    _, _, pending = await call(jp_fetch, APPROVALS_API, "pending")
    assert pending["pending"] == []
    # When the person applies it
    await decide_all(jp_fetch, change_set, "apply")
    # Then the file is gone from the project, and the journal says who staged what
    assert not (Path(jp_root_dir) / "sales.csv").exists()
    entries = read_entries(journal_path(Path(jp_root_dir), state_dir), limit=200).entries
    staged = [(e["action"], e["path"]) for e in entries if e["event"] == "staged"]
    assert staged == [("file.delete", "sales.csv")]


async def test_a_rename_reads_at_the_new_path_and_applies_as_a_move(
    sandboxed_kernelspec, jp_fetch, jp_root_dir, state_dir
):
    # Given a project file and an agent without a kernel
    root = Path(jp_root_dir)
    (root / "draft.md").write_text("# draft\n")
    (root / "draft.md").chmod(0o640)
    token = add_agent(state_dir, "bot")
    # When the agent renames it over the contents API (as JupyterLab's file browser does)
    status, _, model = await rename(jp_fetch, token, "draft.md", "final.md")
    # Then it answers with the file at its new path, the project unchanged
    assert status == 200, model
    assert model["path"] == "final.md"
    assert sorted(p.name for p in root.iterdir() if not p.name.startswith(".")) == ["draft.md"]
    # And the agent reads it at the new path only
    status, read_model = await read(jp_fetch, token, "final.md")
    assert (status, read_model["content"]) == (200, "# draft\n")
    assert (await read(jp_fetch, token, "draft.md"))[0] == 404
    assert "final.md" in await listed(jp_fetch, token)
    assert "draft.md" not in await listed(jp_fetch, token)
    # And its change set lists one rename
    [change_set] = await change_sets(jp_fetch)
    [change] = change_set["changes"]
    assert (change["kind"], change["path"], change["detail"]) == ("renamed", "final.md", "draft.md")
    # When the person applies it
    await decide_all(jp_fetch, change_set, "apply")
    # Then the project has the file at the new path, with its bytes and mode
    assert not (root / "draft.md").exists()
    assert (root / "final.md").read_text() == "# draft\n"
    assert (root / "final.md").stat().st_mode & 0o777 == 0o640


async def test_a_folder_rename_stages_each_file_and_a_discard_brings_them_back(
    sandboxed_kernelspec, jp_fetch, jp_root_dir, state_dir
):
    # Given a project folder of two files, one in a subfolder, and an agent
    root = Path(jp_root_dir)
    (root / "data" / "raw").mkdir(parents=True)
    (root / "data" / "a.csv").write_text("a\n1\n")
    (root / "data" / "raw" / "b.csv").write_text("b\n2\n")
    token = add_agent(state_dir, "bot")
    # When the agent renames the folder
    status, _, model = await rename(jp_fetch, token, "data", "archive")
    # Then the agent finds the files below the new name, and none below the old one
    assert status == 200, model
    assert await listed(jp_fetch, token, "archive") == ["a.csv", "raw"]
    assert (await read(jp_fetch, token, "archive/raw/b.csv"))[1]["content"] == "b\n2\n"
    assert await listed(jp_fetch, token, "data") == ["raw"]
    assert await listed(jp_fetch, token, "data/raw") == []
    # And the change set lists each file as renamed
    [change_set] = await change_sets(jp_fetch)
    assert sorted((c["kind"], c["detail"], c["path"]) for c in change_set["changes"]) == [
        ("renamed", "data/a.csv", "archive/a.csv"),
        ("renamed", "data/raw/b.csv", "archive/raw/b.csv"),
    ]
    # When the person discards it
    await decide_all(jp_fetch, change_set, "discard")
    # Then the project never changed, and the agent reads the files where they were
    assert (root / "data" / "a.csv").read_text() == "a\n1\n"
    assert not (root / "archive").exists()
    assert (await read(jp_fetch, token, "data/raw/b.csv"))[1]["content"] == "b\n2\n"
    assert await change_sets(jp_fetch) == []


async def test_a_rename_onto_an_existing_or_missing_path_is_refused_as_jupyter_refuses_it(
    sandboxed_kernelspec, jp_fetch, jp_root_dir, state_dir
):
    # Given a project file and a file the agent staged
    (Path(jp_root_dir) / "kept.txt").write_text("kept\n")
    token = add_agent(state_dir, "bot")
    await save(jp_fetch, token, "mine.txt", "mine\n")

    # When the agent renames onto the staged file, onto the project file, and a missing file
    moves = [
        ("kept.txt", "mine.txt"),
        ("mine.txt", "kept.txt"),
        ("nothing.txt", "other.txt"),
        ("kept.txt", "no/such/folder.txt"),
    ]
    results = [(await rename(jp_fetch, token, old, new))[0] for old, new in moves]
    # Then each answers as jupyter_server would, and nothing else was staged
    assert results == [409, 409, 404, 404]
    [change_set] = await change_sets(jp_fetch)
    assert [c["path"] for c in change_set["changes"]] == ["mine.txt"]


async def test_a_copy_and_untitled_files_are_staged_without_landing_on_each_other(
    sandboxed_kernelspec, jp_fetch, jp_root_dir, state_dir
):
    # Given a project notebook and an agent
    root = Path(jp_root_dir)
    notebook = {
        "cells": [],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (root / "analysis.ipynb").write_text(json.dumps(notebook))
    token = add_agent(state_dir, "bot")
    # When it copies the notebook, and makes two untitled files
    status, _, copied = await call(
        jp_fetch,
        "api",
        "contents",
        method="POST",
        body=json.dumps({"copy_from": "analysis.ipynb"}),
        token=token,
    )
    assert status == 201, copied
    names = []
    for _ in range(2):
        status, _, made = await call(
            jp_fetch,
            "api",
            "contents",
            method="POST",
            body=json.dumps({"type": "file", "ext": ".txt"}),
            token=token,
        )
        assert status == 201, made
        names.append(made["path"])
    # Then all three wait in the change set, under three names, none in the project
    assert names == ["untitled.txt", "untitled1.txt"]
    [change_set] = await change_sets(jp_fetch)
    assert sorted(c["path"] for c in change_set["changes"]) == sorted([copied["path"], *names])
    assert sorted(p.name for p in root.iterdir() if not p.name.startswith(".")) == [
        "analysis.ipynb"
    ]
    # And the copy reads as a notebook
    status, model = await read(jp_fetch, token, copied["path"])
    assert (status, model["type"], model["content"]["nbformat"]) == (200, "notebook", 4)


async def test_a_staged_binary_file_reads_back_as_base64_and_a_folder_it_made_lists(
    sandboxed_kernelspec, jp_fetch, jp_root_dir, state_dir
):
    # Given an agent that saved a binary file into a folder the project does not have
    token = add_agent(state_dir, "bot")
    data = bytes(range(256))
    body = json.dumps(
        {"type": "file", "format": "base64", "content": base64.b64encode(data).decode()}
    )
    status, _, _ = await call(
        jp_fetch, "api", "contents", "out/blob.bin", method="PUT", body=body, token=token
    )
    assert status in (200, 201)
    # When it reads the file, the folder, and the file asked for as text
    status, model = await read(jp_fetch, token, "out/blob.bin")
    folder_status, folder = await read(jp_fetch, token, "out")
    text_status, _ = await read(jp_fetch, token, "out/blob.bin", format="text")
    # Then the file reads back as the bytes it saved, the folder lists it, text is refused
    assert (status, model["format"]) == (200, "base64")
    assert base64.b64decode(model["content"]) == data
    assert folder_status == 200
    assert [entry["name"] for entry in folder["content"]] == ["blob.bin"]
    assert text_status == 400
    # And the person, whose project has none of it, does not find it
    assert (await call(jp_fetch, "api", "contents", "out"))[0] == 404


async def test_a_folders_files_are_staged_deleted_and_an_empty_folders_deletion_is_held(
    sandboxed_kernelspec, jp_fetch, jp_root_dir, state_dir
):
    # Given a project folder with a file and an empty one, and an agent
    root = Path(jp_root_dir)
    (root / "logs").mkdir()
    (root / "logs" / "run.log").write_text("ok\n")
    (root / "empty").mkdir()
    token = add_agent(state_dir, "bot")
    # When the agent deletes both folders
    logs = await call(jp_fetch, "api", "contents", "logs", method="DELETE", token=token)
    empty = await call(jp_fetch, "api", "contents", "empty", method="DELETE", token=token)
    # Then the folder's file is staged as deleted, the folder staying as applying leaves it
    assert logs[0] == 204, logs
    assert await listed(jp_fetch, token, "logs") == []
    [change_set] = await change_sets(jp_fetch)
    assert [(c["kind"], c["path"]) for c in change_set["changes"]] == [("deleted", "logs/run.log")]
    # And the empty folder, which no change set can hold, waits for a person one by one
    assert (empty[0], empty[2]["code"]) == (409, "APPROVAL_PENDING")
    assert (root / "logs" / "run.log").exists()
    assert (root / "empty").is_dir()
