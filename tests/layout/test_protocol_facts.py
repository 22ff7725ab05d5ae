"""The copies of protocol facts in other languages say what core.protocol says."""

from __future__ import annotations

import re
from pathlib import Path

from jupyter_approvals.core import protocol
from jupyter_approvals.core.journal.line import EVENTS

ROOT = Path(__file__).resolve().parents[2]
CARD_JS = ROOT / "jupyter_approvals" / "kernel" / "card" / "card.js"
TOKENS_TS = ROOT / "labextension" / "src" / "tokens.ts"
AGENT_CELLS_TS = ROOT / "labextension" / "src" / "agentCells.ts"


def quoted(text: str) -> list[str]:
    return re.findall(r"""["']([a-z_]+)["']""", text)


def test_the_card_view_reports_exactly_the_shown_fields():
    # Given the list the card's view sends back as what it displayed
    found = re.search(r"const SHOWN = \[([^\]]*)\]", CARD_JS.read_text())
    assert found is not None
    # Then it is the kernel's list, in order
    assert tuple(quoted(found.group(1))) == protocol.SHOWN_FIELDS


def test_the_sidebar_knows_every_journal_event_and_no_other():
    found = re.search(r"JOURNAL_EVENTS: readonly string\[\] = \[([^\]]*)\]", TOKENS_TS.read_text())
    assert found is not None
    assert sorted(quoted(found.group(1))) == sorted(protocol.JOURNAL_EVENTS)
    # And the journal writes exactly these
    assert EVENTS == protocol.JOURNAL_EVENTS


def test_the_sidebar_reads_the_cell_metadata_key_the_server_writes():
    found = re.search(r"const METADATA_KEY = '([a-z_]+)'", AGENT_CELLS_TS.read_text())
    assert found is not None
    assert found.group(1) == protocol.CELL_METADATA_KEY
