"""Driving a real JupyterLab page the way a person does: open a notebook, run a cell, read it.

Everything here waits for what the page shows (an execution count, a card state), never for a
fixed time, except :func:`pause_like_a_person`, which is the person's reading time.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, expect

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "notebooks" / "quickstart.ipynb"
ARTIFACTS = REPO / ".ci" / "artifacts" / "e2e"
#: Where every browser test writes its screenshots (gitignored); never into the tree.
SCREENSHOTS = REPO / "build" / "screenshots"
#: The documentation's images, and where the tests write theirs: ``make screenshots`` runs the
#: tests that take them and copies SCREENSHOTS / "docs" into DOC_IMAGES (nothing else does).
DOC_IMAGES = REPO / "docs" / "images"
DOC_SCREENSHOT = DOC_IMAGES / "card.png"
DOC_SIDEBAR_SCREENSHOT = DOC_IMAGES / "sidebar.png"

#: The file the quickstart's protected call writes, relative to the notebook.
TARGET = Path("quickstart-output") / "sales.csv"
EXPECTED_CSV = b"region,units\r\nnorth,120\r\nsouth,95\r\neast,143\r\n"  # csv.writer's lines
#: The countdown of the card and of a sidebar item.
#: A countdown says what it counts: the time to answer, then the time to use the approval.
TIME_LEFT = re.compile(r"^answer within \d+:[0-5]\d$")
USE_WITHIN = re.compile(r"^use within \d+:[0-5]\d$")

#: Debian's chromium; ``playwright install`` browsers are not used.
CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",  # containers often have a tiny /dev/shm
]

#: The notebook shown in the active JupyterLab tab (a restored workspace may hold others).
NOTEBOOK = ".jp-NotebookPanel:not(.lm-mod-hidden)"
CARD = '[data-testid="jpa-card"]'

#: How long a person reads the card before answering; the kernel counts answers sooner than
#: 1 s after the card was displayed as auto-answered.
HUMAN_PAUSE_S = 1.3

#: JupyterLab user settings for the test server: every cell attached to the DOM (no
#: virtualised scrolling to fight), and no requests to the news feed.
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}


def venv_python(variable: str, needed_by: str, holding: str) -> str:
    """The Python of the virtualenv that environment ``variable`` names (``make test`` makes
    it); fails the test, saying what to do, when it is not set or does not exist."""
    python = os.environ.get(variable, "")
    if not python or not Path(python).exists():
        pytest.fail(
            f"{needed_by} needs {variable}, the Python of a virtualenv with {holding} (run "
            "`make test`, which makes it)",
            pytrace=False,
        )
    return python


def chromium_path() -> str | None:
    """The system Chromium to drive (``CHROMIUM_PATH`` overrides), if installed."""
    override = os.environ.get("CHROMIUM_PATH")
    if override:
        return override
    for candidate in CHROMIUM_CANDIDATES:
        if Path(candidate).exists():
            return candidate
    return shutil.which("chromium")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LabServer:
    """A running ``jupyter lab`` serving ``root``, writing its journal under ``state_dir``."""

    root: Path
    state_dir: Path
    port: int
    token: str
    process: subprocess.Popen[bytes]
    log_path: Path
    base: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def runtime_dir(self) -> Path:
        """Where the server writes its kernels' connection files (``kernel-<id>.json``)."""
        return self.base / "jupyter-runtime"

    @property
    def ipython_dir(self) -> Path:
        """The IPYTHONDIR of the server's kernels: their profile, so their configuration."""
        return self.base / "ipython"

    def url(self, path: str) -> str:
        # ``reset`` starts from an empty workspace: only the notebook asked for is open.
        return f"{self.base_url}/{path}?token={self.token}&reset"

    def api(self, path: str, method: str = "GET", body: bytes | None = None) -> bytes:
        request = urllib.request.Request(
            f"{self.base_url}{path}",
            data=body,
            method=method,
            headers={"Authorization": f"token {self.token}"},
        )
        with urllib.request.urlopen(request, timeout=5) as response:
            return bytes(response.read())

    def api_json(self, path: str, method: str = "GET") -> Any:
        body = self.api(path, method)
        return json.loads(body) if body else None

    def sessions(self) -> list[dict[str, Any]]:
        """The server's sessions (``GET api/sessions``): which notebook runs in which kernel."""
        return list(self.api_json("/api/sessions"))

    def kernel_ids(self) -> list[str]:
        return [kernel["id"] for kernel in self.api_json("/api/kernels")]

    def pending(self) -> list[dict[str, Any]]:
        """Every kernel's pending requests, as the sidebar gets them (``GET pending``)."""
        return list(self.api_json("/jupyter-approvals/api/pending")["pending"])

    def decide_held(self, item: dict[str, Any], decision: str) -> dict[str, Any]:
        """Decide a request held at the server as the person, over REST (its ``decide_url``)."""
        body = json.dumps({"decision": decision, "fingerprint": item["fingerprint"]})
        answer = self.api(f"/{item['decide_url']}", "POST", body.encode())
        return dict(json.loads(answer))

    def shutdown_kernels(self) -> None:
        """End every session and kernel, so the next test sees only its own requests (the
        sidebar lists every running kernel's, and a closed tab leaves its kernel running)."""
        for session in self.sessions():
            with contextlib.suppress(urllib.error.HTTPError):
                self.api(f"/api/sessions/{session['id']}", method="DELETE")
        for kernel_id in self.kernel_ids():
            with contextlib.suppress(urllib.error.HTTPError):
                self.api(f"/api/kernels/{kernel_id}", method="DELETE")

    @contextlib.contextmanager
    def kernel_config(self, **settings: float) -> Iterator[Path]:
        """``c.ApprovalsConfig.<name> = <value>`` in the kernels' IPython profile while the
        block runs; it applies to kernels started inside the block. The file is removed after.
        """
        path = self.ipython_dir / "profile_default" / "ipython_kernel_config.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [f"c.ApprovalsConfig.{name} = {value!r}" for name, value in settings.items()]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        try:
            yield path
        finally:
            path.unlink(missing_ok=True)

    @classmethod
    def start(
        cls,
        base: Path,
        extra_args: Sequence[str] = (),
        log_name: str = "jupyter-lab",
        python: str = sys.executable,
    ) -> LabServer:
        """Start JupyterLab on a free port with config, runtime and state dirs under ``base``.

        ``extra_args`` are added to its command line; ``log_name`` names its log in the
        artifacts; ``python`` is the interpreter of the environment it runs in.
        """
        root = base / "root"
        state_dir = base / "state"  # outside the root: the journal must not be in a project
        config_dir = base / "jupyter-config"
        for directory in (root, state_dir, config_dir):
            directory.mkdir(parents=True, exist_ok=True)
        settings_dir = config_dir / "lab" / "user-settings"
        for name, values in LAB_SETTINGS.items():
            path = settings_dir / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values))
        env = {
            **os.environ,
            # Isolated: config, runtime, per-user data, IPython profile, lab settings, workspaces.
            # Not isolated: the venv's share/jupyter (anywidget and the widget manager
            # labextensions, the native python3 kernel), which jupyter finds via sys.prefix.
            "JUPYTER_CONFIG_DIR": str(config_dir),
            "JUPYTER_RUNTIME_DIR": str(base / "jupyter-runtime"),
            "JUPYTER_DATA_DIR": str(base / "jupyter-data"),
            "JUPYTERLAB_SETTINGS_DIR": str(settings_dir),
            "JUPYTERLAB_WORKSPACES_DIR": str(base / "lab-workspaces"),
            "IPYTHONDIR": str(base / "ipython"),
            "JUPYTER_APPROVALS_STATE_DIR": str(state_dir),
        }
        env.pop("JUPYTER_PATH", None)
        port = free_port()
        token = secrets.token_hex(16)
        command = [
            python,
            "-m",
            "jupyterlab",
            "--no-browser",
            f"--port={port}",
            "--ServerApp.port_retries=0",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.token={token}",
            f"--ServerApp.root_dir={root}",
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            command.append("--allow-root")  # containers and CI runners often run as root
        command.extend(extra_args)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        log_path = ARTIFACTS / f"{log_name}.log"
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                command,
                cwd=root,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # a terminal's Ctrl-C goes to pytest, which stops it
            )
        server = cls(root, state_dir, port, token, process, log_path, base)
        try:
            server.wait_until_answering()
        except BaseException:
            server.stop()
            raise
        return server

    def wait_until_answering(self, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"jupyter lab exited with {self.process.returncode}; see {self.log_path}"
                )
            try:
                self.api("/api/status")
                self.api("/lab")
                return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.2)
        raise TimeoutError(f"jupyter lab did not answer in {timeout} s; see {self.log_path}")

    def stop(self) -> None:
        """Shut the server down; it shuts its kernels down. Kill it if it hangs (its kernels
        then exit on their own: ipykernel watches its parent process)."""
        if self.process.poll() is not None:
            return
        try:
            self.api("/api/shutdown", method="POST")
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)

    def journal_lines(self) -> list[dict[str, Any]]:
        lines: list[dict[str, Any]] = []
        for path in sorted((self.state_dir / "decisions").glob("*.jsonl")):
            lines.extend(json.loads(line) for line in path.read_text().splitlines())
        return lines

    def events_of(self, request_id: str) -> list[dict[str, Any]]:
        """The journal lines of one request, in the order they were written."""
        return [line for line in self.journal_lines() if line.get("request_id") == request_id]


