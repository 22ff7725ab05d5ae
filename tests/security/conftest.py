"""The security suite's fixtures: one real kernel per module, and a protected target per test.

Starting a kernel costs about half a second, and most attacks do not disturb each other when
each has its own protected function and its own marker file. So a module's tests share one
kernel (``kernel``), and each test gets a :class:`Target`: a protected writer of its own that
writes a marker file in the project when, and only when, it runs. After each test the kernel
is put back: hooks and signal handlers removed, background attackers stopped, and every live
request withdrawn (so the pending limit of one kernel is never reached).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from jupyter_approvals.core.project import STATE_DIR_ENV, make_git_top_level
from jupyter_approvals.testing import Execution, KernelFrontend, Widget
from tests.kernel.helpers import HUMAN_PAUSE_S, run, value, wait_for_state

#: Fixtures of this folder that start a real kernel (their tests are marked ``kernel``).
KERNEL_FIXTURES = frozenset({"kernel", "target", "fresh_kernel"})

#: Names a cell of the suite may use to reach the kernel's approvals from inside.
PRELUDE = """
import jupyter_approvals as ja
from pathlib import Path
from jupyter_approvals.kernel.session import KernelSession
session = KernelSession.current()
attack_log = []
stop_attackers = []
"""

#: Undo what an attack left in the kernel, so the next test starts clean.
CLEANUP = """
import sys as _sys, signal as _signal
_sys.setprofile(None)
_sys.settrace(None)
_signal.setitimer(_signal.ITIMER_REAL, 0)
for _sig in (_signal.SIGALRM, _signal.SIGUSR1):
    _signal.signal(_sig, _signal.SIG_DFL)
for _stop in stop_attackers:
    _stop()
stop_attackers.clear()
attack_log.clear()
for _info in session.store.live():
    try:
        session.store.withdraw(_info.id)
    except ja.ApprovalError:
        pass
"""

#: A protected writer: it writes ``text`` to ``path``; its subject is the file's content.
WRITER = """
@ja.protected("file.write", summary="Write {{path}}",
              subject=lambda text, path: ja.FileContent(path), target="path")
def {name}(text, path):
    Path(path).write_text(text)
    return "wrote " + path
"""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests of this folder that start a real kernel as ``kernel`` (the root conftest
    knows only the shared fixture names)."""
    here = Path(__file__).parent
    for item in items:
        if here not in Path(str(item.path)).parents:
            continue
        if KERNEL_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.kernel)


def journal_entries(state_dir: Path) -> list[dict[str, Any]]:
    """Every line of every journal under ``state_dir``, parsed (none when nothing was written)."""
    entries: list[dict[str, Any]] = []
    for path in sorted((state_dir / "decisions").glob("*.jsonl")):
        entries.extend(json.loads(line) for line in path.read_text().splitlines())
    return entries


def send_comm(fe: KernelFrontend, comm_id: str, data: object, msg_type: str = "comm_msg") -> str:
    """Send one comm message from this frontend, as a browser would; returns its msg_id."""
    content = {"comm_id": comm_id, "data": data}
    if msg_type == "comm_open":
        content["target_name"] = "jupyter_approvals"
    message = fe.client.session.msg(msg_type, content)
    fe.client.shell_channel.send(message)
    return str(message["header"]["msg_id"])


def approve(fe: KernelFrontend, card: Widget, wait: bool = True) -> None:
    """A person reads the card (unless already done), presses Approve, and it is approved."""
    if wait:
        time.sleep(HUMAN_PAUSE_S)
    fe.click(card, "approve")
    after = wait_for_state(fe, card, lambda s: s["state"] != "pending" or s.get("notice"))
    assert after.state["state"] == "approved", after.state


