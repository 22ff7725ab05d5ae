"""Answers to a Jupyter AI permission: from the chat or the sidebar, first one wins, checked."""

from __future__ import annotations

import json
import time
import urllib.error

import pytest

from tests.jupyter_ai.conftest import ALLOW_REJECT, HUMAN_PAUSE_S, JupyterAi, write_call
from tests.server.agent_client import add_agent

pytestmark = [pytest.mark.jupyter_ai, pytest.mark.timeout(300)]


def ask_to_write(jupyter_ai: JupyterAi, tool_call_id: str, name: str) -> dict:
    """The agent asks to create ``name`` (and writes it if allowed); its sidebar row."""
    target = jupyter_ai.root / name
    jupyter_ai.run(
        {"ask": write_call(tool_call_id, target, None, f"{name}\n"), "options": ALLOW_REJECT},
        {"write": {"path": str(target), "content": f"{name}\n"}, "if_allowed": True},
    )
    return jupyter_ai.held_row(name)


def test_allow_in_the_chat_is_a_decision_of_the_person_journaled_as_from_the_chat(
    jupyter_ai: JupyterAi,
):
    # Given a permission request shown in the chat and the sidebar
    row = ask_to_write(jupyter_ai, "c1", "from-chat.txt")
    # When the person clicks Allow in the chat, after reading it
    time.sleep(HUMAN_PAUSE_S)
    status, body = jupyter_ai.answer_in_chat("c1", "allow")
    asked, wrote = jupyter_ai.answers(2)
    # Then it is the decision: the agent is told allow, the write lands, journaled via chat
    assert (status, body) == (200, {"status": "ok"})
    assert asked["result"]["outcome"]["optionId"] == "allow"
    assert wrote["error"] is None
    assert (jupyter_ai.root / "from-chat.txt").read_text() == "from-chat.txt\n"
    [approved] = [e for e in jupyter_ai.server.events_of(row["id"]) if e["event"] == "approved"]
    assert approved["channel"] == "chat"
    # And the sidebar's answer after it finds nothing left to decide
    late = jupyter_ai.server.api_json("/jupyter-approvals/api/pending")["pending"]
    assert all(r["id"] != row["id"] for r in late)


def test_the_first_answer_wins_and_the_chat_cannot_overturn_the_sidebar(jupyter_ai: JupyterAi):
    # Given a request the person rejected in the sidebar
    row = ask_to_write(jupyter_ai, "c2", "first-wins.txt")
    time.sleep(HUMAN_PAUSE_S)
    jupyter_ai.server.decide_held(row, "reject")
    asked, _ = jupyter_ai.answers(2)
    # When Allow is clicked in the chat afterwards
    status, body = jupyter_ai.answer_in_chat("c2", "allow")
    # Then it is refused and journaled, and the agent was told reject
    assert (status, body["code"]) == (409, "APPROVAL_ALREADY_DECIDED")
    assert asked["result"]["outcome"]["optionId"] == "reject"
    assert not (jupyter_ai.root / "first-wins.txt").exists()
    [late] = jupyter_ai.journal(event="refused", request_id=row["id"])
    assert (late["code"], late["channel"]) == ("APPROVAL_ALREADY_DECIDED", "chat")


def test_the_sidebars_answer_after_the_chats_is_refused_on_record(jupyter_ai: JupyterAi):
    # Given a request the person approved in the chat
    row = ask_to_write(jupyter_ai, "c2b", "chat-first.txt")
    time.sleep(HUMAN_PAUSE_S)
    assert jupyter_ai.answer_in_chat("c2b", "allow")[0] == 200
    jupyter_ai.answers(2)
    # When the sidebar's Reject comes after it
    body = json.dumps({"decision": "reject", "fingerprint": row["fingerprint"]}).encode()
    try:
        jupyter_ai.server.api(f"/{row['decide_url']}", "POST", body)
        raise AssertionError("the late decision was taken")
    except urllib.error.HTTPError as error:
        late = json.loads(error.read())
    # Then it is refused and journaled; the write stands
    assert late["code"] == "APPROVAL_ALREADY_DECIDED"
    assert jupyter_ai.journal(event="refused", request_id=row["id"], code=late["code"])
    assert (jupyter_ai.root / "chat-first.txt").read_text() == "chat-first.txt\n"
    # And an unknown tool call's answer is refused as such
    assert jupyter_ai.answer_in_chat("never-asked", "allow")[1]["code"] == (
        "APPROVAL_UNKNOWN_REQUEST"
    )


def test_an_option_the_agent_never_offered_is_refused_and_the_request_stays(
    jupyter_ai: JupyterAi,
):
    # Given a request waiting in the chat
    row = ask_to_write(jupyter_ai, "c3", "unoffered.txt")
    time.sleep(HUMAN_PAUSE_S)
    # When an option id the agent never offered is posted
    status, body = jupyter_ai.answer_in_chat("c3", "yes-please")
    # Then it is refused, journaled, and the request still waits for a person
    assert (status, body["code"]) == (400, "APPROVAL_MALFORMED_DECISION")
    assert any(r["id"] == row["id"] for r in jupyter_ai.server.pending())
    refused = jupyter_ai.journal(event="refused", request_id=row["id"])
    assert [line["code"] for line in refused] == ["APPROVAL_MALFORMED_DECISION"]
    # (the person then rejects it)
    jupyter_ai.server.decide_held(row, "reject")
    jupyter_ai.answers(2)


