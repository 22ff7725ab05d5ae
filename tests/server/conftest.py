"""A real jupyter_server (pytest-jupyter) with the extension enabled, and real kernels in it."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path

import pytest

# pytest-jupyter's fixtures and hooks (jp_fetch, jp_serverapp, async tests on its loop), for
# this directory only: its autouse event-loop fixtures must not reach the browser tests, whose
# Playwright runs a loop of its own.
from pytest_jupyter.jupyter_core import *  # noqa: F403
from pytest_jupyter.jupyter_server import *  # noqa: F403
from traitlets.config import Config

from jupyter_approvals.core.bubblewrap import find_bubblewrap
from jupyter_approvals.core.project import make_git_top_level
from jupyter_approvals.server.sandbox.changes import compute_change_set


def approvals_config(**approvals: object) -> Config:
    """A server with the extension, its kernel timeout short, and ``approvals`` set on
    ``ApprovalsServer``."""
    return Config(
        {
            "ServerApp": {"jpserver_extensions": {"jupyter_approvals": True}},
            "ApprovalsServer": {"kernel_timeout": 3.0, **approvals},
        }
    )


@pytest.fixture
def jp_server_config():
    return approvals_config()


@pytest.fixture
def approvals(jp_serverapp):
    """The loaded extension (``ApprovalsServer``): its ``parts`` are what the handlers use."""
    point = jp_serverapp.extension_manager.extension_points["jupyter_approvals"]
    return point.app


@pytest.fixture(autouse=True)
def _state_dir(tmp_path: Path, monkeypatch) -> Path:
    state = tmp_path / "approvals-state"
    monkeypatch.setenv("JUPYTER_APPROVALS_STATE_DIR", str(state))
    return state


def printed(result: dict) -> str:
    """The text a cell printed (``Kernel.run``'s result), once it ran without error."""
    assert result["status"] == "ok", result
    return "".join(
        m["content"].get("text", "") for m in result["outputs"] if m["msg_type"] == "stream"
    )


class Kernel:
    """A kernel started by the server, with a client to run cells in it (as an agent would)."""

    def __init__(self, serverapp, kernel_id: str) -> None:
        self.id = kernel_id
        self.client = serverapp.kernel_manager.get_kernel(kernel_id).client()
        self.client.start_channels()

    async def run(self, code: str) -> dict:
        """Execute ``code``; return ``{"status", "ename", "evalue", "outputs"}``."""
        outputs: list[dict] = []
        reply = await self.client.execute_interactive(
            code, output_hook=lambda msg: outputs.append(msg), timeout=60
        )
        content = reply["content"]
        return {
            "status": content["status"],
            "ename": content.get("ename"),
            "evalue": content.get("evalue", ""),
            "outputs": outputs,
        }

    async def pending_call(self, code: str) -> dict:
        """Run a protected call that must end pending; return the ApprovalPending details."""
        result = await self.run(
            "import json as _json\ntry:\n"
            + "\n".join("    " + line for line in code.splitlines())
            + "\nexcept ja.ApprovalPending as _p:\n    print(_json.dumps(_p.details))"
        )
        assert result["status"] == "ok", result
        text = "".join(
            m["content"].get("text", "") for m in result["outputs"] if m["msg_type"] == "stream"
        )
        return json.loads(text.strip().splitlines()[-1])

    def stop(self) -> None:
        self.client.stop_channels()


async def until_the_server_saw_it_start(serverapp, kernel: Kernel) -> None:
    """Wait until jupyter_server's own record of the kernel's state has left ``starting``.

    The server follows the kernel's status on an iopub subscription of its own, which can
    join after the status messages of our first request went out (ZeroMQ drops what is
    published before a subscriber joined); then the record stays ``starting`` until the
    kernel publishes again, and the pending list does not ask a kernel the server sees as
    starting. So we ask the kernel for its info again, as JupyterLab's websocket does when it
    connects, until the server saw a status."""
    record = serverapp.kernel_manager.get_kernel(kernel.id)
    for attempt in range(200):
        if getattr(record, "execution_state", None) != "starting":
            return
        if attempt % 10 == 0:
            kernel.client.kernel_info()
        await asyncio.sleep(0.05)
    raise AssertionError(f"the server still sees kernel {kernel.id} as starting after 10 s")


def _kernel_starter(serverapp, root_dir, loop, kernel_name: str):
    """Start kernels of ``kernel_name`` in the server's root (a git project), as JupyterLab
    does, through the session manager (the kernel learns its notebook path); stop them after."""
    make_git_top_level(root_dir)
    started: list[Kernel] = []

    async def start(path: str = "notebook.ipynb") -> Kernel:
        (Path(root_dir) / path).parent.mkdir(parents=True, exist_ok=True)
        session = await serverapp.session_manager.create_session(
            path=path, name=Path(path).name, type="notebook", kernel_name=kernel_name
        )
        kernel = Kernel(serverapp, session["kernel"]["id"])
        await kernel.client.wait_for_ready(timeout=60)
        await until_the_server_saw_it_start(serverapp, kernel)
        started.append(kernel)
        return kernel

    yield start
    for kernel in started:
        kernel.stop()
    loop.run_until_complete(serverapp.kernel_manager.shutdown_all())


@pytest.fixture
def kernels(jp_serverapp, jp_root_dir, jp_asyncio_loop):
    """Start kernels in the server's root (a git project); stop them afterwards."""
    yield from _kernel_starter(jp_serverapp, jp_root_dir, jp_asyncio_loop, "python3")


#: The kernelspec the wheel installs as share/jupyter/kernels/python3-sandboxed.
SANDBOXED_KERNELSPEC = (
    Path(__file__).parents[2] / "jupyter-config" / "kernels" / "python3-sandboxed"
)


@pytest.fixture
def sandboxed_kernelspec(jp_env_jupyter_path) -> Path:
    """The "Python 3 (sandboxed)" kernelspec, installed where the wheel puts it (the test's
    environment data folder, pytest-jupyter hides the real one)."""
    installed = Path(jp_env_jupyter_path) / "kernels" / "python3-sandboxed"
    shutil.copytree(SANDBOXED_KERNELSPEC, installed)
    return installed


@pytest.fixture
def sandboxed_kernels(sandboxed_kernelspec, jp_serverapp, jp_root_dir, jp_asyncio_loop):
    """Start "Python 3 (sandboxed)" kernels in the server's root; stop them afterwards."""
    yield from _kernel_starter(jp_serverapp, jp_root_dir, jp_asyncio_loop, "python3-sandboxed")


@pytest.fixture
def state_dir(_state_dir: Path) -> Path:
    """The approvals state directory of this test's server (agents.json, the journals)."""
    return _state_dir


@pytest.fixture
def overlay(tmp_path: Path):
    """A project and a function that runs a shell script on it inside a bubblewrap overlay
    (as a sandboxed kernel's code would), returning the change set."""
    project, upper, work = tmp_path / "project", tmp_path / "upper", tmp_path / "work"
    for folder in (project, upper, work):
        folder.mkdir()
    bwrap = find_bubblewrap().path

    def run(script: str):
        subprocess.run(
            [
                bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                "--overlay-src", str(project),
                "--overlay", str(upper), str(work), str(project),
                "--unshare-all", "--die-with-parent", "--chdir", str(project),
                "--", "/bin/sh", "-ec", script,
            ],
            check=True,
        )  # fmt: skip
        return compute_change_set(project, upper)

    return project, run
