"""A card names who ran the cell by the name JupyterLab shows for them, from the server's
stamp, when the client's header names nobody (JupyterLab 4 sends no username)."""

from __future__ import annotations

import pytest

from jupyter_approvals.core.protocol import STAMP_KEY
from tests.kernel.helpers import SETUP, run

pytestmark = pytest.mark.kernel


def test_the_card_names_the_stamped_persons_display_name(frontend):
    # Given a client that sends no username, and the server's stamp naming the person
    frontend.client.session.username = ""
    run(frontend, SETUP)
    msg = frontend.client.session.msg(
        "execute_request",
        {
            "code": "save('x', 'x.txt')",
            "silent": False,
            "store_history": True,
            "user_expressions": {},
            "allow_stdin": False,
            "stop_on_error": True,
        },
        metadata={
            "cellId": "cell-a",
            STAMP_KEY: {"sender": "person", "username": "0fa66aa7", "display_name": "Ana Lima"},
        },
    )
    frontend.client.shell_channel.send(msg)
    result = frontend.collect(msg["header"]["msg_id"])
    # When the call asks for approval
    assert result.ename == "ApprovalPending"
    # Then its card names the person as JupyterLab shows them, still marked as claimed
    origin = frontend.cards()[-1].state["origin"]
    assert origin.endswith(", run by Ana Lima (name not verified)"), origin


def test_a_claimed_name_is_shown_on_one_line_with_its_hiding_characters_marked(frontend):
    # Given a client claiming a username with a right-to-left override, a line break and
    # a thousand characters
    frontend.client.session.username = "ana\u202e\nadmin" + "x" * 1000
    run(frontend, SETUP)
    # When its call asks for approval
    assert run(frontend, "save('x', 'x.txt')").ename == "ApprovalPending"
    # Then the card shows the name marked and cut, on the card's one line
    origin = frontend.cards()[-1].state["origin"]
    assert "run by ana⟦U+202E⟧⟦U+000A⟧adminxxx" in origin
    assert "\u202e" not in origin
    assert "\n" not in origin
    assert len(origin) < 300
