"""What a Jupyter AI tool call will change, as a person judges it, computed by the server.

:mod:`jupyter_approvals.core.tool_calls` reads the plan of a tool call; this module turns it
into the :class:`~..gate.held_files.HeldWrite` a person approves, with the engines of the
other held requests: for a file, the diff of the file as it is on disk now against the whole
text the agent would write (its edits applied here); for a command, the argv Jupyter AI's
terminal will run, where and with which environment. A client call of the agent
(``fs/write_text_file``, ``terminal/create``) computes the same :class:`HeldWrite` from its own
arguments: it runs only when that equals an approved one (same fingerprint, once).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ...core import errors
from ...core.fingerprint import fingerprint
from ...core.tool_calls import ToolCallPlan, apply_edits, terminal_argv
from ...previews.command import shell_preview, shell_summary
from ...previews.render_text import preview_of
from ...previews.structured import StructuredPreview
from ..gate.held_files import HeldWrite, held_file_write
from ..gate.routes import secret_path_reason

#: The action of a command a Jupyter AI terminal runs (the same as ``run_command``'s).
COMMAND_ACTION = "shell.run"
#: The action of a tool call whose effect the agent carries out itself.
AGENT_TOOL_ACTION = "agent.tool"
#: The largest file whose text a tool call's edits are applied to (what a diff is shown of).
MAX_EDITED_BYTES = 8 << 20

_UNBOUND_NOTE = (
    "This tool call names no file that Jupyter AI writes and no command its terminal runs: "
    "approving it lets the agent go on with it on its own. jupyter-approvals cannot see or "
    "check what the agent then does itself."
)


@dataclasses.dataclass(frozen=True)
class Where:
    """Where a tool call's paths are read: the server root, the session's working folder
    (relative paths and commands without a folder), and what agents may never touch."""

    root: Path
    session_cwd: str
    secret_dirs: Iterable[Path]


def api_path_of(path: str, where: Where) -> str:
    """The contents-API path of an agent's file ``path`` (absolute, or relative to the
    session's folder). Raises APPROVAL_AGENT_FORBIDDEN outside the server root and for hidden
    places and Jupyter's own files, as for an agent's token."""
    joined = os.path.normpath(os.path.join(where.session_cwd, path))
    root = os.path.normpath(os.fspath(where.root))
    if joined != root and not joined.startswith(root + os.sep):
        raise errors.ApprovalAgentForbidden(
            f"{path} is outside the Jupyter server's root; agents work inside it only.",
            path=path,
        )
    api_path = os.path.relpath(joined, root).replace(os.sep, "/")
    why = secret_path_reason(api_path, where.root, where.secret_dirs)
    if why is not None:
        raise errors.ApprovalAgentForbidden(
            f"Agents may not touch {path}: {why}.", path=path, why=why
        )
    return api_path


def _current_text(target: Path) -> str | None:
    if not target.is_file():
        return None
    if target.stat().st_size > MAX_EDITED_BYTES:
        raise errors.ApprovalTooLarge(
            f"{target.name} is larger than {MAX_EDITED_BYTES >> 20} MB; an agent's edit of it "
            "cannot be shown to a person. Nothing was written.",
        )
    try:
        return target.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise errors.ApprovalUnsupportedArgument(
            f"{target.name} is not UTF-8 text; an agent's text edit of it cannot be shown. "
            "Nothing was written.",
        ) from None


def held_file(api_path: str, text: str, where: Where, agent: str, session_id: str) -> HeldWrite:
    """Writing ``text`` at ``api_path`` for ``agent``: the diff against the file on disk now,
    fingerprinted over the path, the content and the file's current state.

    The slot is the file in this session, so that a write of other content after an approval
    meets it as APPROVAL_FINGERPRINT_MISMATCH (and spends it)."""
    held = held_file_write(api_path, text.encode("utf-8"), where.root, agent)
    slot = fingerprint({"op": "acp.write", "agent": agent, "session": session_id, "path": api_path})
    return dataclasses.replace(held, slot=slot)


def held_command(
    command: str,
    args: tuple[str, ...] | list[str],
    cwd: str | None,
    env: tuple[tuple[str, str], ...],
    where: Where,
    agent: str,
    session_id: str,
) -> HeldWrite:
    """Running ``command`` in a Jupyter AI terminal for ``agent``: the argv it runs, the folder
    (the session's when none is named) and the variables it sets."""
    argv = terminal_argv(command, list(args))
    folder = os.path.normpath(os.path.join(where.session_cwd, cwd or "."))
    changed = dict(env)
    program = shutil.which(argv[0]) or argv[0]
    preview = shell_preview(
        command=argv,
        cwd=folder,
        env=changed,
        shell=False,
        timeout=None,
        input=None,
        executable=program,
        named=[],
        environment_size=len({**os.environ, **changed}),
    )
    subject = {"op": "acp.terminal", "argv": argv, "cwd": folder, "env": sorted(env)}
    digest = fingerprint({"action": COMMAND_ACTION, "agent": agent, "request": subject})
    slot = fingerprint({"op": "acp.terminal", "agent": agent, "session": session_id})
    summary = shell_summary(argv, folder, shell=False)
    return HeldWrite(COMMAND_ACTION, summary, preview.text, digest, slot, preview.structured)


def held_agent_tool(plan: ToolCallPlan, tool_call: Mapping[str, Any], agent: str) -> HeldWrite:
    """A tool call the agent carries out itself: what it says, shown as its own words."""
    structured = StructuredPreview()
    structured.facts(
        [
            ("the agent's title", plan.title or "(none)"),
            ("kind", plan.kind),
            ("tool call", plan.tool_call_id),
        ]
    )
    raw = tool_call.get("rawInput")
    if raw is not None:
        structured.code(
            json.dumps(raw, indent=2, sort_keys=True, default=str), "json", title="input"
        )
    structured.note(_UNBOUND_NOTE)
    shown = preview_of(structured)
    request = {"op": "acp.tool", "tool_call": dict(tool_call)}
    digest = fingerprint(
        {
            "action": AGENT_TOOL_ACTION,
            "agent": agent,
            "request": json.loads(json.dumps(request, default=str)),
        }
    )
    summary = f"Let the agent go on with: {plan.title or plan.kind}"
    return HeldWrite(AGENT_TOOL_ACTION, summary, shown.text, digest, digest, shown.structured)


def held_plan(
    plan: ToolCallPlan, tool_call: Mapping[str, Any], where: Where, agent: str, session_id: str
) -> HeldWrite:
    """The held request of a tool call's permission: its file, its command, or the action
    the agent carries out itself."""
    if plan.path is not None:
        api_path = api_path_of(plan.path, where)
        current = _current_text(where.root.joinpath(*api_path.split("/")))
        return held_file(api_path, apply_edits(current, plan.edits), where, agent, session_id)
    if plan.command is not None:
        command = plan.command
        return held_command(
            command.command, command.args, command.cwd, command.env, where, agent, session_id
        )
    return held_agent_tool(plan, tool_call, agent)