def test_a_click_faster_than_a_person_reads_is_no_answer(jupyter_ai: JupyterAi):
    # Given a request just shown in the chat
    ask_to_write(jupyter_ai, "c4", "too-fast.txt")
    # When Allow comes at once
    status, body = jupyter_ai.answer_in_chat("c4", "allow")
    asked, wrote = jupyter_ai.answers(2)
    # Then it counts as no answer: the agent is told reject and nothing is written
    assert (status, body["code"]) == (409, "APPROVAL_AUTO_ANSWERED")
    assert asked["result"]["outcome"]["optionId"] == "reject"
    assert wrote["result"] == "skipped"
    assert not (jupyter_ai.root / "too-fast.txt").exists()


@pytest.mark.parametrize(
    ("credential", "code"),
    [("agent-token", "APPROVAL_AGENT_FORBIDDEN"), ("other-origin", "APPROVAL_CROSS_ORIGIN")],
)
def test_only_a_persons_page_of_this_server_answers(
    jupyter_ai: JupyterAi, credential: str, code: str
):
    # Given a request waiting in the chat
    row = ask_to_write(jupyter_ai, f"c5-{credential}", f"{credential}.txt")
    time.sleep(HUMAN_PAUSE_S)
    # When an agent's token, or a page of another site, clicks Allow
    if credential == "agent-token":
        token = add_agent(jupyter_ai.server.state_dir, f"bot-{int(time.time() * 1000)}")
        status, body = jupyter_ai.answer_in_chat(f"c5-{credential}", "allow", token=token)
    else:
        status, body = jupyter_ai.answer_in_chat(
            f"c5-{credential}", "allow", Origin="https://evil.example"
        )
    # Then it is refused and the request still waits
    assert (status, body["code"]) == (403, code)
    assert any(r["id"] == row["id"] for r in jupyter_ai.server.pending())
    if credential == "other-origin":
        # (the page reached the route: its refusal is journaled with the origin it came from;
        # an agent's token never gets that far, the agent gate refuses the route itself)
        [refused] = jupyter_ai.journal(event="refused", request_id=row["id"])
        assert (refused["code"], refused["origin"]) == (code, "https://evil.example")
    jupyter_ai.server.decide_held(row, "reject")
    jupyter_ai.answers(2)


def test_always_allow_is_passed_on_only_as_the_person_chose_it_and_journaled(
    jupyter_ai: JupyterAi,
):
    # Given a request waiting in the chat
    row = ask_to_write(jupyter_ai, "c6", "always.txt")
    time.sleep(HUMAN_PAUSE_S)
    # When the person chooses "Always allow" there
    jupyter_ai.answer_in_chat("c6", "always")
    asked, wrote = jupyter_ai.answers(2)
    # Then the agent is told so, the journal records the choice, and the write lands once
    assert asked["result"]["outcome"]["optionId"] == "always"
    [approved] = [e for e in jupyter_ai.server.events_of(row["id"]) if e["event"] == "approved"]
    assert approved["reason"] == "Always allow, chosen in the chat"
    assert wrote["error"] is None
    # And a later write it did not ask for is still refused: "always" binds nothing here
    jupyter_ai.run({"write": {"path": str(jupyter_ai.root / "always.txt"), "content": "more\n"}})
    [again] = jupyter_ai.answers(1)
    assert again["error"]["data"]["code"] == "APPROVAL_REQUIRED"


def test_the_sidebars_approve_tells_the_agent_allow_once(jupyter_ai: JupyterAi):
    # Given a request that offers allow once and always
    row = ask_to_write(jupyter_ai, "c7", "once.txt")
    time.sleep(HUMAN_PAUSE_S)
    # When the person approves it in the sidebar
    jupyter_ai.server.decide_held(row, "approve")
    asked, _ = jupyter_ai.answers(2)
    # Then the agent is told "allow once", never "always"
    assert asked["result"]["outcome"]["optionId"] == "allow"


def test_a_tool_the_agent_runs_itself_is_approved_as_its_words_and_handed_over(
    jupyter_ai: JupyterAi,
):
    # Given an agent that asks to fetch a page (nothing Jupyter AI carries out for it)
    tool_call = {
        "toolCallId": "c8",
        "title": "Fetch the docs",
        "kind": "fetch",
        "status": "pending",
        "rawInput": {"url": "https://example.org/docs"},
    }
    jupyter_ai.run({"ask": tool_call, "options": ALLOW_REJECT})
    # Then the sidebar shows the agent's words, its input, and that nothing more is checked
    row = jupyter_ai.held_row("Fetch the docs")
    assert row["action"] == "agent.tool"
    assert "https://example.org/docs" in row["preview"]
    assert "cannot see or check" in row["preview"]
    # When the person approves it
    time.sleep(HUMAN_PAUSE_S)
    jupyter_ai.server.decide_held(row, "approve")
    [asked] = jupyter_ai.answers(1)
    # Then the agent is told allow, and handing it over is the request's run
    assert asked["result"]["outcome"]["optionId"] == "allow"
    events = [line["event"] for line in jupyter_ai.server.events_of(row["id"])]
    assert events == ["requested", "approved", "executed"]
