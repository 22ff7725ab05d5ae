"""Where a card is, as a person sees it: the cell by its number, one live card per request,
and an ended request's text in the past tense.

Each test drives a real ipykernel from outside, as JupyterLab does (cells with cell ids, the
card's own button messages), and reads what a notebook would store: the outputs and the
``update_display_data`` messages that rewrite them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_approvals.core.protocol import CARD_MIMETYPE, PENDING_MIMETYPE
from jupyter_approvals.kernel.magics import home_relative
from jupyter_approvals.testing import Execution, KernelFrontend
from tests.conftest import journal_lines
from tests.kernel.helpers import (
    SETUP,
    approve_as_person,
    display_updates,
    pending_call,
    record_iopub,
    run,
    wait_for_state,
)

pytestmark = pytest.mark.kernel

WIDGET = "application/vnd.jupyter.widget-view+json"
CALL = "save('hello', 'out.txt')"
SHOWN_ON = r"shown on \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC"


@pytest.fixture
def notebook_fe(project: Path, kernel_env: dict[str, str]) -> Iterator[KernelFrontend]:
    """A kernel started for the notebook sales/clean.ipynb of the project, as JupyterLab
    starts one, driven by a client that says its user is 'ana'."""
    (project / "sales").mkdir()
    env = {**kernel_env, "JPY_SESSION_NAME": str(project / "sales" / "clean.ipynb")}
    with KernelFrontend.start(cwd=project / "sales", env=env) as fe:
        fe.client.session.username = "ana"
        yield fe


def run_unnumbered(fe: KernelFrontend, code: str, cell_id: str) -> Execution:
    """Run a cell the history does not keep (``store_history`` off): it gets no number."""
    msg = fe.client.session.msg(
        "execute_request",
        {"code": code, "silent": False, "store_history": False, "user_expressions": {}},
        metadata={"cellId": cell_id},
    )
    fe.client.shell_channel.send(msg)
    return fe.collect(msg["header"]["msg_id"])


def card_model(result: Execution) -> str | None:
    """The widget model id of the card a cell's outputs show, if they show one."""
    models = [o["data"][WIDGET]["model_id"] for o in result.outputs if WIDGET in o.get("data", {})]
    assert len(models) <= 1, models
    return models[0] if models else None


def test_the_card_names_the_notebook_the_cell_by_its_number_and_who_ran_it(notebook_fe, state_dir):
    # Given a notebook's kernel whose first cell defined a protected writer
    run(notebook_fe, SETUP)
    # When the second cell (shown as [2] while it runs) calls it
    card = pending_call(notebook_fe, CALL)
    # Then the card names the notebook relative to the project, the cell by that number and
    # the user the client claimed, and no cell id
    assert card.state["origin"] == (
        "requested from notebook sales/clean.ipynb, cell [2], run by ana (name not verified)"
    )
    # And the listing carries the number beside the cell id (the sidebar scrolls by the id)
    [request] = notebook_fe.list_pending()["requests"]
    assert request["execution_count"] == 2
    assert request["cell_id"]
    # And so does the journal line
    [requested] = [line for line in journal_lines(state_dir) if line["event"] == "requested"]
    assert requested["execution_count"] == 2


def test_a_run_without_a_number_is_a_new_cell(notebook_fe):
    # Given a notebook's kernel with a protected writer
    run(notebook_fe, SETUP)
    # When a run the history does not keep (no number shown) calls it
    result = run_unnumbered(notebook_fe, CALL, cell_id="c-unnumbered")
    # Then the card says it came from a new cell
    assert result.ename == "ApprovalPending", result.evalue
    card = notebook_fe.cards()[-1]
    assert card.state["origin"] == (
        "requested from notebook sales/clean.ipynb, a new cell, run by ana (name not verified)"
    )
    [request] = notebook_fe.list_pending()["requests"]
    assert request["execution_count"] is None


def test_a_repeated_call_points_to_the_live_card(frontend):
    # Given a card shown by the call in cell [2]
    run(frontend, SETUP)
    first = run(frontend, CALL)
    model = card_model(first)
    assert model is not None
    # When another cell makes the same call (the same pending request)
    second = run(frontend, CALL)
    # Then that cell shows no second card but a short text saying where the card is
    assert second.ename == "ApprovalPending", second.evalue
    assert card_model(second) is None
    request_id = frontend.cards()[-1].state["request_id"]
    assert second.data() == [
        f"Already asked in the card of cell [2] (request {request_id}), waiting for a "
        "decision: approve or reject it there or in the Approvals sidebar."
    ]
    # And there is one card for the request
    assert [card.model_id for card in frontend.cards()] == [model]


