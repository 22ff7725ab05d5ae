"""A notebook an agent saves through the contents API is never trusted, and names its cells."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from traitlets.config import Config

from .agent_client import add_agent, call

#: An output that would run script in the person's page, POSTing a decision.
SCRIPT = "<script>fetch('/jupyter-approvals/api/held/0123456789abcdef', {method: 'POST'})</script>"


@pytest.fixture
def jp_server_config(tmp_path):
    # Signatures in a file, as a person's server keeps them (the test default is in memory).
    return Config(
        {
            "ServerApp": {"jpserver_extensions": {"jupyter_approvals": True}},
            "NotebookNotary": {"db_file": str(tmp_path / "nbsignatures.db")},
        }
    )


@pytest.fixture
def agent_token(state_dir) -> str:
    return add_agent(state_dir, "bot")


def notebook_with_script(trusted: bool) -> dict:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x = 1")
    cell.outputs = [nbformat.v4.new_output("display_data", data={"text/html": SCRIPT})]
    cell.metadata["trusted"] = trusted
    nb.cells = [cell]
    return json.loads(json.dumps(nb))  # nbformat.writes would drop the transient "trusted"


async def test_an_agents_notebook_with_a_trusted_script_output_is_never_trusted(
    jp_fetch, jp_serverapp, jp_root_dir, agent_token
):
    # When an agent saves a notebook whose script output claims to be trusted
    body = {"type": "notebook", "format": "json", "content": notebook_with_script(True)}
    status, _, _ = await call(
        jp_fetch,
        "api",
        "contents",
        "report.ipynb",
        token=agent_token,
        method="PUT",
        body=json.dumps(body),
    )
    assert status == 201
    # Then the server did not sign it: opened by the person, its output is untrusted
    on_disk = nbformat.read(Path(jp_root_dir) / "report.ipynb", as_version=4)
    assert not jp_serverapp.contents_manager.notary.check_signature(on_disk)
    _, _, model = await call(jp_fetch, "api", "contents", "report.ipynb")
    [cell] = model["content"]["cells"]
    assert cell["metadata"].get("trusted") is not True
    # And the cell says who inserted it
    assert cell["metadata"]["jupyter_approvals"]["inserted_by"] == "agent bot"


async def test_the_persons_own_save_still_signs_and_an_agent_cannot_unmark_its_cells(
    jp_fetch, jp_serverapp, jp_root_dir, agent_token
):
    # Given the person saves the same notebook, trusting its output
    body = {"type": "notebook", "format": "json", "content": notebook_with_script(True)}
    await call(jp_fetch, "api", "contents", "mine.ipynb", method="PUT", body=json.dumps(body))
    on_disk = nbformat.read(Path(jp_root_dir) / "mine.ipynb", as_version=4)
    # Then it is signed as before the gate
    assert jp_serverapp.contents_manager.notary.check_signature(on_disk)
    # When an agent adds a cell, then saves again with its marker removed
    _, _, model = await call(jp_fetch, "api", "contents", "mine.ipynb")
    content = model["content"]
    assert content["cells"][0]["metadata"]["trusted"] is True  # as JupyterLab would send it
    content["cells"].append(json.loads(json.dumps(nbformat.v4.new_code_cell("y = 2"))))
    await call(
        jp_fetch,
        "api",
        "contents",
        "mine.ipynb",
        token=agent_token,
        method="PUT",
        body=json.dumps({"type": "notebook", "format": "json", "content": content}),
    )
    _, _, model = await call(jp_fetch, "api", "contents", "mine.ipynb")
    content = model["content"]
    for cell in content["cells"]:
        cell["metadata"].pop("jupyter_approvals", None)
    await call(
        jp_fetch,
        "api",
        "contents",
        "mine.ipynb",
        token=agent_token,
        method="PUT",
        body=json.dumps({"type": "notebook", "format": "json", "content": content}),
    )
    # Then the person's cell is not the agent's, the agent's cell still is
    _, _, model = await call(jp_fetch, "api", "contents", "mine.ipynb")
    marks = [c["metadata"].get("jupyter_approvals") for c in model["content"]["cells"]]
    assert marks == [None, {"inserted_by": "agent bot"}]
    # And the saved notebook is no longer signed: its script output stays inert
    on_disk = nbformat.read(Path(jp_root_dir) / "mine.ipynb", as_version=4)
    assert not jp_serverapp.contents_manager.notary.check_signature(on_disk)


async def test_a_notebook_an_agent_saves_is_never_signed_whatever_its_outputs(
    jp_fetch, jp_serverapp, jp_root_dir, agent_token
):
    # Given outputs nbformat's own check does not count as unsafe (update_display_data)
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x = 1")
    cell.outputs = [
        {
            "output_type": "update_display_data",
            "data": {"text/html": SCRIPT},
            "metadata": {},
            "transient": {"display_id": "d"},
        }
    ]
    nb.cells = [cell]
    for raw in (
        json.dumps({"type": "notebook", "format": "json", "content": json.loads(json.dumps(nb))}),
        # and a body only jupyter_server's own stripping reads
        "\x0c"
        + json.dumps({"type": "notebook", "format": "json", "content": notebook_with_script(True)}),
    ):
        # When an agent saves it
        status, _, _ = await call(
            jp_fetch,
            "api",
            "contents",
            "u.ipynb",
            token=agent_token,
            method="PUT",
            body=raw.encode(),
        )
        assert status in (200, 201)
        # Then the person's server does not trust it
        _, _, model = await call(jp_fetch, "api", "contents", "u.ipynb")
        [saved] = model["content"]["cells"]
        assert saved["metadata"]["trusted"] is False
        on_disk = nbformat.read(Path(jp_root_dir) / "u.ipynb", as_version=4)
        assert not jp_serverapp.contents_manager.notary.check_signature(on_disk)


@pytest.mark.parametrize(
    "output_type", ["update_display_data", "display_data", "execute_result", "future_output"]
)
async def test_the_persons_later_save_never_signs_an_agents_rich_output(
    jp_fetch, jp_serverapp, jp_root_dir, agent_token, output_type
):
    # Given a notebook with the person's trusted cell and a cell an agent gave HTML output,
    # of a type nbformat's own check may not count, without any "trusted" key (as a
    # collaboration room's autosave writes it)
    persons = nbformat.v4.new_code_cell("print(1)")
    persons.outputs = [nbformat.v4.new_output("stream", name="stdout", text="1\n")]
    persons.metadata["trusted"] = True
    agents = nbformat.v4.new_code_cell("x = 1")
    agents.outputs = [{"output_type": output_type, "data": {"text/html": SCRIPT}, "metadata": {}}]
    agents.metadata["jupyter_approvals"] = {"inserted_by": "agent bot"}
    nb = nbformat.v4.new_notebook()
    nb.cells = [persons, agents]
    content = json.loads(json.dumps(nb))
    # When the person saves it (an ordinary save, not "Trust Notebook")
    status, _, _ = await call(
        jp_fetch,
        "api",
        "contents",
        "shared.ipynb",
        method="PUT",
        body=json.dumps({"type": "notebook", "format": "json", "content": content}),
    )
    assert status == 201
    # Then it is not signed: the agent's output stays inert when the notebook is opened again
    on_disk = nbformat.read(Path(jp_root_dir) / "shared.ipynb", as_version=4)
    assert not jp_serverapp.contents_manager.notary.check_signature(on_disk)
    # When the person trusts the notebook explicitly (what "Trust Notebook" asks the server)
    await call(jp_fetch, "api", "contents", "shared.ipynb", "trust", method="POST", body="")
    # Then, and only then, it is signed
    on_disk = nbformat.read(Path(jp_root_dir) / "shared.ipynb", as_version=4)
    assert jp_serverapp.contents_manager.notary.check_signature(on_disk)
