"""A real Jupyter AI 3 server with jupyter-approvals, and a scripted ACP agent in its chat.

The server runs in the Jupyter AI virtualenv (``JUPYTER_AI_PYTHON``, made by ``make test``);
the agent is :mod:`.scripted_agent`, started by Jupyter AI's own ACP client as it starts Claude
Code or Goose, through a local persona in the project's ``.jupyter/personas``. A test sends it
a script in the chat, over the chat's websocket as the chat panel does, then reads what the
client answered each step from the agent's log.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect

from tests.e2e.lab import LabServer, free_port, venv_python

AGENT = Path(__file__).with_name("scripted_agent.py")
PERSONA_MODULE = "scripted_persona"
PERSONA_ID = f"jupyter-ai-personas::{PERSONA_MODULE}::ScriptedAcpPersona"
#: The agent identity jupyter-approvals gives the persona named "Scripted".
AGENT_NAME = "jupyter-ai-scripted"
#: The session id the scripted agent gives the chat's first session.
SESSION = "scripted-1"
#: Longer than the reading floor: a person who read the request.
HUMAN_PAUSE_S = 1.2

PERSONA_SOURCE = """
import sys
from jupyter_ai_acp_client.base_acp_persona import BaseAcpPersona
from jupyter_ai_persona_manager import PersonaDefaults


class ScriptedAcpPersona(BaseAcpPersona):
    def __init__(self, *args, **kwargs):
        executable = [sys.executable, {agent!r}, {log!r}]
        super().__init__(*args, executable=executable, **kwargs)

    @property
    def defaults(self):
        return PersonaDefaults(
            name="Scripted",
            description="An ACP agent that follows a script.",
            avatar_path={avatar!r},
            system_prompt="unused",
        )
"""

ALLOW_REJECT = [
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]


def write_call(tool_call_id: str, path: Path, old: str | None, new: str) -> dict[str, Any]:
    """A tool call that writes ``new`` over ``old`` in ``path``, as Claude Code's ACP adapter
    sends one (a diff item)."""
    return {
        "toolCallId": tool_call_id,
        "title": f"Write {path.name}",
        "kind": "edit",
        "status": "pending",
        "content": [{"type": "diff", "path": str(path), "oldText": old, "newText": new}],
    }


def command_call(tool_call_id: str, command: str, **extra: Any) -> dict[str, Any]:
    """A tool call that runs ``command`` (its raw input, as agents send for a shell tool)."""
    return {
        "toolCallId": tool_call_id,
        "title": f"Run {command}",
        "kind": "execute",
        "status": "pending",
        "rawInput": {"command": command, **extra},
    }


@dataclass
class ChatClient:
    """The chat panel's websocket to one ``.chat`` file, kept open on a thread of its own."""

    url: str
    token: str
    loop: asyncio.AbstractEventLoop = field(default_factory=asyncio.new_event_loop)
    connection: Any = None

    def __post_init__(self) -> None:
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.connection = self._run(self._connect())

    def _run(self, coroutine: Any) -> Any:
        future: Future[Any] = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        return future.result(60)

    async def _connect(self) -> Any:
        request = HTTPRequest(self.url, headers={"Authorization": f"token {self.token}"})
        connection = await websocket_connect(request)
        await connection.read_message()  # the connection frame: history and users
        return connection

    def say(self, body: str, persona: str = PERSONA_ID) -> None:
        """Send a message to ``persona``, as the chat input does with a persona picked."""
        message = {
            "type": "client",
            "action": "send",
            "id": uuid.uuid4().hex,
            "body": body,
            "metadata": {"to_persona": persona},
        }

        async def send() -> None:
            await self.connection.write_message(json.dumps(message))

        self._run(send())

    def close(self) -> None:
        async def shut() -> None:
            self.connection.close()
            await asyncio.sleep(0.2)
            stream = getattr(self.connection, "stream", None)
            if stream is not None and not stream.closed():
                stream.close()

        self._run(shut())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


