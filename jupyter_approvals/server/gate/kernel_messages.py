"""Kernel messages crossing a kernel websocket: read, stamp, answer in the client's protocol.

Two protocols reach a kernel websocket: ``v1.kernel.websocket.jupyter.org`` (binary frames with
offsets; JupyterLab) and the legacy one (one JSON object with a ``channel`` key, or the binary
form of it when there are buffers; jupyter_kernel_client, used by jupyter-mcp-server). Whatever
the gate decides about a message, what it forwards keeps the client's protocol, and what it
answers is built as a kernel's own message would be.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from jupyter_client.jsonutil import json_default
from jupyter_server.services.kernels.connection.base import (
    deserialize_binary_message,
    deserialize_msg_from_ws_v1,
    serialize_binary_message,
    serialize_msg_to_ws_v1,
)

from ...core.protocol import STAMP_KEY

V1_PROTOCOL = "v1.kernel.websocket.jupyter.org"


def frame_bytes(frame: Any) -> bytes:
    """One frame of a message a kernel sent, as bytes (ZeroMQ may hand a ``Frame``)."""
    return frame if isinstance(frame, bytes) else bytes(getattr(frame, "bytes", frame))


def channel_of(stream: Any) -> str | None:
    """The channel of the stream a kernel's message came on (its name, or the stream)."""
    return stream if isinstance(stream, str) else getattr(stream, "channel", None)


@dataclass
class IncomingMessage:
    """One message from a client: its channel, header, and how to re-encode it."""

    channel: str
    header: dict[str, Any]
    v1: bool
    raw: Any
    parts: list[bytes] | None = None
    message: dict[str, Any] | None = None
    binary: bool = False

    @property
    def msg_type(self) -> str:
        """``header.msg_type`` ('' when missing)."""
        value = self.header.get("msg_type")
        return value if isinstance(value, str) else ""

    def content(self) -> dict[str, Any]:
        """The message content (decoded on demand for v1)."""
        if self.v1:
            assert self.parts is not None
            value = json.loads(self.parts[3])
        else:
            assert self.message is not None
            value = self.message.get("content")
        return value if isinstance(value, dict) else {}

    def stamped(self, stamp: dict[str, Any]) -> Any:
        """The message re-encoded with ``metadata[STAMP_KEY] = stamp``, replacing any client's."""
        if self.v1:
            assert self.parts is not None
            metadata = json.loads(self.parts[2]) if self.parts[2] else {}
            if not isinstance(metadata, dict):
                metadata = {}
            metadata[STAMP_KEY] = stamp
            parts = list(self.parts)
            parts[2] = json.dumps(metadata, default=json_default).encode("utf-8")
            return serialize_msg_to_ws_v1(parts, self.channel)  # type: ignore[no-untyped-call]
        assert self.message is not None
        message = dict(self.message)
        metadata = message.get("metadata")
        message["metadata"] = {**(metadata if isinstance(metadata, dict) else {}), STAMP_KEY: stamp}
        message["channel"] = self.channel
        if self.binary:
            return serialize_binary_message(message)  # type: ignore[no-untyped-call]
        return json.dumps(message, default=json_default)


def decode(raw: Any, subprotocol: str | None) -> IncomingMessage:
    """Read a client's frame; raises ValueError (or KeyError) when it is not a message."""
    if subprotocol == V1_PROTOCOL:
        if not isinstance(raw, bytes):
            raise ValueError("a v1 frame must be binary")
        channel, parts = deserialize_msg_from_ws_v1(raw)  # type: ignore[no-untyped-call]
        if len(parts) < 4:
            raise ValueError("a v1 frame needs header, parent, metadata and content")
        header = json.loads(parts[0])
        if not isinstance(header, dict):
            raise ValueError("the header is not an object")
        return IncomingMessage(channel or "shell", header, True, raw, parts=parts)
    binary = isinstance(raw, bytes)
    message = deserialize_binary_message(raw) if binary else json.loads(raw)  # type: ignore[no-untyped-call]
    if not isinstance(message, dict) or not isinstance(message.get("header"), dict):
        raise ValueError("the message has no header")
    channel = message.pop("channel", None) or "shell"
    return IncomingMessage(
        str(channel), message["header"], False, raw, message=message, binary=binary
    )


def encode_reply(
    session: Any,
    msg_type: str,
    content: dict[str, Any],
    parent: dict[str, Any],
    channel: str,
    subprotocol: str | None,
) -> tuple[Any, bool]:
    """A message from "the kernel side" to the client: (frame, is_binary)."""
    message = session.msg(msg_type, content=content, parent=parent)
    if subprotocol == V1_PROTOCOL:
        return serialize_msg_to_ws_v1(message, channel, session.pack), True  # type: ignore[no-untyped-call]
    message["channel"] = channel
    message.pop("buffers", None)
    return json.dumps(message, default=json_default), False