class Target:
    """One test's protected writer in a shared kernel, and what the journal says about it."""

    def __init__(self, fe: KernelFrontend, project: Path, state_dir: Path, name: str) -> None:
        self.fe = fe
        self.project = project
        self.state_dir = state_dir
        self.name = name
        self.marker = project / f"{name}.marker"
        self.card: Widget | None = None
        run(fe, WRITER.format(name=name))

    @property
    def call(self) -> str:
        """The cell code of the protected call."""
        return f"{self.name}('payload', {self.marker.name!r})"

    def ask(self) -> Widget:
        """Make the call; it must end pending. Returns its card."""
        result = run(self.fe, self.call)
        assert result.ename == "ApprovalPending", (result.ename, result.evalue)
        self.card = self.fe.cards()[-1]
        assert self.card.state["summary"] == f"Write {self.marker.name}"
        return self.card

    def ask_and_read(self) -> Widget:
        """Make the call, then wait as long as a person reads before answering."""
        card = self.ask()
        time.sleep(HUMAN_PAUSE_S)
        return card

    @property
    def request_id(self) -> str:
        assert self.card is not None, "ask() first"
        return str(self.card.state["request_id"])

    @property
    def fingerprint(self) -> str:
        assert self.card is not None, "ask() first"
        return str(self.card.state["fingerprint"])

    def again(self) -> Execution:
        """Call it again (what an agent does after asking)."""
        return run(self.fe, self.call)

    def still_waits(self) -> bool:
        """The call is still pending: calling it again asks again and runs nothing."""
        return self.again().ename == "ApprovalPending" and not self.ran()

    def ran(self) -> bool:
        """Whether the protected function ever ran (its marker file exists)."""
        return self.marker.exists()

    def status(self) -> str:
        """The request's status as the kernel's store holds it."""
        return value(self.fe, f"session.store.get({self.request_id!r}).status.value").strip("'")

    def journal(self) -> list[dict[str, Any]]:
        """The journal lines of this request, oldest first."""
        return [
            e for e in journal_entries(self.state_dir) if e.get("request_id") == self.request_id
        ]

    def events(self) -> list[str]:
        return [e["event"] for e in self.journal()]

    def refusals(self) -> list[str]:
        """The codes of this request's refusals in the journal."""
        return [str(e.get("code")) for e in self.journal() if e["event"] == "refused"]

    def card_notice(self, timeout: float = 10) -> str:
        """Wait until the card shows a notice (a refusal) and return it."""
        assert self.card is not None
        return str(
            wait_for_state(self.fe, self.card, lambda s: s.get("notice"), timeout).state["notice"]
        )


@pytest.fixture(scope="module")
def module_dirs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(project, state dir, IPython dir) of one module's kernel."""
    base = tmp_path_factory.mktemp("security")
    project = base / "project"
    make_git_top_level(project)
    ipython = base / "ipython"
    ipython.mkdir()
    return project, base / "state", ipython


@pytest.fixture(scope="module")
def kernel(module_dirs: tuple[Path, Path, Path]) -> Iterator[KernelFrontend]:
    """One real ipykernel for the module, driven from outside like a browser."""
    project, state, ipython = module_dirs
    env = {STATE_DIR_ENV: str(state), "IPYTHONDIR": str(ipython)}
    with KernelFrontend.start(cwd=project, env=env) as fe:
        assert run(fe, PRELUDE).status == "ok"
        yield fe


@pytest.fixture
def target(
    kernel: KernelFrontend, module_dirs: tuple[Path, Path, Path], request: pytest.FixtureRequest
) -> Iterator[Target]:
    """This test's protected writer in the module's kernel; the kernel is cleaned afterwards."""
    project, state, _ = module_dirs
    name = "w_" + re.sub(r"\W", "_", request.node.name)[:80]
    yield Target(kernel, project, state, name)
    result = run(kernel, CLEANUP)
    assert result.status == "ok", result.evalue
    kernel.pump(0.2)


@pytest.fixture
def fresh_kernel(
    tmp_path: Path,
) -> Iterator[tuple[KernelFrontend, Path, Path]]:
    """A kernel of its own, for attacks that must come before approvals start or that restart
    it: (frontend, project, state dir). Nothing has been imported in it yet."""
    project = tmp_path / "project"
    make_git_top_level(project)
    ipython = tmp_path / "ipython"
    ipython.mkdir()
    state = tmp_path / "state"
    env = {STATE_DIR_ENV: str(state), "IPYTHONDIR": str(ipython)}
    with KernelFrontend.start(cwd=project, env=env) as fe:
        yield fe, project, state


@contextmanager
def started(
    tmp_path: Path, config: str | None = None, env: dict[str, str] | None = None
) -> Iterator[tuple[KernelFrontend, Path]]:
    """A kernel of its own whose IPython profile holds ``config`` and whose environment adds
    ``env``: (frontend, IPython dir)."""
    project = tmp_path / "project"
    make_git_top_level(project)
    ipython = tmp_path / "ipython"
    (ipython / "profile_default").mkdir(parents=True)
    if config is not None:
        (ipython / "profile_default" / "ipython_kernel_config.py").write_text(config)
    kernel_env = {
        STATE_DIR_ENV: str(tmp_path / "state"),
        "IPYTHONDIR": str(ipython),
        **(env or {}),
    }
    with KernelFrontend.start(cwd=project, env=kernel_env) as fe:
        yield fe, ipython