def fresh_quickstart(directory: Path) -> Path:
    """A copy of the quickstart notebook as a person gets it before running it: no outputs.

    The stored outputs hold a card of a request that no longer exists (and its widget state),
    and stored execution counts would make "[n]:" ambiguous, so both are cleared.
    """
    directory.mkdir(parents=True, exist_ok=True)
    notebook = json.loads(QUICKSTART.read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    notebook["metadata"].pop("widgets", None)
    path = directory / QUICKSTART.name
    path.write_text(json.dumps(notebook, indent=1), encoding="utf-8")
    return path


@dataclass
class QuickstartCells:
    """Where the quickstart's steps are, found by their code (cell indices in the notebook)."""

    setup: list[int]
    first_call: int
    agent_view: int
    call_again: int

    @classmethod
    def of(cls, path: Path) -> QuickstartCells:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]

        def code(index: int) -> str:
            return "".join(cells[index]["source"]) if cells[index]["cell_type"] == "code" else ""

        def find(predicate: Callable[[str], bool], after: int = -1) -> int:
            for index in range(after + 1, len(cells)):
                if predicate(code(index)):
                    return index
            raise AssertionError("the quickstart notebook no longer has the expected cells")

        call = "save_csv(rows, str(target))"
        first_call = find(lambda src: call in src and "rows = [" in src)
        setup = [i for i in range(first_call) if code(i).strip()]
        agent_view = find(lambda src: 'pending.details["fingerprint"]' in src, first_call)
        call_again = find(
            lambda src: [line for line in src.splitlines() if not line.startswith("#")] == [call],
            first_call,
        )
        return cls(setup, first_call, agent_view, call_again)


