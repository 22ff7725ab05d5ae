"""A sandboxed kernel's change set over REST: listed from the overlay, decided by a person
only, applied or discarded file by file, journaled; and what the kernel then sees."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from ..conftest import journal_lines
from .agent_client import APPROVALS_API, add_agent, call, change_sets
from .agent_client import decide_changes as decide
from .conftest import printed

pytestmark = pytest.mark.timeout(120)


async def read_in(kernel, path: str) -> str:
    """What the kernel sees at ``path`` (or ``<absent>``)."""
    return printed(
        await kernel.run(
            f"import os\nprint(open({path!r}).read() if os.path.exists({path!r}) else '<absent>',"
            " end='')"
        )
    )


async def test_a_person_applies_the_change_set_the_server_listed(
    sandboxed_kernels, jp_fetch, jp_root_dir, state_dir
):
    # Given a sandboxed kernel that rewrote a project file and wrote a report
    project = Path(jp_root_dir)
    (project / "sales.csv").write_text("id,total\n1,10\n")
    kernel = await sandboxed_kernels()
    await kernel.run(
        "open('sales.csv', 'w').write('id,total\\n1,12\\n')\n"
        "import os; os.makedirs('out', exist_ok=True)\n"
        "open('out/report.md', 'w').write('# report\\n')"
    )
    # When the person lists the change sets
    [listed] = await change_sets(jp_fetch)
    # Then the server computed it from the overlay: two changes, counts first
    assert listed["kernel_id"] == kernel.id
    assert listed["counts"] == {"created": 1, "modified": 1}
    assert [(c["path"], c["kind"]) for c in listed["changes"]] == [
        ("out/report.md", "created"),
        ("sales.csv", "modified"),
    ]
    # When the person applies it after reading it
    await asyncio.sleep(1.1)
    status, _, answer = await decide(
        jp_fetch, kernel.id, {"decision": "apply", "fingerprint": listed["fingerprint"]}
    )
    # Then both files are in the project, the list is empty and the decision is journaled
    assert (status, answer["done"], answer["refused"]) == (
        200,
        ["out/report.md", "sales.csv"],
        {},
    )
    assert (project / "sales.csv").read_text() == "id,total\n1,12\n"
    assert (project / "out" / "report.md").read_text() == "# report\n"
    assert await change_sets(jp_fetch) == []
    events = [(line["event"], line.get("action")) for line in journal_lines(state_dir)]
    assert ("approved", "sandbox.changes") in events
    assert ("executed", "sandbox.changes") in events
    # And the kernel still reads what it wrote
    assert await read_in(kernel, "sales.csv") == "id,total\n1,12\n"


async def test_a_discarded_change_leaves_the_kernels_view_where_overlayfs_follows(
    sandboxed_kernels, jp_fetch, jp_root_dir
):
    # Given a sandboxed kernel that modified one file, deleted one and created one
    project = Path(jp_root_dir)
    (project / "keep.csv").write_text("project\n")
    (project / "gone.csv").write_text("still here\n")
    kernel = await sandboxed_kernels()
    await kernel.run(
        "open('keep.csv', 'w').write('sandbox\\n')\n"
        "import os; os.remove('gone.csv')\n"
        "open('new.csv', 'w').write('new\\n')"
    )
    [listed] = await change_sets(jp_fetch)
    # When the person discards all of it
    await asyncio.sleep(1.1)
    status, _, answer = await decide(
        jp_fetch, kernel.id, {"decision": "discard", "fingerprint": listed["fingerprint"]}
    )
    assert status == 200, answer
    # Then the project is as it was, and nothing is listed
    assert (project / "keep.csv").read_text() == "project\n"
    assert not (project / "new.csv").exists()
    assert await change_sets(jp_fetch) == []
    # And the kernel sees the project's modified and deleted files again at once
    assert await read_in(kernel, "keep.csv") == "project\n"
    assert await read_in(kernel, "gone.csv") == "still here\n"
    # But a created file stays in its view until it restarts (docs/security.md says so)
    assert await read_in(kernel, "new.csv") == "new\n"


async def test_the_persons_own_edits_show_in_the_kernel(sandboxed_kernels, jp_fetch, jp_root_dir):
    # Given a sandboxed kernel and a file it only read, and one it wrote that was applied
    project = Path(jp_root_dir)
    (project / "notes.txt").write_text("v1\n")
    kernel = await sandboxed_kernels()
    assert await read_in(kernel, "notes.txt") == "v1\n"
    await kernel.run("open('report.md', 'w').write('kernel\\n')")
    [listed] = await change_sets(jp_fetch)
    await asyncio.sleep(1.1)
    await decide(jp_fetch, kernel.id, {"decision": "apply", "fingerprint": listed["fingerprint"]})
    # When the person edits both in the project
    (project / "notes.txt").write_text("v2\n")
    (project / "report.md").write_text("person\n")
    # Then neither is listed as the kernel's change, and the kernel sees both edits
    assert await change_sets(jp_fetch) == []
    assert await read_in(kernel, "notes.txt") == "v2\n"
    assert await read_in(kernel, "report.md") == "person\n"


async def test_a_decision_before_the_person_could_read_is_refused(sandboxed_kernels, jp_fetch):
    # Given a change set just listed
    kernel = await sandboxed_kernels()
    await kernel.run("open('x.csv', 'w').write('x\\n')")
    [listed] = await change_sets(jp_fetch)
    # When a decision comes at once
    status, _, answer = await decide(
        jp_fetch, kernel.id, {"decision": "apply", "fingerprint": listed["fingerprint"]}
    )
    # Then it is refused as answered too fast, and nothing is applied
    assert (status, answer["code"]) == (409, "APPROVAL_AUTO_ANSWERED")
    [again] = await change_sets(jp_fetch)
    assert again["fingerprint"] == listed["fingerprint"]


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"decision": "apply", "fingerprint": "sha256:" + "0" * 64}, "APPROVAL_NOT_ISSUED"),
        ({"decision": "yes", "fingerprint": "sha256:" + "0" * 64}, "APPROVAL_MALFORMED_DECISION"),
        ({"decision": "apply", "fingerprint": "abc"}, "APPROVAL_MALFORMED_DECISION"),
        ({"decision": "apply", "fingerprint": "sha256:" + "0" * 64, "paths": []}, None),
    ],
)
async def test_a_decision_on_a_change_set_never_shown_or_malformed_is_refused(
    sandboxed_kernels, jp_fetch, jp_root_dir, body, code
):
    # Given a sandboxed kernel with a change
    kernel = await sandboxed_kernels()
    await kernel.run("open('x.csv', 'w').write('x\\n')")
    await change_sets(jp_fetch)
    # When a decision names a fingerprint never shown, or is malformed
    status, _, answer = await decide(jp_fetch, kernel.id, body)
    # Then it is refused with its code and nothing reaches the project
    assert status in (400, 409)
    assert answer["code"] == (code or "APPROVAL_MALFORMED_DECISION")
    assert not (Path(jp_root_dir) / "x.csv").exists()


async def test_an_agent_can_neither_list_page_nor_decide_change_sets(
    sandboxed_kernels, jp_fetch, jp_root_dir, state_dir
):
    # Given a sandboxed kernel with a change, and an agent's token
    token = add_agent(state_dir)
    kernel = await sandboxed_kernels()
    await kernel.run("open('x.csv', 'w').write('x\\n')")
    [listed] = await change_sets(jp_fetch)
    await asyncio.sleep(1.1)
    # When the agent lists the change sets, pages through its files, and applies its own
    listed_status, _, _ = await call(jp_fetch, APPROVALS_API, "changes", token=token)
    paged_status, _, paged = await call(
        jp_fetch,
        APPROVALS_API,
        "changes",
        kernel.id,
        "files",
        params={"fingerprint": listed["fingerprint"], "offset": "0"},
        token=token,
    )
    status, _, answer = await decide(
        jp_fetch,
        kernel.id,
        {"decision": "apply", "fingerprint": listed["fingerprint"]},
        token=token,
    )
    # Then all are refused as an agent's, and nothing reaches the project
    assert listed_status == 403
    assert (paged_status, paged["code"]) == (403, "APPROVAL_AGENT_FORBIDDEN")
    assert (status, answer["code"]) == (403, "APPROVAL_AGENT_FORBIDDEN")
    assert not (Path(jp_root_dir) / "x.csv").exists()


async def preview_of(jp_fetch, kernel_id: str, path: str, token: str | None = None):
    return await call(
        jp_fetch, APPROVALS_API, "changes", kernel_id, "preview", params={"path": path}, token=token
    )


async def test_a_listed_files_diff_is_shown_from_its_bytes(
    sandboxed_kernels, jp_fetch, jp_root_dir
):
    # Given a sandboxed kernel that changed one line of a project file and created another
    (Path(jp_root_dir) / "sales.txt").write_text("id,total\n1,10\n2,20\n")
    kernel = await sandboxed_kernels()
    await kernel.run(
        "open('sales.txt', 'w').write('id,total\\n1,10\\n2,25\\n')\n"
        "open('notes.md', 'w').write('# notes\\n')"
    )
    await change_sets(jp_fetch)
    # When the person opens each file's preview
    status, _, modified = await preview_of(jp_fetch, kernel.id, "sales.txt")
    _, _, created = await preview_of(jp_fetch, kernel.id, "notes.md")
    # Then the modified file's line diff shows the old and the new line, the new file its lines
    assert status == 200
    assert "-2,20" in modified["preview"]
    assert "+2,25" in modified["preview"]
    assert modified["structured"]["blocks"]
    assert "+# notes" in created["preview"]


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
async def test_a_changed_table_file_is_shown_as_a_table_diff(
    sandboxed_kernels, jp_fetch, jp_root_dir, fmt
):
    # Given a project table of 3 rows, and a sandboxed kernel that changes one cell of it,
    # drops a row and adds another
    pd = pytest.importorskip("pandas")
    name = f"sales.{fmt}"
    before = pd.DataFrame({"id": ["a", "b", "c"], "total": ["10", "20", "30"]})
    if fmt == "csv":
        before.to_csv(Path(jp_root_dir) / name, index=False)
    else:
        before.to_parquet(Path(jp_root_dir) / name, index=False)
    kernel = await sandboxed_kernels()
    write = "to_csv" if fmt == "csv" else "to_parquet"
    await kernel.run(
        "import pandas as pd\n"
        "df = pd.DataFrame({'id': ['a', 'b', 'd'], 'total': ['10', '25', '40']})\n"
        f"df.{write}({name!r}, index=False)"
    )
    await change_sets(jp_fetch)
    # When the person opens its preview
    status, _, shown = await preview_of(jp_fetch, kernel.id, name)
    # Then it counts rows added, removed and changed, matched on the first column, and shows
    # the changed cell's old and new value
    assert status == 200, shown
    assert shown["summary"].endswith("a table)")
    text = shown["preview"]
    assert text.startswith("1 row to add, 1 row to remove, 1 row to change, 1 row unchanged")
    assert "20 -> 25" in text
    assert "matched by position" not in text


async def test_a_changed_sqlite_database_is_shown_by_its_tables_and_rows(
    sandboxed_kernels, jp_fetch, jp_root_dir
):
    # Given a project database, and a sandboxed kernel that updates one row of it
    pytest.importorskip("pandas")
    connection = sqlite3.connect(Path(jp_root_dir) / "shop.sqlite")
    connection.execute("CREATE TABLE sales (region TEXT, total INTEGER)")
    connection.execute("INSERT INTO sales VALUES ('north', 10), ('south', 20)")
    connection.commit()
    connection.close()
    kernel = await sandboxed_kernels()
    await kernel.run(
        "import sqlite3\nc = sqlite3.connect('shop.sqlite')\n"
        "c.execute(\"UPDATE sales SET total = 25 WHERE region = 'south'\")\nc.commit()\nc.close()"
    )
    await change_sets(jp_fetch)
    # When the person opens its preview
    status, _, shown = await preview_of(jp_fetch, kernel.id, "shop.sqlite")
    # Then it shows the table and the changed cell, not bytes
    assert status == 200, shown
    assert shown["summary"].endswith("a table)")
    assert "sales" in shown["preview"]
    assert "20 -> 25" in shown["preview"]


async def test_a_table_without_an_identifying_column_is_matched_by_position(
    sandboxed_kernels, jp_fetch, jp_root_dir
):
    # Given a CSV whose first column repeats, and a kernel that changes one cell of it
    (Path(jp_root_dir) / "log.csv").write_text("day,value\nmon,1\nmon,2\n")
    kernel = await sandboxed_kernels()
    await kernel.run("open('log.csv', 'w').write('day,value\\nmon,1\\nmon,3\\n')")
    await change_sets(jp_fetch)
    # When the person opens its preview
    _, _, shown = await preview_of(jp_fetch, kernel.id, "log.csv")
    # Then rows are matched by position, and the changed row is shown
    assert "matched by position" in shown["preview"]
    assert shown["preview"].startswith("0 rows to add, 0 rows to remove, 1 row to change")
    assert "2 -> 3" in shown["preview"]


async def test_a_preview_of_bytes_that_changed_since_the_listing_is_refused(
    sandboxed_kernels, jp_fetch
):
    # Given a listed change set
    kernel = await sandboxed_kernels()
    await kernel.run("open('out.csv', 'w').write('first\\n')")
    await change_sets(jp_fetch)
    # When the kernel writes other bytes before the person opens the preview
    await kernel.run("open('out.csv', 'w').write('second\\n')")
    status, _, answer = await preview_of(jp_fetch, kernel.id, "out.csv")
    # Then the preview is refused (it would show bytes the listing's fingerprint does not bind)
    assert (status, answer["code"]) == (409, "APPROVAL_FINGERPRINT_MISMATCH")


async def test_a_path_never_listed_and_an_agent_get_no_preview(
    sandboxed_kernels, jp_fetch, state_dir
):
    # Given a listed change set, and an agent's token
    token = add_agent(state_dir)
    kernel = await sandboxed_kernels()
    await kernel.run("open('out.csv', 'w').write('x\\n')")
    await change_sets(jp_fetch)
    # When a path that was never listed is asked for, and the agent asks for the listed one
    never_status, _, never = await preview_of(jp_fetch, kernel.id, "../../etc/passwd")
    agent_status, _, _ = await preview_of(jp_fetch, kernel.id, "out.csv", token=token)
    # Then both are refused
    assert (never_status, never["code"]) == (409, "APPROVAL_NOT_ISSUED")
    assert agent_status == 403


async def test_a_restarted_sandboxed_kernel_keeps_its_change_set_and_drops_discarded_files(
    sandboxed_kernels, jp_fetch, jp_serverapp
):
    # Given a sandboxed kernel that created two files, one of which the person discarded
    kernel = await sandboxed_kernels()
    await kernel.run("open('keep.csv', 'w').write('k\\n')\nopen('drop.csv', 'w').write('d\\n')")
    [listed] = await change_sets(jp_fetch)
    await asyncio.sleep(1.1)
    status, _, _ = await decide(
        jp_fetch,
        kernel.id,
        {"decision": "discard", "fingerprint": listed["fingerprint"], "paths": ["drop.csv"]},
    )
    assert status == 200
    # When the kernel restarts
    await jp_serverapp.kernel_manager.restart_kernel(kernel.id)
    await kernel.client.wait_for_ready(timeout=60)
    # Then it answers again, still sees what waits for a decision, and no longer the discarded
    assert await read_in(kernel, "keep.csv") == "k\n"
    assert await read_in(kernel, "drop.csv") == "<absent>"
    [again] = await change_sets(jp_fetch)
    assert [c["path"] for c in again["changes"]] == ["keep.csv"]


async def test_a_huge_change_set_is_listed_in_part_and_decided_whole(
    sandboxed_kernels, jp_fetch, jp_root_dir
):
    # Given a sandboxed kernel that created 1,005 files
    kernel = await sandboxed_kernels()
    await kernel.run(
        "import os\nos.makedirs('many')\n"
        "for i in range(1005):\n    open(f'many/{i:04}.txt', 'w').write(str(i))"
    )
    # When the person lists the change sets
    [listed] = await change_sets(jp_fetch)
    # Then 1,000 files are listed, the rest counted, and the counts cover them all
    assert len(listed["changes"]) == 1000
    assert listed["changes_left_out"] == 5
    assert listed["counts"] == {"created": 1005}
    # When the person asks for the files after the first 1,000
    status, _, page = await call(
        jp_fetch,
        APPROVALS_API,
        "changes",
        kernel.id,
        "files",
        params={"fingerprint": listed["fingerprint"], "offset": "1000"},
    )
    # Then the other 5 are listed, in order, and none is left out
    assert status == 200, page
    assert [c["path"] for c in page["changes"]] == [f"many/{i:04}.txt" for i in range(1000, 1005)]
    assert page["changes_left_out"] == 0
    # And a page of a change set never listed, or a malformed one, is refused
    for params, code in (
        ({"fingerprint": "sha256:" + "0" * 64, "offset": "0"}, "APPROVAL_NOT_ISSUED"),
        ({"fingerprint": listed["fingerprint"], "offset": "-1"}, "APPROVAL_MALFORMED_MESSAGE"),
    ):
        _, _, refused = await call(
            jp_fetch, APPROVALS_API, "changes", kernel.id, "files", params=params
        )
        assert refused["code"] == code, refused
    # And applying the change set applies every file of it
    await asyncio.sleep(1.1)
    status, _, answer = await decide(
        jp_fetch, kernel.id, {"decision": "apply", "fingerprint": listed["fingerprint"]}
    )
    assert (status, len(answer["done"])) == (200, 1005)
    assert len(list((Path(jp_root_dir) / "many").iterdir())) == 1005


async def test_a_csv_too_large_to_load_is_compared_line_by_line_from_the_listed_bytes(
    sandboxed_kernels, jp_fetch, jp_root_dir, monkeypatch
):
    # Given a diff limit of 10 bytes (256 MiB in use), and a kernel that changed one row of a
    # project CSV larger than that
    from jupyter_approvals.server.sandbox import change_sets as module

    monkeypatch.setattr(module, "MAX_HELD_DIFF_BYTES", 10)
    (Path(jp_root_dir) / "sales.csv").write_text("id,total\n1,10\n2,20\n")
    kernel = await sandboxed_kernels()
    await kernel.run("open('sales.csv', 'w').write('id,total\\n1,10\\n2,25\\n')")
    await change_sets(jp_fetch)
    # When the person opens its preview
    status, _, shown = await preview_of(jp_fetch, kernel.id, "sales.csv")
    # Then the changed row is shown with its cell's old and new value
    assert status == 200, shown
    assert shown["summary"].endswith("a large table)")
    assert "20 -> 25" in shown["preview"]
    # When the kernel changes the file again after the listing
    await kernel.run("open('sales.csv', 'w').write('id,total\\n1,10\\n2,99\\n')")
    status, _, refused = await preview_of(jp_fetch, kernel.id, "sales.csv")
    # Then the preview of other bytes than the listed ones is refused
    assert (status, refused["code"]) == (409, "APPROVAL_FINGERPRINT_MISMATCH")


async def test_a_file_too_large_to_diff_is_shown_by_sizes_and_digests_unread(
    sandboxed_kernels, jp_fetch, monkeypatch
):
    # Given a diff limit of 10 bytes (256 MiB in use), and a kernel that wrote 20 bytes
    from jupyter_approvals.server.sandbox import change_sets as module

    monkeypatch.setattr(module, "MAX_HELD_DIFF_BYTES", 10)
    kernel = await sandboxed_kernels()
    await kernel.run("open('big.bin', 'w').write('x' * 20)")
    [listed] = await change_sets(jp_fetch)
    # When the person opens its preview
    status, _, shown = await preview_of(jp_fetch, kernel.id, "big.bin")
    # Then it names its size and the listed digest, and says it was not diffed
    assert status == 200
    assert "Not diffed" in shown["preview"]
    assert listed["changes"][0]["after"]["sha256"] in shown["preview"]
