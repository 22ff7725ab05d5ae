"""A card's structured preview is part of what it reports as shown, and checked like the text."""

from __future__ import annotations

import copy

import pytest

from tests.conftest import journal_lines
from tests.kernel.helpers import (
    card_decision,
    let_a_person_read,
    pending_call,
    run,
    value,
    wait_for_state,
)

pytestmark = pytest.mark.kernel

WRITE = """
from pathlib import Path
from jupyter_approvals import ops
Path("notes.txt").write_text("".join(f"line {n}\\n" for n in range(1, 30)))
"""


def test_a_card_that_showed_another_structured_preview_decides_nothing(frontend, state_dir):
    # Given a pending file write, whose card carries a structured preview
    run(frontend, WRITE)
    card = pending_call(frontend, 'ops.write_file("notes.txt", "line 1\\nline two\\n")')
    state = frontend.card(card.model_id).state
    structured = state["structured"]
    assert structured["headline"][0]["label"] == "line to add"
    let_a_person_read(frontend)
    # When the card reports it showed the same text but other counts
    altered = copy.deepcopy(structured)
    altered["headline"][0]["count"] = 0
    card_decision(frontend, card, structured=altered)
    after = wait_for_state(frontend, card, lambda s: s.get("notice")).state
    # Then nothing is decided, the refusal has its code and is journaled
    assert after["state"] == "pending"
    assert "APPROVAL_FINGERPRINT_MISMATCH" in after["notice"]
    codes = [e.get("code") for e in journal_lines(state_dir) if e["event"] == "refused"]
    assert "APPROVAL_FINGERPRINT_MISMATCH" in codes
    # When it reports exactly what the kernel sent it
    card_decision(frontend, card)
    # Then the decision counts, and the call runs once
    assert wait_for_state(frontend, card, lambda s: s["state"] != "pending").state["state"] == (
        "approved"
    )
    assert run(frontend, 'ops.write_file("notes.txt", "line 1\\nline two\\n")').ename is None
    assert value(frontend, 'Path("notes.txt").read_text()') == repr("line 1\nline two\n")
