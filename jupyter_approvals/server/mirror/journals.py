"""The journals the server process itself writes to: one per project, as the kernels' are.

The server writes lines about what it holds for agents and about the decisions it refuses
before any kernel sees them. A line goes to the journal of the project of the notebook it is
about (the git top-level of the notebook's folder, else that folder), else of the server root.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...core import errors
from ...core.journal.writer import Journal
from ...core.project import ensure_outside_project, project_root_for


class ServerJournals:
    """Finds a line's project and appends it to that project's journal."""

    def __init__(self, state_dir: Callable[[], Path], server_root: Path) -> None:
        self.state_dir = state_dir
        self._server_root = server_root
        self._journals: dict[Path, Journal] = {}

    def project(self, notebook_path: str | None) -> tuple[Path, errors.ApprovalError | None]:
        """The project of ``notebook_path`` (relative to the server root), and the problem
        that keeps protected operations from using its journal, if any."""
        directory = self._server_root
        if notebook_path:
            candidate = (self._server_root / notebook_path).parent
            if candidate.is_dir():
                directory = candidate
        project = project_root_for(directory)
        try:
            ensure_outside_project(self.state_dir(), project)
        except errors.ApprovalJournalInsideProject as exc:
            return project, exc
        return project, None

    def journal_of(self, project: Path) -> Journal:
        """The journal of ``project`` (one instance per project)."""
        journal = self._journals.get(project)
        if journal is None:
            journal = self._journals[project] = Journal.for_project(project, self.state_dir())
        return journal

    def append(self, event: str, about: str | None, /, **fields: Any) -> None:
        """Append one line to the journal of the project of the notebook ``about`` (None: the
        server root's); None values are left out. Never raises (a failing journal keeps its
        error for display)."""
        project, _ = self.project(about)
        entry = {"project_root": str(project), **fields}
        self.journal_of(project).append(event, **{k: v for k, v in entry.items() if v is not None})
