"""A real agent in a sandboxed kernel: jupyter-mcp-server 2.2.4, with a token of its own, does
an analysis with no approval at all, and what it wrote waits as one change set that a person
applies (or discards) in the sidebar in headless Chromium.

The server runs with ``c.ApprovalsServer.agent_code = "sandbox"`` (the default, set here all
the same) in the agent virtualenv
(``AGENT_PYTHON``, made by ``make test``, with pandas and matplotlib for the analysis).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from jupyter_approvals.core.agents import AgentRegistry, registry_path
from tests.e2e.lab import LabServer, Sidebar, save_screenshot
from tests.e2e.test_mcp_agent import McpAgent, agent_python

pytestmark = [pytest.mark.e2e, pytest.mark.sidebar]

expect.set_options(timeout=30_000)

SALES = "region,month,units\nnorth,1,10\nnorth,2,12\nsouth,1,7\nsouth,2,\nsouth,3,9\n"
ANALYSIS = """
import pandas as pd
import matplotlib
matplotlib.use('Agg')
sales = pd.read_csv('sales.csv')
print(sales.shape)
by_region = sales.groupby('region')['units'].sum()
print(by_region.to_dict())
by_region.plot(kind='bar')
"""
WRITES = """
clean = sales.dropna()
clean.to_csv('sales_clean.csv', index=False)
with open('report.md', 'w') as report:
    report.write('# Units by region\\n\\n' + by_region.to_string() + '\\n')
print('wrote', len(clean), 'rows')
"""


@pytest.fixture(scope="module")
def sandbox_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """JupyterLab with jupyter-collaboration, agent code sandboxed, from the agent virtualenv."""
    server = LabServer.start(
        tmp_path_factory.mktemp("sandbox-lab"),
        log_name="sandbox-lab",
        python=agent_python(),
        extra_args=["--ApprovalsServer.agent_code=sandbox"],
    )
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def agent(sandbox_lab: LabServer) -> Iterator[McpAgent]:
    registry = AgentRegistry(registry_path(sandbox_lab.state_dir))
    _, token = registry.add("analyst")
    client = McpAgent(agent_python(), sandbox_lab.base_url, token)
    try:
        yield client
    finally:
        client.close()
        registry.remove("analyst")
        sandbox_lab.shutdown_kernels()


def analyse_and_write(lab: LabServer, agent: McpAgent, notebook: str) -> None:
    """The agent's session: open a notebook, analyse sales.csv, write two files."""
    (lab.root / "sales.csv").write_text(SALES)
    opened = agent.call(
        "use_notebook", notebook_name=notebook, notebook_path=f"{notebook}.ipynb", mode="create"
    )
    assert not opened["is_error"], opened
    analysed = agent.call("insert_execute_code_cell", cell_index=-1, cell_source=ANALYSIS)
    # It ran at once: no approval asked, its output is the agent's
    assert "APPROVAL_" not in analysed["all_text"], analysed
    assert "(5, 3)" in analysed["all_text"], analysed
    assert "'north': 22.0" in analysed["all_text"], analysed
    wrote = agent.call("insert_execute_code_cell", cell_index=-1, cell_source=WRITES)
    assert "wrote 4 rows" in wrote["all_text"], wrote
    # Nothing of it is in the project yet: it waits in the sandbox's overlay
    assert not (lab.root / "sales_clean.csv").exists()
    assert not (lab.root / "report.md").exists()
    assert lab.pending() == []


def test_an_agent_analyses_with_no_approval_and_the_person_applies_its_files(
    sandbox_lab: LabServer, agent: McpAgent, page: Page
):
    # Given jupyter-mcp-server that analysed sales.csv and wrote a cleaned CSV and a report
    analyse_and_write(sandbox_lab, agent, "analysis")
    # When the person opens the sidebar
    page.goto(sandbox_lab.url("lab"))
    Sidebar(page).open()
    change_set = page.locator('[data-testid="jpa-changes-set"]')
    # Then the change set lists exactly the two new files
    expect(change_set).to_be_visible()
    expect(change_set.locator('[data-testid="jpa-changes-counts"]')).to_have_text(
        "2 files: 2 to create"
    )
    save_screenshot(page, "sandboxed-agent-change-set")
    # When the person reads the report's content and applies
    files = change_set.locator('[data-testid="jpa-changes-file"]')
    files.nth(0).locator('[data-testid="jpa-changes-show"]').click()
    expect(change_set.locator('[data-testid="jpa-changes-preview"]').nth(0)).to_contain_text(
        "Units by region"
    )
    apply = change_set.locator('[data-testid="jpa-changes-apply"]')
    expect(apply).to_be_enabled()
    apply.click()
    # Then both files are on disk, as the agent wrote them
    expect(page.locator('[data-testid="jpa-changes-note"]')).to_contain_text("2 applied")
    assert (sandbox_lab.root / "sales_clean.csv").read_text().count("\n") == 5
    assert (sandbox_lab.root / "report.md").read_text().startswith("# Units by region")
    # And the journal records the person's decision on the kernel's change set
    events = [
        line["event"]
        for line in sandbox_lab.journal_lines()
        if line.get("action") == "sandbox.changes"
    ]
    assert events == ["approved", "executed"]


def test_the_person_discards_what_the_agent_wrote(
    sandbox_lab: LabServer, agent: McpAgent, page: Page
):
    # Given the same analysis in a new notebook, writing into a project without those files
    for name in ("sales_clean.csv", "report.md"):
        (sandbox_lab.root / name).unlink(missing_ok=True)
    analyse_and_write(sandbox_lab, agent, "second")
    # When the person discards the change set in the sidebar
    page.goto(sandbox_lab.url("lab"))
    Sidebar(page).open()
    discard = page.locator('[data-testid="jpa-changes-set"] [data-testid="jpa-changes-discard"]')
    expect(discard).to_be_enabled()
    discard.click()
    # Then nothing reached the project
    expect(page.locator('[data-testid="jpa-changes-note"]')).to_contain_text("2 discarded")
    assert not (sandbox_lab.root / "sales_clean.csv").exists()
    assert not (sandbox_lab.root / "report.md").exists()