def test_a_cell_that_runs_again_shows_the_card_again(frontend):
    # Given a card shown by the call in a cell
    frontend.client.session.username = "ana"
    run(frontend, SETUP)
    model = card_model(frontend.execute(CALL, cell_id="cell-a"))
    # When that very cell runs again (its old output is cleared by the frontend)
    again = frontend.execute(CALL, cell_id="cell-a")
    # Then its new output shows the same card, now naming the cell's new number
    assert card_model(again) == model
    assert (
        frontend.card(model).state["origin"]
        == "requested from cell [3], run by ana (name not verified)"
    )
    # When the cell is edited into other code and run, and another cell makes the call
    frontend.execute("x = 1", cell_id="cell-a")
    elsewhere = frontend.execute(CALL, cell_id="cell-b")
    # Then the card is shown there: nowhere else shows it any more
    assert card_model(elsewhere) == model
    assert len(frontend.cards()) == 1


def test_the_card_text_is_dated_and_reads_as_past_once_rejected(frontend):
    # Given a card and a pointer to it from a second call
    seen = record_iopub(frontend)
    run(frontend, SETUP)
    first = run(frontend, CALL)
    [card_output] = [o for o in first.outputs if WIDGET in o.get("data", {})]
    text = card_output["data"]["text/plain"]
    assert re.search(rf"request [0-9a-f]{{16}}, {SHOWN_ON}, answer by ", text), text
    assert text.startswith("Approval needed: table.write\n")
    run(frontend, CALL)
    card = frontend.cards()[-1]
    request_id = card.state["request_id"]
    # And beside it the request it shows, for a frontend that finds the widget gone later
    record = card_output["data"][CARD_MIMETYPE]
    assert record == {
        "version": 1,
        "request_id": request_id,
        "action": "table.write",
        "summary": card.state["summary"],
        "fingerprint": card.state["fingerprint"],
        "asked_at": record["asked_at"],
        "agent": None,
    }
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", record["asked_at"])
    # When the person rejects it in the card with a reason
    approve_as_person(frontend, card, "reject", reason="not\nnow")
    frontend.pump(0.5)
    # Then the card's output is rewritten to its ended text, still as the same widget
    [ended] = display_updates(seen, f"jupyter-approvals-card-{request_id}")
    assert ended.startswith("Approval request ended: table.write\n"), ended
    assert re.search(
        rf"request {request_id}, {SHOWN_ON}, ended: rejected, reason: not now; run the cell "
        "to ask again\n",
        ended,
    ), ended
    assert "Approve or reject" not in ended
    assert "answer by" not in ended
    # And the quiet line's JSON no longer names a deadline: it says how the request ended
    [stopped] = [
        m["content"]["data"]
        for m in seen
        if m["msg_type"] == "update_display_data"
        and m["content"]["transient"]["display_id"] == f"jupyter-approvals-stopped-{request_id}"
    ]
    assert stopped["text/plain"] == first.outputs[-1]["data"]["text/plain"]
    detail = stopped[PENDING_MIMETYPE]["details"]
    assert (detail["status"], detail["ended"]) == ("rejected", "rejected, reason: not now")
    assert "expires_at" not in detail
    assert "until" not in stopped[PENDING_MIMETYPE]["message"]
    update = next(m for m in seen if m["msg_type"] == "update_display_data")
    assert update["content"]["data"][WIDGET]["model_id"] == card.model_id
    # And so is the pointer
    assert display_updates(seen, f"jupyter-approvals-pointer-{request_id}") == [
        f"Already asked in the card of cell [2] (request {request_id}), ended: rejected, "
        "reason: not now; run the cell to ask again."
    ]


def test_an_executed_request_reads_as_approved_and_executed(frontend):
    # Given a card the person approved
    seen = record_iopub(frontend)
    run(frontend, SETUP)
    card = pending_call(frontend, CALL)
    assert approve_as_person(frontend, card).state["state"] == "approved"
    request_id = card.state["request_id"]
    # When the call runs again and runs once
    assert run(frontend, CALL).status == "ok"
    wait_for_state(frontend, card, lambda s: s["state"] == "executed")
    # Then the card's output reads as past: approved and executed
    [ended] = display_updates(seen, f"jupyter-approvals-card-{request_id}")
    assert "ended: approved and executed; run the cell to ask again\n" in ended, ended


def test_the_report_writes_the_home_directory_as_tilde(monkeypatch, tmp_path):
    # Given a home directory
    monkeypatch.setenv("HOME", str(tmp_path))
    # When a journal path inside it, and one outside it, are written for a person
    inside = home_relative(tmp_path / ".local" / "state" / "j.jsonl")
    outside = home_relative(Path("/srv/state/j.jsonl"))
    # Then the home directory is ~ and other paths stay as they are
    assert inside == str(Path("~/.local/state/j.jsonl"))
    assert outside == "/srv/state/j.jsonl"