@dataclass
class NotebookPage:
    """One notebook open in JupyterLab, with the cells run so far counted."""

    page: Page
    runs: int = 0
    console: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @classmethod
    def open(cls, page: Page, server: LabServer, notebook: Path) -> NotebookPage:
        opened = cls(page)
        page.on("console", lambda msg: opened.console.append(f"{msg.type}: {msg.text}"))
        page.on("pageerror", lambda exc: opened.errors.append(str(exc)))
        relative = notebook.relative_to(server.root).as_posix()
        page.goto(server.url(f"lab/tree/{relative}"))
        expect(opened.cells.first).to_be_visible(timeout=60_000)
        # The notebook's kernel is started, connected and idle. (The toolbar's execution
        # indicator says "idle" before there is any kernel, and a cell run then does nothing;
        # the status bar names the kernel only once it exists.)
        expect(page.get_by_title(f"Change kernel for {notebook.name}")).to_have_text(
            re.compile(r"^(?!No Kernel).+ \| Idle$"), timeout=60_000
        )
        return opened

    @property
    def cells(self) -> Locator:
        return self.page.locator(f"{NOTEBOOK} .jp-Notebook .jp-Notebook-cell")

    def cell(self, index: int) -> Locator:
        return self.cells.nth(index)

    def output(self, index: int) -> Locator:
        return self.cell(index).locator(".jp-OutputArea")

    def card(self, index: int) -> Locator:
        return self.cell(index).locator(CARD)

    def run(self, index: int, timeout: float = 60_000) -> None:
        """Select a cell, press Shift+Enter, and wait until the kernel has finished it."""
        prompt = self.cell(index).locator(".jp-InputPrompt")
        prompt.click()  # selects the cell
        self.page.keyboard.press("Escape")  # command mode
        self.page.keyboard.press("Shift+Enter")
        self.runs += 1
        # "[n]:" replaces "[*]:" once the kernel has replied; every output arrived before that.
        expect(prompt).to_have_text(f"[{self.runs}]:", timeout=timeout)

    def run_all(self, indices: list[int]) -> None:
        for index in indices:
            self.run(index)

    def run_new_cell(self, code: str, timeout: float = 60_000, wait: bool = True) -> int:
        """Add a code cell with ``code`` at the end of the notebook, as a person does (B in
        command mode, then type), run it, and return its index; with ``wait=False``, without
        waiting for the kernel to finish it."""
        index = self.cells.count()
        self.cell(index - 1).locator(".jp-InputPrompt").click()
        self.page.keyboard.press("Escape")  # command mode
        self.page.keyboard.press("b")  # insert a cell below and select it
        expect(self.cells).to_have_count(index + 1)
        self.page.keyboard.press("Enter")  # edit mode
        editor = self.cell(index).locator(".cm-content")
        expect(editor).to_be_focused()
        # Inserted as typed text, but without the editor's auto-closed brackets and quotes.
        self.page.keyboard.insert_text(code)
        expect(editor).to_have_text(code)
        self.page.keyboard.press("Shift+Enter")
        self.runs += 1
        if wait:
            prompt = self.cell(index).locator(".jp-InputPrompt")
            expect(prompt).to_have_text(f"[{self.runs}]:", timeout=timeout)
        return index

    def close(self, notebook: Path) -> None:
        """Close the notebook's tab (saving it when asked); its kernel keeps running."""
        tab_selector = f'.lm-DockPanel-tabBar .lm-TabBar-tab[title*="{notebook.name}"]'
        tab = self.page.locator(tab_selector)
        tab.locator(".lm-TabBar-tabCloseIcon").click()
        # A notebook with new outputs asks whether to save it first; wait for that question
        # or for the tab to go.
        self.page.wait_for_function(
            "sel => !!document.querySelector('.jp-Dialog') || !document.querySelector(sel)",
            arg=tab_selector,
        )
        save = self.page.locator(".jp-Dialog").get_by_role("button", name="Save", exact=True)
        if save.count():
            save.click()
        expect(tab).to_have_count(0)
        expect(self.page.locator(NOTEBOOK)).to_have_count(0)


