"""A jupyter server with (or without) the extension in a process of its own, for benchmarks."""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    """A TCP port nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServerProcess:
    """``jupyter_server`` on a free port with a token of its own, answering once started."""

    def __init__(
        self,
        base: Path,
        root: Path,
        *,
        extension: bool = True,
        extra_args: tuple[str, ...] = (),
        python: str = sys.executable,
    ) -> None:
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.state = base / "state"
        self.runtime = base / "runtime"
        root.mkdir(parents=True, exist_ok=True)
        env = {
            **os.environ,
            "JUPYTER_RUNTIME_DIR": str(self.runtime),
            "JUPYTER_CONFIG_DIR": str(base / "config"),
            "JUPYTER_APPROVALS_STATE_DIR": str(self.state),
        }
        enabled = "True" if extension else "False"
        self.process = subprocess.Popen(
            [
                python,
                "-m",
                "jupyter_server",
                "--no-browser",
                f"--port={self.port}",
                f"--IdentityProvider.token={self.token}",
                f"--ServerApp.root_dir={root}",
                f"--ServerApp.jpserver_extensions={{'jupyter_approvals': {enabled}}}",
                "--allow-root",
                *extra_args,
            ],
            env=env,
            # In the folder it serves, as a person starts it: a kernel started without a path
            # starts in the server's working directory, and jupyter-collaboration keeps its
            # room store there (never in this repository).
            cwd=root,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                self.request("api/status")
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def request(self, path: str, method: str = "GET", body: bytes | None = None) -> dict:
        """The JSON answer of one request made with the server's token."""
        req = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/{path}",
            data=body,
            method=method,
            headers={"Authorization": f"token {self.token}"},
        )
        with urllib.request.urlopen(req, timeout=60) as response:
            return json.loads(response.read() or b"{}")

    def stop(self) -> None:
        """End the server process."""
        self.process.terminate()
        self.process.wait(30)
