"""Shared steps of the fault tests: whole-line checks of a journal, and a jupyter server in a
process of its own (so a test can stop it and start another on the same state)."""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from jupyter_approvals.core.journal.reader import read_entries


def journal_files(state_dir: Path) -> list[Path]:
    return sorted((state_dir / "decisions").glob("*.jsonl"))


def whole_lines(path: Path) -> list[dict[str, Any]]:
    """Every line of ``path`` parsed; fails on a torn or otherwise broken line, and checks
    that the reader counts no corrupt line either."""
    raw = path.read_bytes()
    assert raw.endswith(b"\n"), f"{path} ends inside a line: {raw[-80:]!r}"
    entries = [json.loads(line) for line in raw.decode("utf-8").splitlines()]
    assert read_entries(path, limit=10_000).corrupt_lines == 0
    return entries


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """``jupyter server`` with the extension, its token, root and state dir; stoppable."""

    def __init__(self, base: Path, root: Path, state: Path) -> None:
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.runtime = base / "runtime"
        env = {
            **os.environ,
            "JUPYTER_RUNTIME_DIR": str(self.runtime),
            "JUPYTER_CONFIG_DIR": str(base / "config"),
            "JUPYTER_DATA_DIR": str(base / "data"),
            "IPYTHONDIR": str(base / "ipython"),
            "JUPYTER_APPROVALS_STATE_DIR": str(state),
        }
        base.mkdir(parents=True, exist_ok=True)
        self.log = (base / f"server-{self.port}.log").open("wb")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jupyter_server",
                "--no-browser",
                f"--port={self.port}",
                f"--IdentityProvider.token={self.token}",
                f"--ServerApp.root_dir={root}",
                "--ServerApp.jpserver_extensions={'jupyter_approvals': True}",
                "--allow-root",
            ],
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                self.request("GET", "api/status")
                return
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the server did not start") from None
                time.sleep(0.2)

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """``(status, parsed JSON body)`` of one request with the server's token."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/{path}",
            data=data,
            method=method,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=30) as response:
                status, text = response.status, response.read()
        except urllib.error.HTTPError as error:
            status, text = error.code, error.read()
        return status, json.loads(text) if text else None

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Stop the server with ``sig`` and wait for it (SIGTERM: it shuts its kernels down)."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.log.close()