class Sidebar:
    """The Approvals sidebar as a person sees it: the shield tab, its badge, the items."""

    TAB = 'li.lm-TabBar-tab[data-id="jupyter-approvals-sidebar"]'

    def __init__(self, page: Page) -> None:
        self.page = page
        self.tab = page.locator(f".jp-SideBar.jp-mod-left {self.TAB}")
        self.panel = page.locator('[data-testid="jpa-sidebar"]')
        self.badge = self.tab.locator('[data-testid="jpa-sidebar-badge"]')
        self.items = self.panel.locator('[data-testid="jpa-sidebar-item"]')

    def open(self) -> Locator:
        """Click the shield tab unless the panel is open already; return the panel."""
        expect(self.tab).to_be_visible()
        if self.tab.get_attribute("aria-selected") != "true":
            self.tab.click()
        expect(self.tab).to_have_attribute("aria-selected", "true")
        expect(self.panel).to_be_visible()
        return self.panel

    def item(self, request_id: str) -> Locator:
        return self.panel.locator(
            f'[data-testid="jpa-sidebar-item"][data-request-id="{request_id}"]'
        )

    def part(self, item: Locator, name: str) -> Locator:
        """One element of an item, by its ``jpa-sidebar-<name>`` test id."""
        return item.locator(f'[data-testid="jpa-sidebar-{name}"]')

    def expect_badge(self, count: int, timeout: float | None = None) -> None:
        """The badge shows ``count``; with nothing pending it is hidden."""
        expect(self.badge).to_have_attribute("data-count", str(count), timeout=timeout)
        if count:
            expect(self.badge).to_be_visible(timeout=timeout)
            expect(self.badge).to_have_text(str(count) if count <= 99 else "99+")
        else:
            expect(self.badge).to_be_hidden(timeout=timeout)

    def record_verdicts(self) -> None:
        """Start keeping every text the items' verdict lines show. A verdict lasts until the
        next poll removes the decided item (up to a second), so it is read from this record."""
        self.page.evaluate(VERDICT_RECORDER)

    def verdicts_seen(self) -> list[dict[str, str]]:
        return list(self.page.evaluate("() => window.__jpaVerdicts || []"))


