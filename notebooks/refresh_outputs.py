"""Run example notebooks top to bottom and store their outputs, answering cards as tagged.

    python notebooks/refresh_outputs.py notebooks/files.ipynb [...]

nbval compares a notebook's stored outputs with a fresh run, so the stored outputs must come
from a run in which the ``reviewer:approve`` / ``reviewer:reject`` cells were answered, exactly
as ``notebooks/conftest.py`` answers them under nbval. Widget state is not stored.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient
from reviewer import answer_last_card, review_decision

from jupyter_approvals.testing import KernelFrontend, connect


def refresh(path: Path) -> None:
    """Execute ``path`` in its own directory with the scripted reviewer; write outputs back."""
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=300,
        allow_errors=True,
        record_timing=False,  # timings would change every stored notebook on every refresh
        resources={"metadata": {"path": str(path.parent)}},
    )
    reviewers: list[KernelFrontend] = []

    def started(**_: Any) -> None:
        reviewers.append(connect(client.km.connection_file))

    def executed(cell: Any, **_: Any) -> None:
        decision = review_decision(cell)
        if decision is not None:
            answer_last_card(reviewers[0], decision)

    client.on_notebook_start = started
    client.on_cell_executed = executed
    try:
        client.execute()
    finally:
        for reviewer in reviewers:
            reviewer.client.stop_channels()
    notebook.metadata.pop("widgets", None)
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)
    nbformat.write(notebook, path)


if __name__ == "__main__":
    for name in sys.argv[1:]:
        refresh(Path(name))
        print(f"refreshed {name}")
