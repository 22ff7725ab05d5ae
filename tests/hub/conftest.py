"""A real JupyterHub for the tests of this folder: configurable-http-proxy from npm, the
local process spawner, the dummy authenticator, the users ``alice`` and ``admin``, and services
holding the credentials a hub hands out.

The hub runs from a temporary folder; each user's HOME (and so the journal and the agent
registry of their server) is a folder of its own below it. ``make hub`` installs the proxy
into ``build/hub-proxy``; ``HUB_PROXY`` names another one.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import requests

from jupyter_approvals.core.hub_identity import AGENT_SCOPE, DECIDE_SCOPE

REPO = Path(__file__).resolve().parents[2]
PROXY_DEFAULT = REPO / "build" / "hub-proxy" / "node_modules" / ".bin" / "configurable-http-proxy"
PROXY = Path(os.environ.get("HUB_PROXY", PROXY_DEFAULT))
#: Service tokens (random enough for a hub that lives for one test module on 127.0.0.1).
DECIDER_SERVICE_TOKEN = "decider-" + os.urandom(16).hex()
PLAIN_SERVICE_TOKEN = "svc-" + os.urandom(16).hex()
MANAGER_TOKEN = "manager-" + os.urandom(16).hex()

CONFIG = """
import sys
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {port}
c.JupyterHub.hub_port = {hub_port}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_api_port}"
c.ConfigurableHTTPProxy.command = [{proxy!r}]
c.JupyterHub.db_url = "sqlite:///{folder}/hub.sqlite"
c.JupyterHub.cookie_secret_file = "{folder}/cookie_secret"
c.JupyterHub.pid_file = "{folder}/hub.pid"
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allow_all = True
c.Authenticator.admin_users = {{"admin"}}
c.JupyterHub.spawner_class = "simple"
c.JupyterHub.allow_named_servers = True
c.SimpleLocalProcessSpawner.home_dir_template = "{folder}/home/{{username}}"
c.Spawner.cmd = [{singleuser!r}]
c.Spawner.args = {args!r}
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 60
c.Spawner.http_timeout = 60
# carol's server gets the narrow token docs/jupyterhub.md recommends; everyone else the default
c.Spawner.server_token_scopes = lambda spawner: (
    ["users:activity!user"] if spawner.user.name == "carol"
    else ["users:activity!user", "access:servers!server"]
)
c.JupyterHub.custom_scopes = {{
    {decide!r}: {{"description": "Decide jupyter-approvals requests"}},
    {agent!r}: {{"description": "Act as an agent in jupyter-approvals"}},
}}
c.JupyterHub.services = [
    {{"name": "decider", "api_token": {decider_token!r}}},
    {{"name": "svc", "api_token": {plain_token!r}}},
    {{"name": "manager", "api_token": {manager_token!r}}},
]
c.JupyterHub.load_roles = [
    {{"name": "user", "scopes": ["self", {agent!r} + "!user"]}},
    {{"name": "decider", "services": ["decider"],
      "scopes": ["access:servers!user=alice", {decide!r} + "!user=alice"]}},
    {{"name": "svc", "services": ["svc"], "scopes": ["access:servers!user=alice"]}},
    {{"name": "admin-opens-servers", "users": ["admin"], "scopes": ["access:servers"]}},
    {{"name": "manager", "services": ["manager"],
      "scopes": ["admin:users", "admin:servers", "tokens", "list:users", "read:users",
                 "access:servers", {agent!r}, {decide!r}]}},
]
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Hub:
    """A running hub: its URL, its folder, and what the tests need to reach it."""

    url: str
    folder: Path
    process: subprocess.Popen[bytes]
    log: Path
    started: set[str] = field(default_factory=set)
    # Every browser's connections, closed when the hub stops: a session left to the garbage
    # collector closes its sockets in whichever later test happens to collect it.
    sessions: list[requests.Session] = field(default_factory=list)

    def api(self, method: str, path: str, token: str = MANAGER_TOKEN, **kwargs: Any) -> Any:
        """The hub's REST API (``/hub/api/...``) with ``token``."""
        response = requests.request(
            method,
            f"{self.url}/hub/api/{path}",
            headers={"Authorization": f"token {token}"},
            timeout=30,
            **kwargs,
        )
        response.raise_for_status()
        return response.json() if response.content else None

    def ensure_user(self, user: str) -> None:
        """Make ``user`` known to the hub (users log in with the dummy authenticator, but
        tokens and servers need the user first)."""
        response = requests.post(
            f"{self.url}/hub/api/users/{user}",
            headers={"Authorization": f"token {MANAGER_TOKEN}"},
            timeout=30,
        )
        if response.status_code not in (201, 409):
            response.raise_for_status()

    def home(self, user: str) -> Path:
        """The HOME of ``user``'s server."""
        return self.folder / "home" / user

    def _server(self, user: str) -> dict[str, Any] | None:
        """The hub's model of ``user``'s default server, None when it has none."""
        server = (self.api("GET", f"users/{user}").get("servers") or {}).get("")
        return server if isinstance(server, dict) else None

    def _until(self, settled: Any, what: str, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while not settled():
            if time.monotonic() > deadline:
                raise AssertionError(f"{what}:\n{self.log.read_text()[-4000:]}")
            time.sleep(0.3)

    def start_server(self, user: str) -> None:
        """Start ``user``'s default server (once) and wait until the hub says it is ready."""
        if user in self.started:
            return
        self.home(user).mkdir(parents=True, exist_ok=True)
        self.ensure_user(user)
        requests.post(
            f"{self.url}/hub/api/users/{user}/server",
            headers={"Authorization": f"token {MANAGER_TOKEN}"},
            timeout=90,
        )
        self._until(
            lambda: (self._server(user) or {}).get("ready"), f"{user}'s server did not start"
        )
        self.started.add(user)

    def start_named_server(self, user: str, name: str) -> None:
        """Start ``user``'s server ``name`` and wait until the hub says it is ready."""
        self.home(user).mkdir(parents=True, exist_ok=True)
        self.ensure_user(user)
        requests.post(
            f"{self.url}/hub/api/users/{user}/servers/{name}",
            headers={"Authorization": f"token {MANAGER_TOKEN}"},
            timeout=90,
        )

        def ready() -> bool:
            servers = self.api("GET", f"users/{user}").get("servers") or {}
            return bool((servers.get(name) or {}).get("ready"))

        self._until(ready, f"{user}'s server {name} did not start")

    def stop_server(self, user: str) -> None:
        """Stop ``user``'s default server as the idle culler does (DELETE through the API)."""
        requests.delete(
            f"{self.url}/hub/api/users/{user}/server",
            headers={"Authorization": f"token {MANAGER_TOKEN}"},
            timeout=90,
        )
        self._until(lambda: self._server(user) is None, f"{user}'s server did not stop")
        self.started.discard(user)

    def token(self, user: str, note: str, scopes: list[str] | None = None) -> str:
        """A new API token of ``user``, as from the hub's token page."""
        self.ensure_user(user)
        body: dict[str, Any] = {"note": note}
        if scopes is not None:
            body["scopes"] = scopes
        return str(self.api("POST", f"users/{user}/tokens", json=body)["token"])

    def browser(self, user: str) -> BrowserSession:
        """A browser session of ``user`` logged in at the hub."""
        session = requests.Session()
        self.sessions.append(session)
        login = session.get(f"{self.url}/hub/login", timeout=30)
        login.raise_for_status()
        xsrf = session.cookies.get("_xsrf", path="/hub/")
        response = session.post(
            f"{self.url}/hub/login?next=/hub/home",
            data={"username": user, "password": "any", "_xsrf": xsrf},
            timeout=30,
        )
        response.raise_for_status()
        return BrowserSession(self, user, session)


@dataclass
class BrowserSession:
    """A logged-in browser: its cookies, and the OAuth token the server set for it."""

    hub: Hub
    user: str
    session: requests.Session
    opened: set[str] = field(default_factory=set)

    def open(self, owner: str) -> None:
        """Open ``owner``'s server as a browser does: the hub's OAuth dance sets the
        server's cookie (with the browser's session)."""
        if owner in self.opened:
            return
        # A page (not the API, which answers 403) sends the browser through the hub's OAuth.
        response = self.session.get(f"{self.hub.url}/user/{owner}/lab", timeout=60)
        response.raise_for_status()
        if "/oauth2/authorize" in response.url:
            # Another user's server: the hub asks the browser to confirm (as a person clicks
            # "Authorize" on the page), with the form's own fields.
            fields = re.findall(r'<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"', response.text)
            response = self.session.post(response.url, data=fields, timeout=60)
            response.raise_for_status()
        self.opened.add(owner)

    def request(self, method: str, owner: str, path: str, **kwargs: Any) -> requests.Response:
        """A request of the page to ``owner``'s server (cookie and XSRF header, as
        JupyterLab sends them)."""
        self.open(owner)
        xsrf = self.session.cookies.get("_xsrf", path=f"/user/{owner}/") or ""
        headers = {"X-XSRFToken": xsrf, **kwargs.pop("headers", {})}
        return self.session.request(
            method, f"{self.hub.url}/user/{owner}/{path}", headers=headers, timeout=60, **kwargs
        )


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    """A running JupyterHub with the extension in every single-user server."""
    if not PROXY.exists():
        pytest.fail(f"configurable-http-proxy is not installed at {PROXY}: run `make hub`")
    folder = tmp_path_factory.mktemp("hub")
    port = free_port()
    bin_dir = Path(sys.executable).parent
    args = [
        "--ApprovalsServer.agent_code=ask",
        "--ServerApp.kernel_manager_class="
        "jupyter_server.services.kernels.kernelmanager.AsyncMappingKernelManager",
    ]
    if os.geteuid() == 0:
        args.append("--allow-root")
    config = CONFIG.format(
        port=port,
        hub_port=free_port(),
        proxy_api_port=free_port(),
        proxy=str(PROXY),
        folder=folder,
        singleuser=str(bin_dir / "jupyterhub-singleuser"),
        args=args,
        decide=DECIDE_SCOPE,
        agent=AGENT_SCOPE,
        decider_token=DECIDER_SERVICE_TOKEN,
        plain_token=PLAIN_SERVICE_TOKEN,
        manager_token=MANAGER_TOKEN,
    )
    (folder / "jupyterhub_config.py").write_text(config)
    log = folder / "hub.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "JPY_"))}
    env["PATH"] = f"{bin_dir}{os.pathsep}{Path(shutil.which('node') or 'node').parent}"
    env["PATH"] += f"{os.pathsep}{os.environ.get('PATH', '')}"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(bin_dir / "jupyterhub"), "-f", str(folder / "jupyterhub_config.py")],
            cwd=folder,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
    url = f"http://127.0.0.1:{port}"
    running = Hub(url, folder, process, log)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if requests.get(f"{url}/hub/api", timeout=2).ok:
                    break
            except requests.ConnectionError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"the hub did not start:\n{log.read_text()[-4000:]}")
            time.sleep(0.2)
        yield running
    finally:
        for user in list(running.started):
            # (the hub's own shutdown stops what is left)
            with contextlib.suppress(Exception):
                running.stop_server(user)
        for session in running.sessions:
            session.close()
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def json_of(response: requests.Response) -> dict[str, Any]:
    """The JSON body of a response, whatever its status."""
    try:
        body = response.json()
    except json.JSONDecodeError:
        return {"status": response.status_code, "text": response.text[:500]}
    return body if isinstance(body, dict) else {"body": body}
