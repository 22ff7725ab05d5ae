"""The hold on agent code: nothing an agent sends on a kernel websocket runs before a person
approved exactly that request, in either websocket protocol a real client speaks."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from tornado.httpclient import HTTPClientError

from jupyter_approvals.core.agents import AgentRegistry, registry_path
from jupyter_approvals.core.journal.reader import read_entries
from jupyter_approvals.core.project import journal_path
from jupyter_approvals.core.protocol import HELD_MIMETYPE

from .agent_client import KernelSocket, add_agent, call

API = "jupyter-approvals/api"
PROTOCOLS = [pytest.param(True, id="v1"), pytest.param(False, id="legacy-json")]


@pytest.fixture
def agent_token(state_dir) -> str:
    return add_agent(state_dir, "bot")


@pytest.fixture
def open_socket(jp_http_port, jp_base_url, agent_token):
    sockets: list[KernelSocket] = []

    async def open_(kernel_id: str, v1: bool = True, token: str | None = None) -> KernelSocket:
        socket = await KernelSocket.open(
            jp_http_port, jp_base_url, kernel_id, token or agent_token, v1
        )
        sockets.append(socket)
        return socket

    yield open_
    for socket in sockets:
        socket.close()


async def held_items(jp_fetch) -> list[dict]:
    _, _, listing = await call(jp_fetch, API, "pending")
    return [item for item in listing["pending"] if item.get("held_at") == "server"]


async def decide(
    jp_fetch, item: dict, decision: str = "approve", reason: str = "", **extra: object
) -> tuple:
    body = {"decision": decision, "fingerprint": item["fingerprint"], "reason": reason, **extra}
    status, _, answer = await call(
        jp_fetch, *item["decide_url"].split("/"), method="POST", body=json.dumps(body)
    )
    return status, answer


@pytest.mark.parametrize("v1", PROTOCOLS)
async def test_agent_code_waits_for_a_person_then_runs_once(
    jp_fetch, kernels, open_socket, jp_root_dir, v1
):
    # Given a notebook's kernel and an agent connected to it
    kernel = await kernels()
    agent = await open_socket(kernel.id, v1=v1)
    code = "open('ran.txt', 'a').write('x'); print(40 + 2)"
    # When the agent sends code
    first = await agent.execute(code)
    # Then nothing ran, and the agent got a well-formed failed execution that says why
    assert not (Path(jp_root_dir) / "ran.txt").exists()
    kinds = [(m["msg_type"], m["content"].get("execution_state")) for m in first["messages"]]
    assert kinds == [
        ("status", "busy"),
        ("display_data", None),
        ("execute_reply", None),
        ("status", "idle"),
    ]
    # And its one output is the request's card, not an error: the agent reads the text, the
    # person's notebook renders the request the JSON names as the server lists it
    held = first["messages"][1]["content"]["data"]
    assert held["text/plain"] == first["reply"]["evalue"]
    notice = held[HELD_MIMETYPE]
    reply = first["reply"]
    assert reply["status"] == "error"
    assert reply["ename"] == "APPROVAL_PENDING"
    assert isinstance(reply["execution_count"], int)
    assert "nothing ran" in reply["evalue"]
    assert "send exactly the same code again" in reply["evalue"]
    assert "wait()" not in reply["evalue"]
    # And the person's pending list shows all of the code, the agent and where to decide
    [item] = await held_items(jp_fetch)
    assert item["action"] == "kernel.execute"
    assert item["preview"] == code
    assert item["agent"] == "bot"
    assert item["notebook_path"] == "notebook.ipynb"
    assert item["decide_url"] == f"jupyter-approvals/api/held/{item['id']}"
    assert item["id"] in reply["evalue"]
    assert notice == {
        "version": 1,
        "request_id": item["id"],
        "fingerprint": item["fingerprint"],
        "agent": "bot",
    }
    # When the person approves it after reading it
    await asyncio.sleep(1.1)
    status, body = await decide(jp_fetch, item)
    assert (status, body["status"]) == (200, "approved")
    # And the agent sends the same code again
    second = await agent.execute(code)
    # Then it runs, once
    assert second["reply"]["status"] == "ok"
    assert second["stdout"] == "42\n"
    assert (Path(jp_root_dir) / "ran.txt").read_text() == "x"
    # And a third send asks again
    third = await agent.execute(code)
    assert third["reply"]["ename"] == "APPROVAL_PENDING"
    assert (Path(jp_root_dir) / "ran.txt").read_text() == "x"


async def test_changed_code_is_a_new_request_and_the_approval_stays(jp_fetch, kernels, open_socket):
    # Given approved code
    kernel = await kernels()
    agent = await open_socket(kernel.id)
    await agent.execute("x = 1")
    [item] = await held_items(jp_fetch)
    await asyncio.sleep(1.1)
    assert (await decide(jp_fetch, item))[0] == 200
    # When the agent sends other code, or the same code with another flag
    other = await agent.execute("x = 2")
    silent = await agent.execute("x = 1", silent=True)
    # Then each is a new request and nothing ran
    assert other["reply"]["ename"] == "APPROVAL_PENDING"
    assert silent["reply"]["ename"] == "APPROVAL_PENDING"
    assert len(await held_items(jp_fetch)) == 2
    # And the approved code still runs once
    assert (await agent.execute("x = 1"))["reply"]["status"] == "ok"


async def test_a_rejection_reaches_the_agent_once_with_the_reason(jp_fetch, kernels, open_socket):
    kernel = await kernels()
    agent = await open_socket(kernel.id, v1=False)
    await agent.execute("import shutil; shutil.rmtree('data')")
    [item] = await held_items(jp_fetch)
    await asyncio.sleep(1.1)
    # When the person rejects it with a reason
    assert (await decide(jp_fetch, item, "reject", "keep the data"))[0] == 200
    # Then the agent's resend learns it, with the reason, and nothing ran
    again = await agent.execute("import shutil; shutil.rmtree('data')")
    assert again["reply"]["ename"] == "APPROVAL_REJECTED"
    assert "keep the data" in again["reply"]["evalue"]
    # And the send after that is a new request
    assert (await agent.execute("import shutil; shutil.rmtree('data')"))["reply"]["ename"] == (
        "APPROVAL_PENDING"
    )


@pytest.mark.realtime
async def test_a_fast_answer_is_auto_answered_and_runs_nothing(jp_fetch, kernels, open_socket):
    kernel = await kernels()
    agent = await open_socket(kernel.id)
    await agent.execute("y = 1")
    [item] = await held_items(jp_fetch)
    # When a decision comes within the reading floor
    status, body = await decide(jp_fetch, item)
    # Then it counts as no answer
    assert (status, body["code"]) == (409, "APPROVAL_AUTO_ANSWERED")
    again = await agent.execute("y = 1")
    assert again["reply"]["ename"] == "APPROVAL_AUTO_ANSWERED"


async def test_code_past_the_preview_limit_is_refused(jp_fetch, kernels, open_socket):
    kernel = await kernels()
    agent = await open_socket(kernel.id)
    result = await agent.execute("x = 1\n" * 5000)
    assert result["reply"]["ename"] == "APPROVAL_TOO_LARGE"
    assert await held_items(jp_fetch) == []


@pytest.mark.parametrize("v1", PROTOCOLS)
async def test_agents_speak_no_comms_stdin_or_control_execution(
    jp_fetch, kernels, open_socket, jp_root_dir, v1
):
    kernel = await kernels()
    agent = await open_socket(kernel.id, v1=v1)
    # When the agent opens a comm to the approvals endpoint (the frontend's contract)
    msg_id = await agent.send(
        "comm_open", {"comm_id": "c1", "target_name": "jupyter_approvals", "data": {"op": "list"}}
    )
    [closed] = await agent.replies_to(msg_id, timeout=10, first_only=True)
    # Then the server closes it with a code; the kernel never saw it
    assert closed["msg_type"] == "comm_close"
    assert closed["content"]["data"]["code"] == "APPROVAL_AGENT_FORBIDDEN"
    # When it runs code on the control channel
    control = await agent.execute("open('ctl.txt', 'w').write('x')", channel="control")
    # Then that is refused too, and nothing ran
    assert control["reply"]["ename"] == "APPROVAL_AGENT_FORBIDDEN"
    assert not (Path(jp_root_dir) / "ctl.txt").exists()
    # When it answers an input prompt or sends a debug request
    for msg_type, channel in (("input_reply", "stdin"), ("debug_request", "control")):
        msg_id = await agent.send(msg_type, {"value": "y"}, channel)
        [answer] = await agent.replies_to(msg_id, timeout=10, first_only=True)
        assert "APPROVAL_AGENT_FORBIDDEN" in json.dumps(answer["content"])
    # While what an agent client needs to work still passes
    msg_id = await agent.send("kernel_info_request", {})
    [info] = await agent.replies_to(msg_id, timeout=30, first_only=True)
    assert info["msg_type"] == "kernel_info_reply"
    assert info["content"]["status"] == "ok"


async def test_the_kernel_learns_who_sent_a_message_and_clients_cannot_claim_it(
    jp_fetch, kernels, open_socket, jp_serverapp
):
    # Given the person's own websocket (their token), claiming in metadata to be an agent
    kernel = await kernels()
    person = await open_socket(kernel.id, token=jp_serverapp.identity_provider.token)
    msg_id = await person.send(
        "execute_request",
        {
            "code": "print(get_ipython().kernel.get_parent()['metadata']['jupyter_approvals'])",
            "silent": False,
            "store_history": False,
            "user_expressions": {},
            "allow_stdin": False,
            "stop_on_error": True,
        },
        jupyter_approvals={"sender": "agent", "agent": "forged"},
    )
    messages = await person.replies_to(msg_id)
    text = "".join(m["content"].get("text", "") for m in messages if m["msg_type"] == "stream")
    # Then the kernel sees the server's stamp, not the client's claim
    assert "'sender': 'person'" in text
    assert "forged" not in text
    # And the stamp carries the name JupyterLab shows for that person, for cards to name
    assert "'display_name': '" in text


async def test_every_step_of_held_code_is_journaled(
    jp_fetch, kernels, open_socket, jp_root_dir, state_dir
):
    kernel = await kernels()
    agent = await open_socket(kernel.id)
    await agent.execute("z = 3")
    [item] = await held_items(jp_fetch)
    await asyncio.sleep(1.1)
    await decide(jp_fetch, item)
    await agent.execute("z = 3")
    entries = await held_journal(jp_root_dir, state_dir, item["id"])
    assert [e["event"] for e in entries] == ["requested", "approved", "executed"]
    for entry in entries:
        assert entry["agent"] == "bot"
        assert entry["held_at"] == "server"
        assert entry["action"] == "kernel.execute"
    approved = next(e for e in entries if e["event"] == "approved")
    assert approved["channel"] == "sidebar"
    assert approved["decided_by"]


async def test_a_decision_at_the_held_card_is_journaled_as_made_in_the_card(
    jp_fetch, kernels, open_socket, jp_root_dir, state_dir
):
    # Given agent code the server holds
    kernel = await kernels()
    agent = await open_socket(kernel.id)
    await agent.execute("w = 4")
    [item] = await held_items(jp_fetch)
    await asyncio.sleep(1.1)
    # When the person approves it in the card the server renders at the agent's cell
    status, body = await decide(jp_fetch, item, channel="card")
    assert (status, body["status"]) == (200, "approved")
    # Then the code runs as for the sidebar, and the journal says where it was decided
    assert (await agent.execute("w = 4"))["reply"]["status"] == "ok"
    entries = await held_journal(jp_root_dir, state_dir, item["id"])
    assert [(e["event"], e.get("channel")) for e in entries] == [
        ("requested", None),
        ("approved", "card"),
        ("executed", "card"),
    ]


@pytest.mark.parametrize("channel", ["comm", "server", "chat", "", 5, None])
async def test_a_held_decision_names_no_channel_but_the_sidebar_or_the_card(
    jp_fetch, kernels, open_socket, jp_root_dir, state_dir, channel
):
    # Given agent code the server holds
    kernel = await kernels()
    agent = await open_socket(kernel.id)
    await agent.execute("v = 5")
    [item] = await held_items(jp_fetch)
    await asyncio.sleep(1.1)
    # When a decision names a place held code is not decided in
    status, body = await decide(jp_fetch, item, channel=channel)
    # Then it is refused as malformed, nothing is decided, and the refusal is journaled
    assert (status, body["code"]) == (400, "APPROVAL_MALFORMED_DECISION")
    assert [i["id"] for i in await held_items(jp_fetch)] == [item["id"]]
    refused = (await held_journal(jp_root_dir, state_dir, item["id"]))[1:]
    assert [(e["event"], e["code"], e["channel"]) for e in refused] == [
        ("refused", "APPROVAL_MALFORMED_DECISION", "sidebar")
    ]
    assert (await agent.execute("v = 5"))["reply"]["ename"] == "APPROVAL_PENDING"


async def held_journal(jp_root_dir, state_dir, request_id: str) -> list[dict]:
    path = journal_path(Path(jp_root_dir).resolve(), state_dir)
    entries = [e for e in read_entries(path, limit=50).entries if e["request_id"] == request_id]
    return list(reversed(entries))


async def test_approved_code_that_raises_is_journaled_failed_with_the_error_name(
    jp_fetch, kernels, open_socket, jp_root_dir, state_dir
):
    # Given approved agent code that raises in the kernel
    kernel = await kernels()
    agent = await open_socket(kernel.id)
    code = "1 / 0"
    await agent.execute(code)
    [item] = await held_items(jp_fetch)
    await asyncio.sleep(1.1)
    await decide(jp_fetch, item)
    # When the agent sends it again and the kernel runs it
    result = await agent.execute(code)
    assert result["reply"]["ename"] == "ZeroDivisionError"
    # Then the journal says it failed, with the kernel's error, and never that it executed
    entries = await held_journal(jp_root_dir, state_dir, item["id"])
    assert [e["event"] for e in entries] == ["requested", "approved", "failed"]
    assert entries[-1]["error"].startswith("ZeroDivisionError: division by zero")


async def test_approved_code_is_journaled_executed_only_when_the_kernel_replied(
    jp_fetch, kernels, open_socket, jp_root_dir, state_dir
):
    # Given approved agent code that the kernel runs until the test lets it finish
    root = Path(jp_root_dir)
    kernel = await kernels()
    agent = await open_socket(kernel.id)
    code = (
        "import time, pathlib\n"
        "pathlib.Path('started').touch()\n"
        "while not pathlib.Path('go').exists():\n"
        "    time.sleep(0.05)"
    )
    await agent.execute(code)
    [item] = await held_items(jp_fetch)
    await asyncio.sleep(1.1)
    await decide(jp_fetch, item)
    msg_id = await agent.send_execute(code)
    # When the kernel runs it and has not replied yet
    for _ in range(1200):
        if (root / "started").exists():
            break
        await asyncio.sleep(0.05)
    assert (root / "started").exists()
    events = [e["event"] for e in await held_journal(jp_root_dir, state_dir, item["id"])]
    # Then nothing says it executed
    assert "executed" not in events
    # When the cell ends
    (root / "go").write_text("1")
    replies = await agent.replies_to(msg_id)
    assert any(m["msg_type"] == "execute_reply" for m in replies)
    # Then it is journaled executed
    events = [e["event"] for e in await held_journal(jp_root_dir, state_dir, item["id"])]
    assert events == ["requested", "approved", "executed"]


async def test_approved_code_whose_agent_left_before_the_reply_is_journaled_unknown(
    jp_fetch, kernels, open_socket, jp_root_dir, state_dir
):
    # Given approved agent code the kernel is running
    root = Path(jp_root_dir)
    kernel = await kernels()
    agent = await open_socket(kernel.id)
    code = "import time, pathlib\nwhile not pathlib.Path('go').exists():\n    time.sleep(0.05)"
    await agent.execute(code)
    [item] = await held_items(jp_fetch)
    await asyncio.sleep(1.1)
    await decide(jp_fetch, item)
    await agent.send_execute(code)
    # When the agent's socket closes before the kernel replied
    agent.close()
    entries: list[dict] = []
    for _ in range(200):
        entries = await held_journal(jp_root_dir, state_dir, item["id"])
        if len(entries) == 3:
            break
        await asyncio.sleep(0.05)
    (root / "go").write_text("1")
    # Then the journal says the outcome is unknown, not that it executed
    assert [e["event"] for e in entries] == ["requested", "approved", "failed"]
    assert entries[-1]["error"].startswith("OutcomeUnknown:")


async def test_removing_an_agent_closes_its_open_sockets(jp_fetch, kernels, open_socket, state_dir):
    kernel = await kernels()
    agent = await open_socket(kernel.id)
    AgentRegistry(registry_path(state_dir)).remove("bot")
    # Then within the server's one-second sweep the socket is closed by the server
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 5
    while (message := await agent.read(timeout=max(0.01, deadline - loop.time()))) is not None:
        assert message["msg_type"] == "status"  # what the kernel said while connecting
    assert agent.connection.close_code == 4003


async def test_a_flood_from_one_agent_never_refuses_another_agents_code(
    jp_fetch, kernels, open_socket, state_dir
):
    # Given one agent that filled its limit of pending requests
    kernel = await kernels()
    flooder = await open_socket(kernel.id)
    for i in range(20):
        assert (await flooder.execute(f"x = {i}"))["reply"]["ename"] == "APPROVAL_PENDING"
    # Then its next request is refused with a code
    assert (await flooder.execute("x = 20"))["reply"]["ename"] == "APPROVAL_TOO_MANY_PENDING"
    # While another agent's code is still held for the person, not refused
    other = await open_socket(kernel.id, token=add_agent(state_dir, "other"))
    assert (await other.execute("y = 1"))["reply"]["ename"] == "APPROVAL_PENDING"
    held = await held_items(jp_fetch)
    assert len(held) == 21
    assert [item["agent"] for item in held].count("other") == 1


async def test_an_unknown_held_request_is_404(jp_fetch):
    status, _, body = await call(
        jp_fetch,
        API,
        "held",
        "0123456789abcdef",
        method="POST",
        body=json.dumps({"decision": "approve", "fingerprint": "sha256:" + "a" * 64}),
    )
    assert (status, body["code"]) == (404, "APPROVAL_UNKNOWN_REQUEST")


async def test_an_old_protocol_header_cannot_smuggle_code_past_the_preview(
    jp_fetch, kernels, open_socket, jp_root_dir
):
    # Given an agent on the legacy protocol that leaves the version out of its header, so the
    # server would adapt the message from protocol 4 (user_variables become expressions)
    kernel = await kernels()
    agent = await open_socket(kernel.id, v1=False)
    message = agent.session.msg(
        "execute_request",
        content={
            "code": "1 + 1",
            "silent": False,
            "store_history": True,
            "user_expressions": {},
            "allow_stdin": False,
            "stop_on_error": True,
            "user_variables": ["open('smuggled.txt', 'w').write('x')"],
        },
    )
    del message["header"]["version"]
    message["channel"] = "shell"
    await agent.connection.write_message(json.dumps(message, default=str))
    [answer] = [
        m
        for m in await agent.replies_to(message["header"]["msg_id"])
        if m["msg_type"] == "execute_reply"
    ]
    # Then it is refused with a code, nothing is held for the person, and nothing ran
    assert answer["content"]["ename"] == "APPROVAL_AGENT_FORBIDDEN"
    assert await held_items(jp_fetch) == []
    assert not (Path(jp_root_dir) / "smuggled.txt").exists()


async def test_fields_a_person_would_not_see_are_refused_and_expressions_are_shown(
    jp_fetch, kernels, open_socket
):
    kernel = await kernels()
    agent = await open_socket(kernel.id)
    # When the agent adds a field the card would not show
    odd = await agent.execute("1 + 1", user_variables=["x"])
    # Then it is refused and nothing is held
    assert odd["reply"]["ename"] == "APPROVAL_MALFORMED_MESSAGE"
    assert await held_items(jp_fetch) == []
    # When it sends user expressions (code the kernel evaluates after the cell)
    await agent.execute("1 + 1", user_expressions={"leak": "open('x.txt', 'w')"})
    # Then the person's preview shows them, not only the cell's code
    [item] = await held_items(jp_fetch)
    assert "leak: open('x.txt', 'w')" in item["preview"]


@pytest.mark.parametrize("msg_type", ["complete_request", "inspect_request"])
async def test_completion_and_inspection_are_refused_for_agents(
    jp_fetch, kernels, open_socket, msg_type
):
    # Completing imports the module named (code an agent may have written); inspecting reads
    # values and runs getters in the person's kernel
    kernel = await kernels()
    agent = await open_socket(kernel.id)
    msg_id = await agent.send(
        msg_type, {"code": "from os import ", "cursor_pos": 15, "detail_level": 0}
    )
    [answer] = await agent.replies_to(msg_id, timeout=10, first_only=True)
    assert answer["msg_type"] == msg_type.replace("_request", "_reply")
    assert answer["content"]["ename"] == "APPROVAL_AGENT_FORBIDDEN"


async def test_an_agent_cannot_take_over_a_persons_kernel_connection(
    jp_fetch, kernels, open_socket, jp_serverapp, jp_http_port, jp_base_url, agent_token
):
    # Given the person's websocket to a kernel, with its session_id
    kernel = await kernels()
    person = await open_socket(kernel.id, token=jp_serverapp.identity_provider.token)
    # When an agent connects with the same session_id (jupyter_server would close the person's)
    with pytest.raises(HTTPClientError) as refused:
        await KernelSocket.open(
            jp_http_port, jp_base_url, kernel.id, agent_token, session_id=person.session_id
        )
    # Then it is refused, and the person's socket still works
    assert refused.value.code == 403
    assert (await person.execute("1"))["reply"]["status"] == "ok"


async def test_the_kernels_output_for_approved_code_is_remembered_for_its_room_writes(
    jp_fetch, approvals, kernels, open_socket
):
    # Given approved agent code that displays HTML
    from jupyter_approvals.server.gate.approved_outputs import data_key

    kernel = await kernels()
    agent = await open_socket(kernel.id)
    code = "from IPython.display import HTML, display\ndisplay(HTML('<b>approved</b>'))"
    await agent.execute(code)
    [item] = await held_items(jp_fetch)
    await asyncio.sleep(1.1)
    await decide(jp_fetch, item)
    # When the agent runs it and receives its output
    result = await agent.execute(code)
    [shown] = [m["content"]["data"] for m in result["messages"] if m["msg_type"] == "display_data"]
    # Then the gate remembers exactly that output as one the agent may write into a trusted cell
    gate = approvals.parts.gate
    assert gate.kernel_screen.approved_outputs.of("bot") == {data_key(shown)}
    assert shown["text/html"] == "<b>approved</b>"