@dataclass
class JupyterAi:
    """The server, its chat with the scripted agent, and the agent's log."""

    server: LabServer
    chat: ChatClient
    log: Path
    seen: int = 0

    @property
    def root(self) -> Path:
        return self.server.root

    def run(self, *steps: dict[str, Any]) -> None:
        """Send ``steps`` to the agent (it starts on them at once; read with :meth:`answers`)."""
        self.chat.say("SCRIPT:" + json.dumps(list(steps)))

    def answers(self, count: int, timeout: float = 60) -> list[dict[str, Any]]:
        """The client's answers to the next ``count`` steps, waiting for them."""
        deadline = time.monotonic() + timeout
        while True:
            lines = self.log.read_text().splitlines() if self.log.exists() else []
            if len(lines) >= self.seen + count:
                got = [json.loads(line) for line in lines[self.seen : self.seen + count]]
                self.seen += count
                return got
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"the agent answered {len(lines) - self.seen} of {count} steps; see "
                    f"{self.server.log_path}"
                )
            time.sleep(0.1)

    def held_row(self, showing: str, timeout: float = 30) -> dict[str, Any]:
        """The sidebar's pending row of the agent whose summary or preview shows ``showing``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for row in self.server.pending():
                text = f"{row.get('summary')}\n{row.get('preview')}"
                if row.get("agent") == AGENT_NAME and showing in text:
                    return row
            time.sleep(0.1)
        raise AssertionError(f"no pending row showing {showing!r}; see {self.server.log_path}")

    def answer_in_chat(
        self, tool_call_id: str, option_id: str, token: str | None = None, **headers: str
    ) -> tuple[int, dict[str, Any]]:
        """The chat's Allow / Reject button: ``POST ai/acp/permissions``."""
        body = {"session_id": SESSION, "tool_call_id": tool_call_id, "option_id": option_id}
        request = urllib.request.Request(
            f"{self.server.base_url}/ai/acp/permissions",
            data=json.dumps(body).encode(),
            method="POST",
            headers={"Authorization": f"token {token or self.server.token}", **headers},
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as error:
            raw = error.read()
            try:
                return error.code, json.loads(raw)
            except ValueError:
                return error.code, {"text": raw.decode(errors="replace")[:500]}

    def journal(self, **match: Any) -> list[dict[str, Any]]:
        """The journal lines whose fields equal ``match``."""
        return [
            line
            for line in self.server.journal_lines()
            if all(line.get(k) == v for k, v in match.items())
        ]


@contextlib.contextmanager
def running_jupyter_ai(base: Path, *args: str) -> Iterator[JupyterAi]:
    """Jupyter AI with jupyter-approvals (and ``args``), and a chat with the scripted agent."""
    python = venv_python("JUPYTER_AI_PYTHON", "the Jupyter AI bridge tests", "jupyter-ai 3")
    log = base / "agent-answers.jsonl"
    personas = base / "root" / ".jupyter" / "personas"
    personas.mkdir(parents=True)
    (personas / f"{PERSONA_MODULE}.py").write_text(
        PERSONA_SOURCE.format(agent=str(AGENT), log=str(log), avatar=str(AGENT))
    )
    # Jupyter AI's MCP server listens on a port of its own: one free port per server, so that
    # servers of tests running side by side do not meet there.
    extra = [f"--MCPExtensionApp.mcp_port={free_port()}", *args]
    server = LabServer.start(base, extra, log_name=f"jupyter-ai-{base.name}", python=python)
    chat = None
    try:
        (server.root / "agent.chat").write_text("{}")
        url = f"ws://127.0.0.1:{server.port}/api/chat/ws/{quote('agent.chat')}"
        chat = ChatClient(url, server.token)
        yield JupyterAi(server, chat, log)
    finally:
        if chat is not None:
            chat.close()
        server.stop()


@pytest.fixture(scope="module")
def jupyter_ai(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterAi]:
    """Jupyter AI with jupyter-approvals, and a chat with the scripted agent."""
    with running_jupyter_ai(tmp_path_factory.mktemp("jupyter-ai")) as running:
        yield running
