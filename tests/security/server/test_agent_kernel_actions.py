"""An agent acts only on the kernels and sessions it started and nobody else works in.

Attempts made as an agent with a token of its own, over REST and a kernel websocket, against
a real jupyter_server with real kernels: interrupting the person's running cell, taking the
session of a notebook the person is about to open and then stopping the kernel the person
works in, attaching sessions to the person's kernel, and naming a decoy notebook for it.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.server.agent_client import KernelSocket, call

from .conftest import API

pytestmark = pytest.mark.kernel

#: A cell that says it started, then runs until the test lets it finish.
LONG_CELL = """
import time
from pathlib import Path
Path('started').write_text('1')
while not Path('go').exists():
    time.sleep(0.05)
print('finished')
"""


async def wait_for(path: Path, timeout: float = 60) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not path.exists():
        assert loop.time() < deadline, f"{path} never appeared"
        await asyncio.sleep(0.05)


async def agent_session(jp_fetch: Any, token: str, path: str, **kernel: Any) -> dict[str, Any]:
    status, _, model = await call(
        jp_fetch,
        "api",
        "sessions",
        token=token,
        method="POST",
        body=json.dumps(
            {"path": path, "type": "notebook", "kernel": kernel or {"name": "python3"}}
        ),
    )
    assert status == 201, model
    return model


async def test_an_agent_cannot_interrupt_the_persons_running_cell(
    jp_fetch, jp_http_port, jp_base_url, jp_root_dir, kernels, agent_token
):
    # Given an agent connected to the person's kernel, and the person's cell running there
    root = Path(jp_root_dir)
    kernel = await kernels()
    socket = await KernelSocket.open(jp_http_port, jp_base_url, kernel.id, agent_token)
    cell = asyncio.ensure_future(kernel.run(LONG_CELL))
    await wait_for(root / "started")
    # When the agent interrupts it over REST, and on the kernel's control channel
    status, _, reply = await call(
        jp_fetch,
        "api",
        "kernels",
        kernel.id,
        "interrupt",
        token=agent_token,
        method="POST",
        body="",
    )
    try:
        msg_id = await socket.send("interrupt_request", {}, channel="control")
        [answer] = await socket.replies_to(msg_id, timeout=30, first_only=True)
    finally:
        socket.close()
    # Then both are refused with a code, and the person's cell runs to its end
    assert (status, reply["code"]) == (403, "APPROVAL_AGENT_FORBIDDEN")
    assert answer["msg_type"] == "interrupt_reply"
    assert answer["content"]["ename"] == "APPROVAL_AGENT_FORBIDDEN"
    (root / "go").write_text("1")
    result = await cell
    assert result["status"] == "ok", result
    assert any(m["content"].get("text") == "finished\n" for m in result["outputs"])


async def test_an_agent_still_interrupts_restarts_and_stops_its_own_kernel(
    jp_fetch, jp_serverapp, agent_token
):
    # Given a kernel the agent started and nobody else uses
    model = await agent_session(jp_fetch, agent_token, "agent-work.ipynb")
    kernel_id = model["kernel"]["id"]
    # When it interrupts, restarts and deletes it
    for parts, method in (
        (("api", "kernels", kernel_id, "interrupt"), "POST"),
        (("api", "kernels", kernel_id, "restart"), "POST"),
        (("api", "sessions", model["id"]), "DELETE"),
    ):
        status, _, reply = await call(
            jp_fetch,
            *parts,
            token=agent_token,
            method=method,
            body="" if method == "POST" else None,
        )
        # Then each is done
        assert status in (200, 204), (parts, reply)
    assert kernel_id not in jp_serverapp.kernel_manager.list_kernel_ids()


async def test_a_session_an_agent_made_for_the_persons_notebook_gives_it_no_power_over_it(
    jp_fetch, jp_serverapp, jp_http_port, jp_base_url, jp_root_dir, agent_token
):
    # Given an agent that created the session of analysis.ipynb before the person opened it
    agents = await agent_session(jp_fetch, agent_token, "analysis.ipynb")
    kernel_id = agents["kernel"]["id"]
    # When the person opens the notebook (JupyterLab asks for its session, then connects)
    status, _, persons = await call(
        jp_fetch,
        "api",
        "sessions",
        method="POST",
        body=json.dumps(
            {"path": "analysis.ipynb", "type": "notebook", "kernel": {"name": "python3"}}
        ),
    )
    assert status == 201
    assert persons["kernel"]["id"] == kernel_id  # jupyter_server hands over the same session
    # Then the agent can no longer restart, interrupt, shut down, move or delete it
    attempts = [
        (("api", "kernels", kernel_id, "restart"), "POST", ""),
        (("api", "kernels", kernel_id, "interrupt"), "POST", ""),
        (("api", "kernels", kernel_id), "DELETE", None),
        (("api", "sessions", agents["id"]), "DELETE", None),
        (
            ("api", "sessions", agents["id"]),
            "PATCH",
            json.dumps({"kernel": {"name": "python3"}}),
        ),
    ]
    for parts, method, body in attempts:
        status, _, reply = await call(jp_fetch, *parts, token=agent_token, method=method, body=body)
        assert (status, reply["code"]) == (403, "APPROVAL_AGENT_FORBIDDEN"), (parts, method)
    assert kernel_id in jp_serverapp.kernel_manager.list_kernel_ids()
    await call(jp_fetch, "api", "sessions", agents["id"], method="DELETE")


async def test_a_kernel_the_person_connects_to_is_no_longer_the_agents_to_stop(
    jp_fetch, jp_serverapp, jp_http_port, jp_base_url, agent_token
):
    # Given a kernel an agent started, and the person's client connecting to it
    status, _, kernel = await call(
        jp_fetch, "api", "kernels", token=agent_token, method="POST", body="{}"
    )
    assert status == 201
    token = jp_serverapp.identity_provider.token
    person = await KernelSocket.open(jp_http_port, jp_base_url, kernel["id"], token)
    try:
        # When the agent tries to shut it down
        status, _, reply = await call(
            jp_fetch, "api", "kernels", kernel["id"], token=agent_token, method="DELETE"
        )
    finally:
        person.close()
    # Then it is refused, and the kernel runs on
    assert (status, reply["code"]) == (403, "APPROVAL_AGENT_FORBIDDEN")
    assert kernel["id"] in jp_serverapp.kernel_manager.list_kernel_ids()
    await call(jp_fetch, "api", "kernels", kernel["id"], method="DELETE")


async def test_an_agent_cannot_attach_a_session_to_the_persons_kernel(
    jp_fetch, kernels, agent_token
):
    # Given the person's kernel, and a session of the agent's own
    kernel = await kernels()
    own = await agent_session(jp_fetch, agent_token, "mine.ipynb")
    # When the agent makes a session on the person's kernel, or moves its own there
    status, _, reply = await call(
        jp_fetch,
        "api",
        "sessions",
        token=agent_token,
        method="POST",
        body=json.dumps({"path": "decoy.ipynb", "type": "notebook", "kernel": {"id": kernel.id}}),
    )
    moved_status, _, moved = await call(
        jp_fetch,
        "api",
        "sessions",
        own["id"],
        token=agent_token,
        method="PATCH",
        body=json.dumps({"kernel": {"id": kernel.id}}),
    )
    # Then both are refused, and the person's kernel has only the person's session
    assert (status, reply["code"]) == (403, "APPROVAL_AGENT_FORBIDDEN")
    assert (moved_status, moved["code"]) == (403, "APPROVAL_AGENT_FORBIDDEN")
    _, _, listed = await call(jp_fetch, "api", "sessions")
    assert [s["path"] for s in listed if s["kernel"]["id"] == kernel.id] == ["notebook.ipynb"]
    await call(jp_fetch, "api", "sessions", own["id"], token=agent_token, method="DELETE")


async def test_held_code_names_the_persons_notebook_not_the_agents_decoy(
    jp_fetch, jp_http_port, jp_base_url, agent_token
):
    # Given an agent's kernel whose session names decoy.ipynb, which the person then also
    # opens report.ipynb with (JupyterLab's "use this kernel")
    agents = await agent_session(jp_fetch, agent_token, "decoy.ipynb")
    kernel_id = agents["kernel"]["id"]
    status, _, _ = await call(
        jp_fetch,
        "api",
        "sessions",
        method="POST",
        body=json.dumps({"path": "report.ipynb", "type": "notebook", "kernel": {"id": kernel_id}}),
    )
    assert status == 201
    # When the agent sends code to that kernel
    socket = await KernelSocket.open(jp_http_port, jp_base_url, kernel_id, agent_token)
    try:
        result = await socket.execute("print('hello')")
    finally:
        socket.close()
    # Then the person is asked about code in report.ipynb, the notebook they work in
    assert result["reply"]["ename"] == "APPROVAL_PENDING"
    _, _, listing = await call(jp_fetch, API, "pending")
    [item] = [i for i in listing["pending"] if i.get("held_at") == "server"]
    assert item["notebook_path"] == "report.ipynb"
    assert "report.ipynb" in item["summary"]
