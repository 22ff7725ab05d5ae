"""What the Python side really builds validates against the schemas of core/schemas/: the
structured preview of every ready operation and of every request the server holds, the
requests as a kernel lists them, the comm messages a kernel sends, and the rows of held code.

(GET pending as a running server answers it is checked in tests/server/test_pending_schema.py.)
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import sqlalchemy
from pycrdt import Doc, Map, Text

import jupyter_approvals as ja
import jupyter_approvals.ops as ops
from jupyter_approvals.core import schemas
from jupyter_approvals.core.policy import MIN_ANSWER_S, Limits, ManualClock
from jupyter_approvals.core.protocol import COMM_PROTOCOL_VERSION, MARKER_COMM_PREFIX
from jupyter_approvals.kernel.session import KernelSession
from jupyter_approvals.server.gate.held_files import held_delete, held_file_write, held_rename
from jupyter_approvals.server.gate.held_room_edits import held_room_edit
from jupyter_approvals.server.gate.hold import AgentHold
from jupyter_approvals.server.mirror.journals import ServerJournals
from jupyter_approvals.server.mirror.listing_shape import well_formed

from ..security.fuzz_support import InProcessKernel


def as_json(value: object) -> Any:
    """``value`` as the JavaScript side receives it: through JSON."""
    return json.loads(json.dumps(value))


def check(name: str, definition: str | None, value: object) -> None:
    errors = [
        f"{'/'.join(map(str, error.absolute_path))}: {error.message}"
        for error in schemas.validator(name, definition).iter_errors(as_json(value))
    ]
    assert errors == [], f"{definition or name}: {errors[:5]}"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def isolated_git(monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither the user's git config nor their identity reaches the test's repositories."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for part in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{part}_NAME", "Ada")
        monkeypatch.setenv(f"GIT_{part}_EMAIL", "ada@example.org")


def _repository(project: Path) -> Path:
    """A work tree with one commit on main, a bare ``origin``, and a file staged."""
    repo, origin = project / "repo", project / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "a.txt").write_text("one\n")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-q", "-m", "first")
    git(repo, "remote", "add", "origin", str(origin))
    (repo / "a.txt").write_text("one\ntwo\n")
    git(repo, "add", "a.txt")
    return repo


def _database(project: Path) -> sqlalchemy.Engine:
    engine = sqlalchemy.create_engine(f"sqlite:///{project / 'sales.db'}")
    with engine.begin() as connection:
        connection.exec_driver_sql("CREATE TABLE t (id INTEGER PRIMARY KEY, units INTEGER)")
        connection.exec_driver_sql("INSERT INTO t VALUES (1, 120), (2, 80)")
    return engine


#: One call per ready operation (the public names of jupyter_approvals.ops), each meeting
#: something to compare with, so its preview has blocks of every kind it makes.
CALLS: dict[str, Callable[[Path, sqlalchemy.Engine], Any]] = {
    "write_file": lambda p, _: ops.write_file(p / "notes.txt", "total = 2\nmore\n"),
    "delete_path": lambda p, _: ops.delete_path(p / "old", recursive=True),
    "move_path": lambda p, _: ops.move_path(p / "notes.txt", p / "kept.txt"),
    "write_table": lambda p, _: ops.write_table(
        pd.DataFrame({"id": [1, 2, 3], "units": [120, 95, 7]}), p / "sales.csv", key="id"
    ),
    "execute_sql": lambda _, db: ops.execute_sql(db, "UPDATE t SET units = 5 WHERE id = 1"),
    "to_sql": lambda _, db: ops.to_sql(
        pd.DataFrame({"id": [3], "units": [1]}), "t", db, if_exists="append"
    ),
    "run_command": lambda p, _: ops.run_command(["echo", "hello", str(p / "notes.txt")]),
    "http_request": lambda _, __: ops.http_request(
        "post", "http://127.0.0.1:9/upload?token=abc", json={"user": "ada"}, timeout=3
    ),
    "git_commit": lambda p, _: ops.git_commit("Add a line", repo=p / "repo"),
    "git_push": lambda p, _: ops.git_push("origin", "main", repo=p / "repo"),
}


def test_the_calls_cover_every_ready_operation():
    assert sorted(CALLS) == sorted(ops._AREA_OF)


def test_every_ready_operations_request_validates_as_a_kernel_lists_it(
    jpa_session: KernelSession, jpa_project: Path, isolated_git: None
):
    # Given a project with something for every operation to compare with
    (jpa_project / "notes.txt").write_text("total = 1\nmore\n")
    (jpa_project / "old").mkdir()
    (jpa_project / "old" / "a.csv").write_text("1\n")
    (jpa_project / "sales.csv").write_text("id,units\n1,120\n2,80\n")
    _repository(jpa_project)
    engine = _database(jpa_project)
    try:
        # When every ready operation is called, and asks
        for call in CALLS.values():
            with pytest.raises(ja.ApprovalPending):
                call(jpa_project, engine)
    finally:
        engine.dispose()
    pending = jpa_session.store.pending()
    # Then each request carries a structured preview of the schema's shape
    assert len(pending) == len(CALLS)
    for info in pending:
        assert info.structured is not None, info.action
        check(schemas.STRUCTURED_PREVIEW, None, info.structured)
        # And is listed in the shape of a listed request
        check(schemas.COMM, "ListedRequest", info.to_wire())
    # And the kernel's listing of them all is a listing message
    listing = {"op": "pending", "protocol": COMM_PROTOCOL_VERSION, **jpa_session._listing()}
    check(schemas.COMM, "ListingMessage", listing)
    # And what the server keeps of that listing is still of the shape
    for request in well_formed(listing)["requests"]:
        check(schemas.COMM, "ListedRequest", request)


def test_what_the_server_holds_validates_as_previews_and_rows(tmp_path: Path):
    # Given the server's hold, and a project with files an agent changes
    root = tmp_path / "project"
    (root / "out").mkdir(parents=True)
    (root / "data.csv").write_text("region,units\nnorth,120\nsouth,80\n")
    (root / "blob.bin").write_bytes(b"\x00" * 10)
    (root / "out" / "a.csv").write_text("1\n")
    hold = AgentHold(Limits(), ServerJournals(lambda: tmp_path / "state", root), ManualClock())
    room = Doc()
    room["source"] = Text("def total(rows):\n    return sum(rows)\n")
    room["state"] = Map({"dirty": False, "path": "notes.py"})
    client = Doc()
    client.apply_update(room.get_update())
    before = client.get_state()
    source = client.get("source", type=Text)
    source += "print(total([1]))\n"
    edit = held_room_edit(room, client.get_update(before), "notes.py", "bot")
    assert edit is not None
    # When an agent's code and every kind of file change are held
    hold.screen({"code": "print(40 + 2)", "user_expressions": {"n": "1"}}, "k-1", "bot", "a.ipynb")
    for change in (
        held_file_write("data.csv", b"region,units\nnorth,120\nsouth,95\n", root, "bot"),
        held_file_write("blob.bin", b"\x00\x01", root, "bot"),
        held_delete("out", root, "bot"),
        held_rename("data.csv", "sales.csv", root, "bot"),
        edit,
    ):
        hold.screen_write(change, "bot")
    rows = hold.listing(shown=False)
    # Then every held request is a row of GET pending, its structured preview of the shape
    assert len(rows) == 6
    for row in rows:
        assert row["structured"] is not None
        check(schemas.PENDING, "PendingRow", row)


def test_the_comm_messages_a_kernel_sends_validate(tmp_path: Path):
    with InProcessKernel(tmp_path / "project", tmp_path / "state") as kernel:
        # Given a kernel with a pending request, and a frontend's comm
        target = kernel.ask()
        endpoint = kernel.open_endpoint()
        # When the frontend lists, decides wrongly, sends nonsense, then decides
        sent = [
            {"op": "list", "notebook_path": "sales/clean.ipynb"},
            {"op": "decide", "id": target.request_id, "decision": "approve",
             "fingerprint": "sha256:" + "0" * 64, "reason": "", "channel": "sidebar"},
            {"op": "bogus"},
            {"op": "decide", "id": target.request_id, "decision": "approve",
             "fingerprint": target.fingerprint, "reason": "looks right", "channel": "sidebar",
             "decided_by": "ana", "not_after": "2999-01-01T00:00:00Z"},
        ]  # fmt: skip
        kernel.clock.advance(MIN_ANSWER_S + 1)
        for message in sent:
            kernel.deliver(endpoint, message)
        # (what was sent is of the contract, but for the nonsense)
        for message in sent:
            valid = schemas.validator(schemas.COMM).is_valid(message)
            assert valid == (message["op"] != "bogus"), message
        replies = kernel.replies(endpoint)
        changes = [
            data
            for comm_id, kind, data in kernel.sent
            if comm_id.startswith(MARKER_COMM_PREFIX) and kind == "comm_msg"
        ]
        # Then every answer is a message of the contract, of the kind it says
        kinds = {
            "pending": "ListingMessage",
            "changed": "ListingMessage",
            "decided": "DecidedMessage",
            "error": "ErrorMessage",
        }
        assert [reply["op"] for reply in replies] == ["pending", "decided", "error", "decided"]
        assert [reply.get("ok") for reply in replies[1:]] == [False, False, True]
        assert changes, "no change was announced"
        for message in replies + changes:
            check(schemas.COMM, kinds[message["op"]], message)
            check(schemas.COMM, None, message)


def test_the_message_a_card_sends_validates(tmp_path: Path):
    with InProcessKernel(tmp_path / "project", tmp_path / "state") as kernel:
        # Given a card's request, and what its view displays
        target = kernel.ask()
        # When the view decides (the message card.js sends, as jupyter_approvals.testing
        # clicks it) or is closed
        decide = {
            "op": "decide",
            "id": target.request_id,
            "decision": "reject",
            "fingerprint": target.fingerprint,
            "reason": "",
            "shown": kernel.shown(target.request_id),
        }
        # Then both are card messages of the contract
        check(schemas.COMM, "CardDecideMessage", decide)
        check(schemas.COMM, "CardDismissMessage", {"op": "dismiss"})
