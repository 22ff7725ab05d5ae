"""Run example notebooks top to bottom and store their outputs, answering cards as tagged.

    python tests/notebooks/refresh_outputs.py notebooks/files.ipynb [...]

nbval compares a notebook's stored outputs with a fresh run, so the stored outputs must come
from a run in which the ``reviewer:approve`` / ``reviewer:reject`` cells were answered, exactly
as ``tests/notebooks/nbval_reviewer.py`` answers them under nbval. Widget state is not stored.

A card's outputs are rewritten by the kernel when its request ends (``update_display_data``),
also when a decision arrives outside any cell's run (the reviewer's own message), which the
notebook client does not follow; the reviewer's connection sees them all, and they are applied
to the stored outputs. Stored outputs name no machine paths: the checkout is written ``...``,
the home directory ``~`` and a journal's file name ``<project>.jsonl``.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

from jupyter_approvals.testing import KernelFrontend, connect

WIDGET = "application/vnd.jupyter.widget-view+json"
CHECKOUT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(CHECKOUT))  # run as a script: the checkout's packages come first

from tests.notebooks.reviewer import answer_last_card, review_decision  # noqa: E402


def keep_display_updates(reviewer: KernelFrontend) -> list[dict[str, Any]]:
    """Record every ``update_display_data`` the reviewer's connection reads from now on."""
    updates: list[dict[str, Any]] = []
    absorb = reviewer._absorb

    def keep(msg: dict[str, Any]) -> None:
        if msg["msg_type"] == "update_display_data":
            updates.append(msg["content"])
        absorb(msg)

    reviewer._absorb = keep
    return updates


def outputs(notebook: Any) -> Iterator[Any]:
    for cell in notebook.cells:
        yield from cell.get("outputs", [])


def apply_display_updates(notebook: Any, updates: list[dict[str, Any]]) -> None:
    """Rewrite the outputs each update names: a card by its widget model, a pointer to a card
    (plain text) by the request it names."""
    for update in updates:
        display_id = update.get("transient", {}).get("display_id", "")
        data = update["data"]
        request_id = display_id.rsplit("-", 1)[-1]
        for output in outputs(notebook):
            shown = output.get("data", {})
            if WIDGET in data:
                same = shown.get(WIDGET, {}).get("model_id") == data[WIDGET]["model_id"]
            else:
                text = shown.get("text/plain", "")
                same = display_id.startswith("jupyter-approvals-pointer-") and (
                    WIDGET not in shown and f"(request {request_id})" in text
                )
            if same:
                output["data"] = data


def without_machine_paths(text: str) -> str:
    """``text`` with the checkout (and the folder of the virtualenv running this, the same one
    when it is the checkout's ``.venv``) written ``...`` and the home directory ``~``."""
    for folder in {str(CHECKOUT), str(Path(sys.prefix).parent)}:
        if folder != "/":
            text = text.replace(folder + "/", ".../")
    # A journal's name is a hash of this checkout's folder: someone else's would mislead.
    text = re.sub(r"decisions/[0-9a-f]{16}\.jsonl", "decisions/<project>.jsonl", text)
    home = str(Path.home())
    return text.replace(home + "/", "~/") if home != "/" else text


def strip_machine_paths(notebook: Any) -> None:
    for output in outputs(notebook):
        if "text" in output:
            output["text"] = without_machine_paths(output["text"])
        for mime, value in output.get("data", {}).items():
            if mime.startswith("text/") and isinstance(value, str):
                output["data"][mime] = without_machine_paths(value)
            elif mime.endswith("+json"):
                # The approval JSON beside a card and its stopped call names paths too.
                output["data"][mime] = json.loads(without_machine_paths(json.dumps(value)))


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
    recorded: list[list[dict[str, Any]]] = []

    def started(**_: Any) -> None:
        reviewer = connect(client.km.connection_file)
        reviewers.append(reviewer)
        recorded.append(keep_display_updates(reviewer))

    def executed(cell: Any, **_: Any) -> None:
        decision = review_decision(cell)
        if decision is not None:
            answer_last_card(reviewers[0], decision)
        reviewers[0].pump()  # keep up with what the kernel publishes

    client.on_notebook_start = started
    client.on_cell_executed = executed
    try:
        client.execute()
    finally:
        for reviewer in reviewers:
            reviewer.client.stop_channels()
    for seen in recorded:
        apply_display_updates(notebook, seen)
    strip_machine_paths(notebook)
    notebook.metadata.pop("widgets", None)
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)
    nbformat.write(notebook, path)


if __name__ == "__main__":
    for name in sys.argv[1:]:
        refresh(Path(name))
        print(f"refreshed {name}")
