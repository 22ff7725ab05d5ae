"""An agent's side of the server for the gate's tests: its token, REST calls and kernel sockets.

The kernel socket speaks either protocol a real client speaks: v1 (JupyterLab) or the legacy
JSON one (jupyter_kernel_client, used by jupyter-mcp-server).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from typing import Any

from jupyter_client.jsonutil import json_default
from jupyter_client.session import Session
from jupyter_server.services.kernels.connection.base import (
    deserialize_msg_from_ws_v1,
    serialize_msg_to_ws_v1,
)
from tornado.httpclient import HTTPClientError, HTTPRequest
from tornado.iostream import StreamClosedError
from tornado.websocket import WebSocketClosedError, websocket_connect

from jupyter_approvals.core.agents import AgentRegistry, registry_path

V1 = "v1.kernel.websocket.jupyter.org"


def add_agent(state_dir, name: str = "bot") -> str:
    """Register an agent the way ``jupyter approvals agent add`` does; return its token."""
    _, token = AgentRegistry(registry_path(state_dir)).add(name)
    return token


def auth(token: str) -> dict[str, str]:
    """The header an agent client sends."""
    return {"Authorization": f"token {token}"}


async def call(jp_fetch, *parts, token: str | None = None, **kwargs) -> tuple[int, dict, Any]:
    """(status, headers, JSON body or None) of one request; never raises on HTTP errors."""
    if token is not None:
        kwargs["headers"] = {**auth(token), **(kwargs.get("headers") or {})}
    try:
        response = await jp_fetch(*parts, **kwargs)
    except HTTPClientError as error:
        if error.response is None:
            raise
        response = error.response
    try:
        body = json.loads(response.body) if response.body else None
    except ValueError:
        body = None
    return response.code, dict(response.headers.get_all()), body


async def rename(jp_fetch, token: str, old: str, new: str) -> tuple[int, dict, Any]:
    """An agent's rename over the contents API, as JupyterLab's file browser sends it."""
    body = json.dumps({"path": new})
    return await call(jp_fetch, "api", "contents", old, method="PATCH", body=body, token=token)


#: The REST prefix of jupyter-approvals.
APPROVALS_API = "jupyter-approvals/api"


async def change_sets(jp_fetch) -> list[dict[str, Any]]:
    """The change sets the server lists to the person (``GET changes``)."""
    status, _, body = await call(jp_fetch, APPROVALS_API, "changes")
    assert status == 200, body
    return list(body["change_sets"])


async def decide_changes(
    jp_fetch, kernel_id: str, body: dict[str, Any], token: str | None = None
) -> tuple[int, dict, Any]:
    """``POST changes/{kernel_id}`` with ``body``, as the person (or ``token``'s holder)."""
    return await call(
        jp_fetch,
        APPROVALS_API,
        "changes",
        kernel_id,
        method="POST",
        body=json.dumps(body),
        token=token,
    )


async def held(jp_fetch) -> list[dict[str, Any]]:
    """The requests the server holds for agents, as the person's GET pending lists them."""
    _, _, listing = await call(jp_fetch, APPROVALS_API, "pending")
    return [item for item in listing["pending"] if item.get("held_at") == "server"]


async def approve(jp_fetch, item: dict[str, Any]) -> None:
    """Approve a held request as a person in the sidebar would, after reading it."""
    await asyncio.sleep(1.1)  # a person reads it
    status, _, body = await call(
        jp_fetch,
        *item["decide_url"].split("/"),
        method="POST",
        body=json.dumps({"decision": "approve", "fingerprint": item["fingerprint"]}),
    )
    assert status == 200, body


class KernelSocket:
    """A websocket to one kernel, in one of the two protocols."""

    def __init__(self, connection, v1: bool, session_id: str) -> None:
        self.connection = connection
        self.v1 = v1
        self.session_id = session_id
        self.session = Session(username="test-client")
        self.received: list[dict[str, Any]] = []

    @classmethod
    async def open(
        cls,
        port: int,
        base_url: str,
        kernel_id: str,
        token: str,
        v1: bool = True,
        session_id: str | None = None,
    ) -> KernelSocket:
        """Connect as JupyterLab does, with a ``session_id`` of the client's own."""
        session_id = session_id or uuid.uuid4().hex
        url = (
            f"ws://127.0.0.1:{port}{base_url}api/kernels/{kernel_id}/channels"
            f"?session_id={session_id}"
        )
        request = HTTPRequest(url, headers=auth(token))
        connection = await websocket_connect(request, subprotocols=[V1] if v1 else None)
        return cls(connection, v1, session_id)

    async def send(
        self, msg_type: str, content: dict[str, Any], channel: str = "shell", **metadata: Any
    ) -> str:
        """Send one message; return its msg_id."""
        message = self.session.msg(msg_type, content=content, metadata=metadata or None)
        if self.v1:
            await self.connection.write_message(
                serialize_msg_to_ws_v1(message, channel, self.session.pack), binary=True
            )
        else:
            message["channel"] = channel
            await self.connection.write_message(json.dumps(message, default=json_default))
        return message["header"]["msg_id"]

    async def read(self, timeout: float) -> dict[str, Any] | None:
        """The next message (None when the socket closed)."""
        frame = await asyncio.wait_for(self.connection.read_message(), timeout)
        if frame is None:
            return None
        if self.v1:
            channel, parts = deserialize_msg_from_ws_v1(frame)
            message = {
                "channel": channel,
                "header": json.loads(parts[0]),
                "parent_header": json.loads(parts[1]),
                "metadata": json.loads(parts[2]),
                "content": json.loads(parts[3]),
            }
        else:
            message = json.loads(frame)
        message["msg_type"] = message["header"]["msg_type"]
        self.received.append(message)
        return message

    async def replies_to(
        self, msg_id: str, timeout: float = 30, first_only: bool = False
    ) -> list[dict[str, Any]]:
        """Every message answering ``msg_id`` until its reply and the kernel's idle arrived
        (or only the first one that is not a status)."""
        got: list[dict[str, Any]] = []
        reply = idle = False
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not (reply and idle):
            message = await self.read(max(0.01, deadline - loop.time()))
            if message is None:
                break
            if message["parent_header"].get("msg_id") != msg_id:
                continue
            if first_only and message["msg_type"] != "status":
                return [message]
            got.append(message)
            reply = reply or message["msg_type"].endswith("_reply")
            idle = idle or (
                message["msg_type"] == "status"
                and message["content"].get("execution_state") == "idle"
            )
        return got

    async def send_execute(self, code: str, channel: str = "shell", **extra: Any) -> str:
        """Send an ``execute_request`` of ``code`` as a client does; return its msg_id."""
        content = {
            "code": code,
            "silent": False,
            "store_history": True,
            "user_expressions": {},
            "allow_stdin": False,
            "stop_on_error": True,
            **extra,
        }
        return await self.send("execute_request", content, channel)

    async def execute(self, code: str, channel: str = "shell", **extra: Any) -> dict[str, Any]:
        """Run ``code``; return the reply content, the stdout text and every message."""
        msg_id = await self.send_execute(code, channel, **extra)
        messages = await self.replies_to(msg_id)
        reply = next((m["content"] for m in messages if m["msg_type"] == "execute_reply"), None)
        stdout = "".join(
            m["content"].get("text", "")
            for m in messages
            if m["msg_type"] == "stream" and m["content"].get("name") == "stdout"
        )
        return {"reply": reply, "stdout": stdout, "messages": messages}

    def close(self) -> None:
        self.connection.close()

    async def aclose(self, timeout: float = 5) -> None:
        """Close and wait until the connection's socket is closed too: a loop that ends right
        after :meth:`close` (``asyncio.run``) leaves the socket to the garbage collector."""
        self.connection.close()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        with contextlib.suppress(asyncio.TimeoutError, WebSocketClosedError, StreamClosedError):
            while (
                await asyncio.wait_for(
                    self.connection.read_message(), max(0.01, deadline - loop.time())
                )
                is not None
            ):
                pass
        stream = getattr(self.connection, "stream", None)
        if stream is not None and not stream.closed():
            stream.close()
