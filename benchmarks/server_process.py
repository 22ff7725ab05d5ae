"""A jupyter server with (or without) the extension in a process of its own, for benchmarks.

The server picks its own port (``--port=0``) and the benchmark reads it back from the
server's info file: a port chosen here and handed over would be free when chosen and could
be taken by any other process before the server binds it. Stopping always reaps: the server
and every process it started (its kernels run in sessions of their own, so a signal to the
server's process group alone would leave them running).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: Attempts at starting a server: one lost race for its port makes it exit, never hang.
START_ATTEMPTS = 3


def descendants(pid: int) -> list[int]:
    """Every living process below ``pid`` (children, their children, ...), from /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # it ended while we looked
            continue
        # The command name (2nd field) is in parentheses and may hold spaces: split after it.
        fields = stat[stat.rindex(")") + 2 :].split()
        parents[int(entry.name)] = int(fields[1])
    found: list[int] = []
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        children = [child for child, ppid in parents.items() if ppid == parent]
        found += children
        frontier += children
    return found


def kernels_of(pid: int) -> list[int]:
    """Processes started as kernels of the server ``pid`` (jupyter_client puts
    ``JPY_PARENT_PID`` in a kernel's environment), found even once the server is gone."""
    marker = f"\0JPY_PARENT_PID={pid}\0".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if marker in b"\0" + (entry / "environ").read_bytes():
                    found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its parent to reap it does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def end_process_tree(
    process: subprocess.Popen[Any], graceful: Callable[[], None] | None, timeout: float = 30
) -> None:
    """End ``process`` and everything it started, whatever state it is in; reap ``process``.

    ``graceful`` (a shutdown request, say) gets the first chance, for up to ``timeout``
    seconds; then SIGTERM and at last SIGKILL go to the process's group and to the group of
    each process it started (kernels lead groups of their own), until none is left.
    """
    tree = descendants(process.pid) + kernels_of(process.pid)
    if graceful is not None and process.poll() is None:
        try:
            graceful()
        except Exception:  # it did not answer: the signals below end it
            pass
        else:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout)
    # Processes started after the first look (a kernel being started) are found now.
    tree = list(dict.fromkeys(tree + descendants(process.pid) + kernels_of(process.pid)))
    own_group = os.getpgrp()
    for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 10.0)):
        living = [pid for pid in [process.pid, *tree] if _alive(pid)]
        if process.poll() is not None and not living:
            break
        for pid in living:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                group = os.getpgid(pid)
                if group != own_group:  # never the benchmark's own group
                    os.killpg(group, sig)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(0.1)
            if process.poll() is not None and not any(_alive(pid) for pid in tree):
                break
    process.wait(10)  # reaped: no zombie left behind in this process either


class ServerProcess:
    """``jupyter_server`` on a port of its choosing with a token of its own, once answering.

    A context manager: leaving the block stops it (:meth:`stop`).
    """

    def __init__(
        self,
        base: Path,
        root: Path,
        *,
        extension: bool = True,
        extra_args: tuple[str, ...] = (),
        python: str = sys.executable,
    ) -> None:
        self.token = secrets.token_hex(16)
        self.state = base / "state"
        self.runtime = base / "runtime"
        self.port = 0
        base.mkdir(parents=True, exist_ok=True)
        root.mkdir(parents=True, exist_ok=True)
        enabled = "True" if extension else "False"
        self._command = [
            python,
            "-m",
            "jupyter_server",
            "--no-browser",
            "--port=0",
            "--ServerApp.port_retries=0",
            "--ServerApp.ip=127.0.0.1",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={root}",
            f"--ServerApp.jpserver_extensions={{'jupyter_approvals': {enabled}}}",
            "--allow-root",
            *extra_args,
        ]
        self._env = {
            **os.environ,
            "JUPYTER_RUNTIME_DIR": str(self.runtime),
            "JUPYTER_CONFIG_DIR": str(base / "config"),
            "JUPYTER_APPROVALS_STATE_DIR": str(self.state),
        }
        self._root = root
        #: What the server printed, for a failed run (in ``base``, removed with it).
        self.log_path = base / "server.log"
        self._log = self.log_path.open("ab")
        for attempt in range(1, START_ATTEMPTS + 1):
            if self._start():
                return
            if attempt == START_ATTEMPTS:
                raise RuntimeError(f"jupyter server exited {START_ATTEMPTS} times while starting")

    def _start(self, timeout: float = 120) -> bool:
        """Start the server and wait until it answers; False if it exited first."""
        self.process = subprocess.Popen(
            self._command,
            env=self._env,
            # In the folder it serves, as a person starts it: a kernel started without a path
            # starts in the server's working directory, and jupyter-collaboration keeps its
            # room store there (never in this repository).
            cwd=self._root,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # one group to signal; Ctrl-C goes to the benchmark
        )
        info = self.runtime / f"jpserver-{self.process.pid}.json"
        deadline = time.monotonic() + timeout
        try:
            while True:
                if self.process.poll() is not None:
                    return False
                try:
                    # Written once the server listens; the port is the one it bound.
                    self.port = int(json.loads(info.read_text())["port"])
                    self.request("api/status")
                    return True
                except (OSError, ValueError, KeyError):
                    if time.monotonic() > deadline:
                        message = f"jupyter server did not answer in {timeout} s"
                        raise TimeoutError(message) from None
                    time.sleep(0.2)
        except BaseException:
            self.stop()
            raise

    def request(
        self, path: str, method: str = "GET", body: bytes | None = None, token: str | None = None
    ) -> dict:
        """The JSON answer of one request made with the server's token (or ``token``)."""
        req = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/{path}",
            data=body,
            method=method,
            headers={"Authorization": f"token {token or self.token}"},
        )
        with urllib.request.urlopen(req, timeout=60) as response:
            return json.loads(response.read() or b"{}")

    def log_tail(self, chars: int = 4000) -> str:
        """The end of what the server printed (for a failed run's message)."""
        self._log.flush()
        return self.log_path.read_text(errors="replace")[-chars:]

    def stop(self) -> None:
        """End the server and every kernel it started, and reap them (see module docstring).

        It is asked to shut down first (it then ends its kernels itself); what is left after
        that is signalled.
        """

        def shutdown() -> None:
            self.request("api/shutdown", "POST")

        end_process_tree(self.process, shutdown)
        self._log.close()

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
