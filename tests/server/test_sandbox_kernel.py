"""A "Python 3 (sandboxed)" kernel started by a real server: the project as a copy-on-write
overlay, no network, nothing of the person's secrets, its own processes only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from traitlets.config import Config

from jupyter_approvals.server.sandbox.settings import SANDBOX_SETTING

from .conftest import printed

pytestmark = pytest.mark.timeout(120)


async def test_a_write_lands_in_the_overlay_and_the_project_stays_as_it_was(
    sandboxed_kernels, jp_root_dir, jp_serverapp
):
    # Given a project file and a sandboxed kernel
    data = Path(jp_root_dir) / "sales.csv"
    data.write_text("id,total\n1,10\n")
    kernel = await sandboxed_kernels()
    # When its code reads the file, overwrites it and creates another
    shown = printed(
        await kernel.run(
            "from pathlib import Path\n"
            "print(Path('sales.csv').read_text(), end='')\n"
            "Path('sales.csv').write_text('id,total\\n1,0\\n')\n"
            "Path('report.md').write_text('# report\\n')\n"
            "print(Path('sales.csv').read_text(), end='')"
        )
    )
    # Then it read the project, and saw its own write afterwards
    assert shown == "id,total\n1,10\nid,total\n1,0\n"
    # And the project is unchanged on disk: the writes wait in the kernel's upper folder
    assert data.read_text() == "id,total\n1,10\n"
    assert not (Path(jp_root_dir) / "report.md").exists()
    settings = jp_serverapp.web_app.settings[SANDBOX_SETTING]
    upper = settings.kernels_root / kernel.id / "upper"
    assert (upper / "sales.csv").read_text() == "id,total\n1,0\n"
    assert (upper / "report.md").read_text() == "# report\n"


async def test_the_network_is_unreachable(sandboxed_kernels, jp_http_port):
    # Given a sandboxed kernel, and the server listening on loopback
    kernel = await sandboxed_kernels()
    # When its code connects to the server's own port
    port = jp_http_port
    shown = printed(
        await kernel.run(
            "import socket\n"
            "try:\n"
            f"    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
            "    print('connected')\n"
            "except OSError as error:\n"
            "    print(type(error).__name__)\n"
            "import os\n"
            "print(sorted(os.listdir('/sys/class/net')) if os.path.isdir('/sys/class/net') "
            "else 'no /sys')"
        )
    )
    # Then nothing answers: the kernel has a network namespace of its own
    assert "connected" not in shown
    assert shown.splitlines()[0] in {"ConnectionRefusedError", "OSError", "TimeoutError"}


async def test_a_network_call_says_the_network_is_off_and_why(sandboxed_kernels):
    # Given a sandboxed kernel
    kernel = await sandboxed_kernels()
    # When its code fetches a URL, as a data scientist's would
    result = await kernel.run(
        "import urllib.request\nurllib.request.urlopen('https://pypi.org/simple/', timeout=5)"
    )
    # Then the error names the sandbox and what to do, not only the resolver's words
    assert result["status"] == "error"
    assert "the network is off in this sandboxed kernel (jupyter-approvals)" in result["evalue"]
    assert "ask the person" in result["evalue"]


async def test_the_persons_secrets_and_other_processes_are_not_there(
    sandboxed_kernels, jp_serverapp, state_dir, monkeypatch
):
    # Given a server whose environment carries a token, and its runtime folder with its info
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "t0ps3cret")
    runtime = Path(jp_serverapp.runtime_dir)
    state_dir.mkdir(parents=True, exist_ok=True)
    (state_dir / "marker").write_text("state")
    kernel = await sandboxed_kernels()
    # When its code looks for them
    shown = printed(
        await kernel.run(
            "import json, os\n"
            "print(json.dumps({\n"
            f"  'runtime': os.path.exists({str(runtime)!r}),\n"
            f"  'state': os.path.exists({str(state_dir / 'marker')!r}),\n"
            "  'token': 'SOME_SERVICE_TOKEN' in os.environ,\n"
            "  'sandbox': os.environ.get('JUPYTER_APPROVALS_SANDBOX'),\n"
            "  'pids': sorted(int(p) for p in os.listdir('/proc') if p.isdigit()),\n"
            "  'home': os.path.expanduser('~'),\n"
            "  'home_holds': os.listdir(os.path.expanduser('~')),\n"
            "}))"
        )
    )
    found = json.loads(shown)
    # Then none is there: no runtime folder, no state folder, no token in the environment
    assert found["runtime"] is False
    assert found["state"] is False
    assert found["token"] is False
    # And the kernel knows it is sandboxed, sees only its own processes (bubblewrap's init,
    # the kernel) and a private HOME holding only what IPython made in it at start
    assert found["sandbox"] == kernel.id
    assert found["pids"] == [1, 2]
    assert found["home"] != str(Path.home())
    assert set(found["home_holds"]) <= {".ipython", ".cache", ".local"}


async def test_writes_outside_the_project_fail(sandboxed_kernels, tmp_path):
    # Given a sandboxed kernel and a folder outside the project
    outside = tmp_path / "outside"
    outside.mkdir()
    kernel = await sandboxed_kernels()
    # When its code writes there, and into the system
    shown = printed(
        await kernel.run(
            "for target in [" + repr(str(outside / "x.txt")) + ", '/usr/x.txt', '/etc/x']:\n"
            "    try:\n"
            "        open(target, 'w').write('x')\n"
            "        print('wrote', target)\n"
            "    except OSError as error:\n"
            "        print(type(error).__name__)"
        )
    )
    # Then every write fails and nothing is written
    assert "wrote" not in shown
    assert not (outside / "x.txt").exists()


@pytest.fixture
def jp_server_config():
    return Config(
        {
            "ServerApp": {"jpserver_extensions": {"jupyter_approvals": True}},
            "ApprovalsServer": {"kernel_timeout": 3.0},
        }
    )


@pytest.mark.parametrize(
    "jp_server_config",
    [
        Config(
            {
                "ServerApp": {"jpserver_extensions": {"jupyter_approvals": True}},
                "ApprovalsServer": {"sandbox_bwrap": "/nonexistent/bwrap"},
            }
        )
    ],
)
async def test_without_bubblewrap_the_kernel_is_refused_not_started_unsandboxed(
    sandboxed_kernelspec, jp_fetch, jp_serverapp
):
    # Given a server whose configured bwrap does not exist
    # When a sandboxed kernel is asked for over REST
    from tornado.httpclient import HTTPClientError

    with pytest.raises(HTTPClientError) as refused:
        await jp_fetch(
            "api", "kernels", method="POST", body=json.dumps({"name": "python3-sandboxed"})
        )
    # Then it is refused with the code, and no kernel runs
    assert refused.value.code == 503
    message = json.loads(refused.value.response.body)["message"]
    assert message.startswith("[APPROVAL_SANDBOX_UNAVAILABLE] the sandbox is unavailable here")
    assert jp_serverapp.kernel_manager.list_kernel_ids() == []
