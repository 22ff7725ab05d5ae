"""What an ACP agent's tool call will do, read from the tool call itself (docs/protocol.md 8).

An agent of the Agent Client Protocol asks its client for permission with a tool call: a title
and kind in its own words, and, depending on the agent, the change it will make (``content``
items of type ``diff``: a path with the old and new text) or the input of its tool
(``rawInput``: ``{"file_path", "content"}``, ``{"file_path", "old_string", "new_string"}``,
``{"command", "args", "cwd", "env"}``). This module turns that into a :class:`ToolCallPlan`:
at most one file and its edits, or one command, or neither (an action the agent carries out
itself, which no client call of it will show). The agent's title is never what a person
approves: the plan is.

Pure: the caller reads the file on disk and applies the edits with :func:`apply_edits`, and
computes where a terminal runs with :func:`terminal_argv`.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from . import errors

#: Permission option kinds of ACP, and which of them say yes.
ALLOW_ONCE: Final = "allow_once"
ALLOW_ALWAYS: Final = "allow_always"
REJECT_ONCE: Final = "reject_once"
REJECT_ALWAYS: Final = "reject_always"
ALLOWING: Final = frozenset({ALLOW_ONCE, ALLOW_ALWAYS})

#: The longest title kept from a tool call (it is the agent's words, shown as such).
MAX_TITLE_CHARS: Final = 200


@dataclass(frozen=True)
class FileEdit:
    """One replacement in a file: ``old_text`` (None: the whole file, or a new file) becomes
    ``new_text``."""

    old_text: str | None
    new_text: str


@dataclass(frozen=True)
class Command:
    """A command as the agent declared it: the line or program, its arguments, where, and the
    environment variables it sets."""

    command: str
    args: tuple[str, ...]
    cwd: str | None
    env: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class ToolCallPlan:
    """What one tool call will do, as far as a client call can carry it out."""

    tool_call_id: str
    title: str
    kind: str
    #: The absolute path of the file it writes (None: it writes no file through the client).
    path: str | None
    edits: tuple[FileEdit, ...]
    command: Command | None

    @property
    def bound(self) -> bool:
        """Whether approving it binds a client call (a write or a terminal)."""
        return self.path is not None or self.command is not None


def _text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise errors.ApprovalMalformedMessage(f"The tool call's {what} must be text.")
    return value


def _diff_items(content: object) -> list[Mapping[str, Any]]:
    if content is None:
        return []
    if not isinstance(content, list):
        raise errors.ApprovalMalformedMessage("The tool call's content must be a list.")
    return [item for item in content if isinstance(item, Mapping) and item.get("type") == "diff"]


def _file_from_diffs(items: list[Mapping[str, Any]]) -> tuple[str | None, tuple[FileEdit, ...]]:
    paths = {_text(item.get("path"), "diff path") for item in items}
    if len(paths) > 1:
        raise errors.ApprovalUnsupportedArgument(
            f"This tool call changes {len(paths)} files at once; a permission covers one file "
            "here. Nothing was written: ask for each file in its own tool call.",
            paths=sorted(paths)[:20],
        )
    edits = tuple(
        FileEdit(
            None if item.get("oldText") is None else _text(item.get("oldText"), "oldText"),
            _text(item.get("newText"), "newText"),
        )
        for item in items
    )
    return (paths.pop() if paths else None), edits


def _file_from_raw_input(raw: Mapping[str, Any]) -> tuple[str | None, tuple[FileEdit, ...]]:
    path = raw.get("file_path", raw.get("path"))
    if not isinstance(path, str):
        return None, ()
    if isinstance(raw.get("content"), str):
        return path, (FileEdit(None, raw["content"]),)
    if isinstance(raw.get("old_string"), str) and isinstance(raw.get("new_string"), str):
        return path, (FileEdit(raw["old_string"], raw["new_string"]),)
    return None, ()


def _command_from_raw_input(raw: Mapping[str, Any]) -> Command | None:
    command = raw.get("command")
    if isinstance(command, list) and command and all(isinstance(c, str) for c in command):
        head, *rest = command
        args: list[str] = list(rest)
    elif isinstance(command, str) and command.strip():
        head, args = command, []
    else:
        return None
    extra = raw.get("args")
    if extra is not None:
        if not isinstance(extra, list) or not all(isinstance(a, str) for a in extra):
            raise errors.ApprovalMalformedMessage("The tool call's args must be a list of text.")
        args.extend(extra)
    cwd = raw.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise errors.ApprovalMalformedMessage("The tool call's cwd must be text.")
    return Command(head, tuple(args), cwd, environment(raw.get("env")))


def environment(env: object) -> tuple[tuple[str, str], ...]:
    """The variables of an ACP ``env`` (``[{"name", "value"}]``, or a mapping), sorted."""
    if env is None:
        return ()
    if isinstance(env, Mapping):
        pairs = list(env.items())
    elif isinstance(env, list):
        pairs = [
            (item.get("name"), item.get("value")) if isinstance(item, Mapping) else (None, None)
            for item in env
        ]
    else:
        raise errors.ApprovalMalformedMessage("The environment must be a list of variables.")
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in pairs):
        raise errors.ApprovalMalformedMessage("Each environment variable needs a name and a value.")
    return tuple(sorted((str(k), str(v)) for k, v in pairs))


def plan_of(tool_call: Mapping[str, Any]) -> ToolCallPlan:
    """The plan of an ACP tool call in its wire form (camelCase keys).

    Raises APPROVAL_MALFORMED_MESSAGE for a tool call without an id or with fields of the
    wrong type, APPROVAL_UNSUPPORTED_ARGUMENT for one that changes several files.
    """
    tool_call_id = _text(tool_call.get("toolCallId"), "toolCallId")
    title = tool_call.get("title")
    kind = tool_call.get("kind")
    path, edits = _file_from_diffs(_diff_items(tool_call.get("content")))
    raw = tool_call.get("rawInput")
    command = None
    if isinstance(raw, Mapping):
        if path is None:
            path, edits = _file_from_raw_input(raw)
        if path is None:
            command = _command_from_raw_input(raw)
    return ToolCallPlan(
        tool_call_id=tool_call_id,
        title=(title if isinstance(title, str) else "")[:MAX_TITLE_CHARS],
        kind=kind if isinstance(kind, str) else "other",
        path=path,
        edits=edits,
        command=command,
    )


def apply_edits(current: str | None, edits: Sequence[FileEdit]) -> str:
    """The file's text after ``edits``, from its ``current`` text (None: no such file).

    An edit whose old text is None, or equal to the whole file, replaces the whole file; any
    other must occur exactly once in the text so far. Raises APPROVAL_UNSUPPORTED_ARGUMENT
    otherwise: what the agent would write cannot be known, so nothing may be approved.
    """
    text = current
    for edit in edits:
        if edit.old_text is None or edit.old_text == text:
            text = edit.new_text
            continue
        if text is None:
            raise errors.ApprovalUnsupportedArgument(
                "The tool call edits text in a file that does not exist.",
            )
        found = text.count(edit.old_text) if edit.old_text else 0
        if found != 1:
            raise errors.ApprovalUnsupportedArgument(
                f"The tool call replaces text that occurs {found} times in the file, so what "
                "it would write is not known. Nothing was written.",
                occurrences=found,
            )
        text = text.replace(edit.old_text, edit.new_text, 1)
    if text is None:
        raise errors.ApprovalUnsupportedArgument("The tool call writes no text.")
    return text


def terminal_argv(command: str, args: Sequence[str]) -> list[str]:
    """The argv a Jupyter AI terminal runs for (``command``, ``args``): the command and its
    arguments, or, without arguments, the command line split as a shell splits words.

    Raises APPROVAL_MALFORMED_MESSAGE for an empty or unsplittable command.
    """
    if args:
        return [command, *args]
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise errors.ApprovalMalformedMessage(f"The command cannot be split: {exc}.") from None
    if not argv:
        raise errors.ApprovalMalformedMessage("The command is empty.")
    return argv


def option_of_kind(options: Sequence[Mapping[str, Any]], kinds: Sequence[str]) -> str | None:
    """The id of the first offered option of the first of ``kinds`` offered, if any."""
    for kind in kinds:
        for option in options:
            if option.get("kind") == kind and isinstance(option.get("optionId"), str):
                return str(option["optionId"])
    return None
