"""Where a request comes from: this kernel, the notebook its session names, the cell running
now and the number the notebook shows next to it (``[5]:``), and who ran it.

The cell, the username and the agent are read from the message being handled
(:func:`.frontend.caller_context`); they are hints for a person, not identity.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..core.model import Origin
from ..core.visible import make_visible
from . import frontend


def kernel_id() -> str | None:
    """This kernel's id, read from its connection file's name; None outside a kernel."""
    try:
        from ipykernel.connect import get_connection_file

        name = Path(get_connection_file()).stem
    except Exception:
        return None
    return name.removeprefix("kernel-") or None


def notebook_path(environ: Mapping[str, str]) -> str | None:
    """The notebook whose session started this kernel, if the environment names one."""
    # jupyter_server starts each session's kernel with the notebook's path in this variable;
    # a session created without a name gets the directory it runs in, ending with a
    # separator. That names no notebook: the kernel's working directory is that directory.
    path = environ.get("JPY_SESSION_NAME") or None
    if path is None or path.endswith(("/", os.sep)) or os.path.isdir(path):
        return None
    return path


def call_origin(shell: Any, kernel: str | None, notebook: str | None) -> Origin:
    """Where a call being made now in ``kernel`` (showing ``notebook``) comes from."""
    context = frontend.caller_context()
    return Origin(
        kernel_id=kernel,
        notebook_path=notebook,
        cell_id=context["cell_id"],
        # JupyterLab 4 sends no username in its headers: then the person the server
        # stamped the message with (docs/protocol.md 7.4). Either is a hint, not identity.
        username=_shown(context["username"] or context["person"]),
        session=_shown(context["session"]),
        agent=context["agent"],
        execution_count=execution_count(shell, context["cell_id"]),
        display_name=_shown(context["person_name"]),
    )


#: Characters of a claimed name kept: it is shown on one line of the card.
NAME_CHARS = 100


def _shown(claimed: str | None) -> str | None:
    """A name a client or a stamp claims, as cards, listings and the journal show it: one line,
    every hiding character marked, at most NAME_CHARS characters."""
    if claimed is None:
        return None
    visible = make_visible(claimed, keep_lines=False)
    return visible if len(visible) <= NAME_CHARS else visible[: NAME_CHARS - 1] + "…"


def execution_count(shell: Any, cell_id: str | None) -> int | None:
    """The number the notebook shows next to the cell running now (``[5]:``), if it has one.

    IPython counts a cell before running it, so ``shell.execution_count`` is already the next
    cell's number while a cell runs; the running cell's own is in the result IPython fills in
    meanwhile. None outside a cell's run (a comm message, a thread after its cell ended, a
    run of another cell), and for runs the history does not keep (silent, or
    ``store_history`` off), which show no number of their own.
    """
    if frontend.current_message_type() != "execute_request":
        return None
    result = getattr(getattr(shell, "displayhook", None), "exec_result", None)
    info = getattr(result, "info", None)
    if info is None or getattr(info, "silent", True) or not getattr(info, "store_history", False):
        return None
    ran = getattr(info, "cell_id", None)
    if ran is not None and ran != cell_id:
        return None  # the result of another run than the message being handled
    count = getattr(result, "execution_count", None)
    return count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else None
