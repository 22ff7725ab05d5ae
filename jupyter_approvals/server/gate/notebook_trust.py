"""Notebooks an agent saves through the contents API are never signed and name its cells.

jupyter_server signs a notebook it saves when every code cell is trusted (``metadata.trusted``,
or no output that could run script); JupyterLab then runs the script outputs of a signed
notebook in the person's page, where script can press Approve. So when the contents manager
saves an agent's notebook (:mod:`.contents`), the gate first removes ``trusted`` from
every cell of the model it will write, and the manager does not sign it. Cells whose id the
notebook on disk does not have are marked ``metadata.jupyter_approvals.inserted_by = "agent
NAME"``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jupyter_server.base.call_context import CallContext

from ...core.protocol import CELL_METADATA_KEY
from .notebook_shadow import rich


def _existing_cells(path: Path) -> dict[str, str | None]:
    """Cell id -> who inserted it (None: the person), for the notebook on disk."""
    try:
        with path.open("rb") as handle:
            notebook = json.load(handle)
    except (OSError, ValueError):
        return {}
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    found: dict[str, str | None] = {}
    for cell in cells or []:
        if isinstance(cell, dict) and isinstance(cell.get("id"), str):
            ours = (cell.get("metadata") or {}).get(CELL_METADATA_KEY)
            by = ours.get("inserted_by") if isinstance(ours, dict) else None
            found[cell["id"]] = by if isinstance(by, str) else None
    return found


def untrust_notebook(content: object, agent: str, on_disk: Path) -> None:
    """Untrust every cell of the notebook ``content`` an agent saves, and name its new cells.

    ``content`` is changed in place (it is what the contents manager will write); anything
    that is not a notebook's cell list is left to the manager, which refuses it.
    """
    cells = content.get("cells") if isinstance(content, dict) else None
    if not isinstance(cells, list):
        return
    known = _existing_cells(on_disk)
    for cell in cells:
        if not isinstance(cell, dict):
            continue
        metadata = cell.get("metadata")
        metadata = dict(metadata) if isinstance(metadata, dict) else {}
        metadata.pop("trusted", None)
        cell_id = cell.get("id")
        # A cell new to the notebook is this agent's; one an agent inserted before stays so.
        by = known[cell_id] if isinstance(cell_id, str) and cell_id in known else f"agent {agent}"
        ours: Any = metadata.get(CELL_METADATA_KEY)
        ours = dict(ours) if isinstance(ours, dict) else {}
        ours.pop("inserted_by", None)
        if by is not None:
            ours["inserted_by"] = by
        if ours:
            metadata[CELL_METADATA_KEY] = ours
        else:
            metadata.pop(CELL_METADATA_KEY, None)
        cell["metadata"] = metadata


def signable(nb: Any) -> bool:
    """Whether every code cell with rich output (any output type, anything but plain text and
    images) was trusted by a person (``metadata.trusted`` true).

    nbformat's own check counts only ``execute_result`` and ``display_data`` as unsafe and
    takes a cell without ``trusted`` by its output types, so a cell an agent gave an
    ``update_display_data`` with HTML passes it, and the next ordinary save would sign it.
    """
    cells = nb.get("cells") if isinstance(nb, dict) else None
    for cell in cells if isinstance(cells, list) else []:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        metadata = cell.get("metadata")
        if isinstance(metadata, dict) and metadata.get("trusted") is True:
            continue
        if rich(cell.get("outputs")):
            return False
    return True


def never_sign_for_agents(
    contents_manager: Any, is_agent: Callable[[object], bool], log: Any
) -> None:
    """Make ``contents_manager`` sign a notebook only when a person trusted what it shows.

    Not while an agent's request saves it; and for anyone's save (a room's autosave too) only
    when :func:`signable`: a cell whose rich output no person trusted keeps the notebook
    unsigned, so an agent's output becomes trusted only by the person's explicit trust. The
    request being handled is jupyter_server's per-request context.
    """
    if getattr(contents_manager.check_and_sign, "jupyter_approvals_wrapped", False):
        return
    original = contents_manager.check_and_sign

    def check_and_sign(nb: Any, path: str = "", **kwargs: Any) -> Any:
        handler = CallContext.get(CallContext.JUPYTER_HANDLER)
        if handler is not None and is_agent(getattr(handler, "current_user", None)):
            log.info("jupyter-approvals: not signing %s: an agent saved it", path)
            return None
        if not signable(nb):
            log.info(
                "jupyter-approvals: not signing %s: a cell has rich output no person trusted", path
            )
            return None
        return original(nb, path, **kwargs)

    check_and_sign.jupyter_approvals_wrapped = True  # type: ignore[attr-defined]
    contents_manager.check_and_sign = check_and_sign
