"""Jupyter AI's agent asks in the chat; the person approves in the Approvals sidebar; only the
approved content lands on disk. Real JupyterLab with Jupyter AI 3 (``JUPYTER_AI_PYTHON``) in
headless Chromium, the scripted ACP agent started by Jupyter AI's own client."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.lab import Sidebar, save_screenshot
from tests.jupyter_ai.conftest import (
    AGENT_NAME,
    ALLOW_REJECT,
    HUMAN_PAUSE_S,
    JupyterAi,
    running_jupyter_ai,
    write_call,
)

pytestmark = [pytest.mark.e2e, pytest.mark.jupyter_ai]

expect.set_options(timeout=30_000)


@pytest.fixture(scope="module")
def jupyter_ai(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterAi]:
    with running_jupyter_ai(tmp_path_factory.mktemp("jupyter-ai-lab")) as running:
        yield running


def test_a_permission_in_the_chat_is_approved_in_the_sidebar_and_only_it_lands(
    jupyter_ai: JupyterAi, page: Page
):
    # Given the person's JupyterLab with the agent's chat open, and a file of hers
    target = jupyter_ai.root / "summary.md"
    target.write_text("# Summary\n\nold numbers\n")
    page.goto(jupyter_ai.server.url("lab/tree/agent.chat"))
    sidebar = Sidebar(page)
    sidebar.open()
    # When the agent asks to rewrite it, then writes it, then writes other content
    call = write_call("b1", target, "old numbers", "new numbers")
    jupyter_ai.run(
        {"ask": call, "options": ALLOW_REJECT},
        {
            "write": {"path": str(target), "content": "# Summary\n\nnew numbers\n"},
            "if_allowed": True,
        },
        {
            "write": {"path": str(target), "content": "# Summary\n\nsecret sauce\n"},
            "if_allowed": True,
        },
    )
    # Then the chat shows the agent's question with its buttons
    chat_allow = page.get_by_role("button", name="Allow", exact=True)
    expect(chat_allow).to_be_visible()
    # And the sidebar shows it under the agent, with the diff of the file on disk
    item = sidebar.items.first
    expect(item).to_be_visible()
    expect(sidebar.part(item, "agent")).to_contain_text(AGENT_NAME)
    expect(item).to_contain_text("new numbers")
    save_screenshot(page, "jupyter-ai-permission-in-chat-and-sidebar", doc=True)
    # When the person approves it in the sidebar, after reading it
    page.wait_for_timeout(HUMAN_PAUSE_S * 1000)
    sidebar.part(item, "approve").click()
    # Then the agent is told allow, the approved text lands, and the other content is refused
    asked, wrote, lie = jupyter_ai.answers(3)
    assert asked["result"]["outcome"]["optionId"] == "allow"
    assert wrote["error"] is None
    assert lie["error"]["data"]["code"] == "APPROVAL_REQUIRED"
    assert target.read_text() == "# Summary\n\nnew numbers\n"
    # And the chat no longer offers its buttons, and nothing waits in the sidebar
    expect(chat_allow).to_be_hidden()
    expect(sidebar.items).to_have_count(0)
