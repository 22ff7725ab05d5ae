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


def test_the_sidebar_knows_every_request_outcome_and_no_other():
    from jupyter_approvals.core.journal.requests import REQUEST_OUTCOMES

    found = re.search(
        r"REQUEST_OUTCOMES: readonly string\[\] = \[([^\]]*)\]", TOKENS_TS.read_text()
    )
    assert found is not None
    assert quoted(found.group(1)) == list(REQUEST_OUTCOMES)


def test_the_sidebar_reads_the_cell_metadata_key_the_server_writes():
    found = re.search(r"const METADATA_KEY = '([a-z_]+)'", AGENT_CELLS_TS.read_text())
    assert found is not None
    assert found.group(1) == protocol.CELL_METADATA_KEY


def test_every_reference_to_a_section_of_the_protocol_names_one_that_exists():
    # Given the numbered sections of docs/protocol.md
    protocol_md = (ROOT / "docs" / "protocol.md").read_text()
    sections = set(re.findall(r"^#{2,4} (\d+(?:\.\d+)*)\.? ", protocol_md, flags=re.MULTILINE))
    # When every source, test and document names one ("docs/protocol.md 6.1", "section 4")
    sources = [
        *(ROOT / "jupyter_approvals").rglob("*.py"),
        *(ROOT / "jupyter_approvals" / "views").glob("*.js"),
        *(ROOT / "jupyter_approvals" / "kernel" / "card").glob("*.js"),
        *(ROOT / "labextension" / "src").glob("*.ts"),
        *(ROOT / "tests").rglob("*.py"),
        *(ROOT / "docs").rglob("*.md"),
        ROOT / "README.md",
        ROOT / "CONTRIBUTING.md",
    ]
    reference = re.compile(r"protocol\.md,?\s+(?:section\s+|§)?(\d+(?:\.\d+)*)")
    stale = [
        f"{path.relative_to(ROOT)}: {number}"
        for path in sources
        for number in reference.findall(path.read_text())
        if number not in sections
    ]
    # Then each such section exists
    assert sections >= {"1", "1.11", "4.1", "6.2.2", "7.4"}
    assert stale == []


def test_the_sidebar_renders_the_mime_types_the_kernel_and_server_write():
    # Given the MIME types of the outputs a protected call or held agent code leaves
    sources = {
        protocol.CARD_MIMETYPE: ("cardOutput.ts", "CARD_MIME"),
        protocol.PENDING_MIMETYPE: ("pendingNote.ts", "PENDING_MIME"),
        protocol.HELD_MIMETYPE: ("heldCard.ts", "HELD_MIME"),
    }
    for mimetype, (source, name) in sources.items():
        text = (TOKENS_TS.parent / source).read_text()
        # Then the sidebar's renderer of each names exactly that type
        found = re.search(rf"export const {name} = '([^']+)'", text)
        assert found is not None, source
        assert found.group(1) == mimetype
