"""What an ACP tool call will do, read from the tool call itself (core/tool_calls.py)."""

from __future__ import annotations

import pytest

from jupyter_approvals.core import errors
from jupyter_approvals.core.tool_calls import (
    Command,
    FileEdit,
    apply_edits,
    environment,
    option_of_kind,
    plan_of,
    terminal_argv,
)


def call(**fields):
    return {"toolCallId": "t1", "title": "Do it", "kind": "edit", **fields}


def test_a_diff_item_is_the_file_and_its_edit():
    # Given a tool call with one diff item
    plan = plan_of(
        call(content=[{"type": "diff", "path": "/p/a.txt", "oldText": "x", "newText": "y"}])
    )
    # Then its plan is that file and that edit, bound to a client call
    assert (plan.path, plan.edits, plan.command) == ("/p/a.txt", (FileEdit("x", "y"),), None)
    assert plan.bound


@pytest.mark.parametrize(
    ("raw", "path", "edits"),
    [
        ({"file_path": "/p/a", "content": "all"}, "/p/a", (FileEdit(None, "all"),)),
        ({"path": "/p/a", "content": "all"}, "/p/a", (FileEdit(None, "all"),)),
        (
            {"file_path": "/p/a", "old_string": "o", "new_string": "n"},
            "/p/a",
            (FileEdit("o", "n"),),
        ),
    ],
    ids=["write", "write-path", "edit"],
)
def test_a_tools_raw_input_names_the_file_when_no_diff_does(raw, path, edits):
    plan = plan_of(call(rawInput=raw))
    assert (plan.path, plan.edits) == (path, edits)


def test_a_command_is_read_with_its_arguments_folder_and_environment():
    raw = {"command": "ls -la", "args": ["x"], "cwd": "/p", "env": {"B": "2", "A": "1"}}
    plan = plan_of(call(kind="execute", rawInput=raw))
    assert plan.command == Command("ls -la", ("x",), "/p", (("A", "1"), ("B", "2")))
    argv_plan = plan_of(call(kind="execute", rawInput={"command": ["rm", "-r", "d"]}))
    assert argv_plan.command == Command("rm", ("-r", "d"), None, ())


def test_a_tool_call_that_names_no_file_or_command_is_the_agents_own_action():
    plan = plan_of(call(kind="fetch", title="x" * 500, rawInput={"url": "https://example.org"}))
    assert not plan.bound
    assert len(plan.title) == 200


def test_a_tool_call_that_changes_several_files_is_refused():
    items = [{"type": "diff", "path": p, "newText": "n"} for p in ("/p/a", "/p/b")]
    with pytest.raises(errors.ApprovalUnsupportedArgument):
        plan_of(call(content=items))


@pytest.mark.parametrize(
    "tool_call",
    [
        {"title": "no id"},
        call(content="not a list"),
        call(content=[{"type": "diff", "path": 3, "newText": "n"}]),
        call(content=[{"type": "diff", "path": "/p", "newText": None}]),
        call(rawInput={"command": "ls", "args": "not a list"}),
        call(rawInput={"command": "ls", "cwd": 7}),
        call(rawInput={"command": "ls", "env": [{"name": "A"}]}),
        call(rawInput={"command": "ls", "env": "A=1"}),
    ],
    ids=["id", "content", "path", "new-text", "args", "cwd", "env-value", "env-type"],
)
def test_malformed_tool_calls_are_refused(tool_call):
    with pytest.raises(errors.ApprovalMalformedMessage):
        plan_of(tool_call)


@pytest.mark.parametrize(
    ("current", "edits", "after"),
    [
        (None, [FileEdit(None, "new")], "new"),
        ("old", [FileEdit(None, "new")], "new"),
        ("whole", [FileEdit("whole", "other")], "other"),
        ("a b c", [FileEdit("b", "B")], "a B c"),
        ("a b c", [FileEdit("a", "A"), FileEdit("c", "C")], "A b C"),
    ],
)
def test_edits_give_the_whole_text_that_will_be_written(current, edits, after):
    assert apply_edits(current, edits) == after


@pytest.mark.parametrize(
    ("current", "edits"),
    [
        ("a a", [FileEdit("a", "b")]),
        ("abc", [FileEdit("x", "y")]),
        (None, [FileEdit("x", "y")]),
        ("abc", [FileEdit("", "y")]),
        (None, []),
    ],
    ids=["twice", "absent", "no-file", "empty-old", "nothing"],
)
def test_edits_whose_result_is_not_known_are_refused(current, edits):
    with pytest.raises(errors.ApprovalUnsupportedArgument):
        apply_edits(current, edits)


def test_the_terminals_argv_is_split_as_jupyter_ai_splits_it():
    assert terminal_argv("ls -la 'my dir'", []) == ["ls", "-la", "my dir"]
    assert terminal_argv("ls -la", ["x"]) == ["ls -la", "x"]
    for bad in ("", "'unclosed"):
        with pytest.raises(errors.ApprovalMalformedMessage):
            terminal_argv(bad, [])


def test_environment_and_options():
    assert environment([{"name": "B", "value": "2"}, {"name": "A", "value": "1"}]) == (
        ("A", "1"),
        ("B", "2"),
    )
    assert environment(None) == ()
    options = [
        {"optionId": "r", "kind": "reject_once"},
        {"optionId": "a", "kind": "allow_always"},
    ]
    assert option_of_kind(options, ["allow_once", "allow_always"]) == "a"
    assert option_of_kind(options, ["allow_once"]) is None