#: Page script: record each verdict line's text as it is set, with its row's request id.
VERDICT_RECORDER = """() => {
  if (window.__jpaVerdicts) { return; }
  const seen = (window.__jpaVerdicts = []);
  const note = node => {
    const verdict = node.closest && node.closest('[data-testid="jpa-sidebar-verdict"]');
    if (verdict && verdict.textContent) {
      const item = verdict.closest('[data-testid="jpa-sidebar-item"]');
      seen.push({
        request_id: item ? item.dataset.requestId : '',
        state: verdict.dataset.verdict || '',
        text: verdict.textContent
      });
    }
  };
  new MutationObserver(records => {
    for (const record of records) {
      const node = record.target.nodeType === 1 ? record.target : record.target.parentElement;
      if (node) { note(node); }
    }
  }).observe(document.body, { subtree: true, childList: true, characterData: true });
}"""


def save_screenshot(
    target: Page | Locator, name: str, *, doc: bool = False, doc_path: Path = DOC_SCREENSHOT
) -> Path:
    """Save a screenshot as ``build/screenshots/<name>.png``; with ``doc``, also as the
    documentation's image ``doc_path`` (by default the card's) stands for, under
    ``build/screenshots/docs/``, for ``make screenshots`` to copy into docs/images."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    if isinstance(target, Page):
        target.screenshot(path=str(path))
    else:
        target.scroll_into_view_if_needed()
        target.screenshot(path=str(path), animations="disabled")
    if doc:
        doc_copy = SCREENSHOTS / "docs" / doc_path.relative_to(DOC_IMAGES)
        doc_copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, doc_copy)
    return path


def pause_like_a_person(since: float) -> None:
    """Let a person's reading time pass since the card became visible (monotonic seconds)."""
    remaining = HUMAN_PAUSE_S - (time.monotonic() - since)
    if remaining > 0:
        time.sleep(remaining)


FINGERPRINT = re.compile(r"sha256:[0-9a-f]{64}")
#: The quiet line under a card whose call stopped to ask (docs/protocol.md 4.2).
PENDING_NOTE = "[data-testid='jpa-pending-note']"
#: An error output, shown in red.
ERROR_OUTPUT = ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"


def request_id_shown(nb: NotebookPage, cell: int) -> str:
    """The request of the card in the cell's output, after checking that the stopped call
    left one quiet line under it and no red error."""
    output = nb.output(cell)
    expect(output.locator(PENDING_NOTE)).to_have_text(
        re.compile(r"^Stopped before \S+ ran: it needs a person's approval")
    )
    expect(output.locator(ERROR_OUTPUT)).to_have_count(0)
    request_id = nb.card(cell).get_attribute("data-request-id")
    assert request_id is not None
    assert re.fullmatch(r"[0-9a-f]{16}", request_id), request_id
    return request_id


def expect_rejected_call(
    nb: NotebookPage,
    cell: int,
    server: LabServer,
    notebook: Path,
    request_id: str,
    reason: str,
    channel: str,
) -> None:
    """Run the rejected call again: its error carries the reason, nothing was written, and
    the journal holds the rejection (from ``channel``, with the reason) and no run."""
    nb.run(cell)
    output = nb.output(cell)
    expect(output).to_contain_text("ApprovalRejected")
    expect(output).to_contain_text(reason)
    assert not (notebook.parent / TARGET).exists()
    events = {line["event"]: line for line in server.events_of(request_id)}
    assert events["rejected"]["channel"] == channel
    assert events["rejected"]["reason"] == reason
    assert events["rejected"]["latency_ms"] >= 1000
    assert "executed" not in events
    assert nb.errors == []
