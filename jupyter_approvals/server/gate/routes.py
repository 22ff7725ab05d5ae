"""What an agent identity may reach at the server: handlers, methods, paths, kernels.

Deny by default. An agent reaches a route only when the route's handler class (exactly that
class, not a subclass another extension registers) and the HTTP method are in
:data:`AGENT_HANDLERS`; this check runs in the identity layer, so it also covers routes that
never call the authorizer. The authorizer is narrowed the same way by resource
(:func:`agent_may`). Paths that hold Jupyter's own secrets or configuration, or any hidden
path, are refused for agents whatever ``allow_hidden`` says; kernels and sessions that the
agent did not start cannot be shut down, restarted or deleted by it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tornado import web

from ...core import errors
from . import jupyter_server_seam as seam

# Handler class (module.qualname) -> methods an agent client needs there.
AGENT_HANDLERS: dict[str, frozenset[str]] = {
    seam.API_VERSION: frozenset({"GET"}),
    seam.API_STATUS: frozenset({"GET"}),
    seam.IDENTITY: frozenset({"GET"}),
    seam.CONTENTS: frozenset({"GET", "HEAD", "PUT", "PATCH", "POST", "DELETE"}),
    seam.CHECKPOINTS: frozenset({"GET", "POST"}),
    seam.MODIFY_CHECKPOINTS: frozenset({"POST", "DELETE"}),
    seam.SESSIONS: frozenset({"GET", "POST"}),
    seam.SESSION: frozenset({"GET", "PATCH", "DELETE"}),
    seam.KERNELS: frozenset({"GET", "POST"}),
    seam.KERNEL: frozenset({"GET", "DELETE"}),
    seam.KERNEL_ACTION: frozenset({"POST"}),
    seam.KERNEL_SOCKET: frozenset({"GET"}),
    seam.KERNELSPECS: frozenset({"GET"}),
    seam.KERNELSPEC: frozenset({"GET"}),
    seam.KERNELSPEC_RESOURCE: frozenset({"GET", "HEAD"}),
    seam.ROOM_SESSION: frozenset({"GET", "PUT"}),
    seam.ROOM_SOCKET: frozenset({"GET"}),
    seam.LAB_EXTENSIONS: frozenset({"GET"}),
}

# Authorizer resources (and actions) an agent may be granted; "approvals" is never one.
AGENT_RESOURCES: dict[str, frozenset[str]] = {
    "api": frozenset({"read"}),
    "contents": frozenset({"read", "write"}),
    "kernels": frozenset({"read", "write", "execute"}),
    "kernelspecs": frozenset({"read"}),
    "sessions": frozenset({"read", "write"}),
    "lab": frozenset({"read"}),
}

# Handlers whose path argument, or body fields, name a file of the server's contents.
_CONTENTS_HANDLERS = frozenset(
    {seam.CONTENTS, seam.CHECKPOINTS, seam.MODIFY_CHECKPOINTS, seam.ROOM_SESSION}
)
# Handlers whose JSON body names a path a kernel will run in, or a session's notebook.
_BODY_PATH_HANDLERS = frozenset({seam.SESSIONS, seam.SESSION, seam.KERNELS})
#: Pseudo-filesystems that expose processes' environments and command lines (tokens).
SYSTEM_DIRS = (Path("/proc"), Path("/sys"), Path("/dev"))


def handler_name(handler: object) -> str:
    """The exact class of a handler as ``module.qualname``."""
    cls = type(handler)
    return f"{cls.__module__}.{cls.__qualname__}"


def agent_may(resource: str, action: str) -> bool:
    """Whether the authorizer may grant an agent ``action`` on ``resource`` at all."""
    return action in AGENT_RESOURCES.get(resource, frozenset())


def forbidden(message: str, **details: Any) -> errors.ApprovalAgentForbidden:
    """The coded refusal of something agents may never do."""
    return errors.ApprovalAgentForbidden(message, **details)


def check_route(handler: web.RequestHandler) -> None:
    """Raise APPROVAL_AGENT_FORBIDDEN unless an agent may make this request at all."""
    name = handler_name(handler)
    method = (handler.request.method or "").upper()
    if method not in AGENT_HANDLERS.get(name, frozenset()):
        raise forbidden(
            f"Agents may not use {method} {handler.request.path}: it is not on the list of "
            "routes an agent client needs. Nothing was done.",
            path=handler.request.path,
            method=method,
        )


def request_paths(handler: web.RequestHandler) -> list[str]:
    """The contents paths a request names: its path argument and the body's path fields."""
    name = handler_name(handler)
    paths: list[str] = []
    if name in _CONTENTS_HANDLERS:
        if "path" in handler.path_kwargs:
            paths.append(str(handler.path_kwargs["path"] or ""))
        elif handler.path_args:
            paths.append(str(handler.path_args[0] or ""))
    if name in _CONTENTS_HANDLERS or name in _BODY_PATH_HANDLERS:
        body = _json_body(handler)
        for key in ("path", "copy_from"):
            value = body.get(key)
            if isinstance(value, str):
                paths.append(value)
    return paths


def os_path(root: Path, api_path: str) -> Path:
    """Where a contents API path lives below ``root``, split as jupyter_server splits it
    (on ``/`` only)."""
    return root.joinpath(*[p for p in api_path.split("/") if p])


def secret_path_reason(api_path: str, root: Path, secret_dirs: Iterable[Path]) -> str | None:
    """Why an agent may not touch ``api_path`` below ``root``, or None if it may.

    Refused: any hidden component (``.jupyter``, ``.ssh``, ``.env``), as written or after
    following symlinks below the root; anything that resolves into one of ``secret_dirs``
    (runtime dir with the server's token files and cookie secret, config and data dirs, the
    approvals state dir) or into ``/proc``, ``/sys`` or ``/dev`` (a process's environment and
    command line hold tokens); a path that escapes the root through a symlink into hidden places.
    """
    parts = [p for p in api_path.replace("\\", "/").split("/") if p and p != "."]
    if any(p.startswith(".") for p in parts):
        return "it is a hidden path"
    real_root = Path(os.path.realpath(root))
    real = Path(os.path.realpath(real_root.joinpath(*parts)))
    for directory in (*secret_dirs, *SYSTEM_DIRS):
        secret = Path(os.path.realpath(directory))
        if real == secret or secret in real.parents:
            return "it holds Jupyter's or jupyter-approvals' own files (tokens, configuration)"
    try:
        below = real.relative_to(real_root).parts
    except ValueError:
        below = real.parts
    if any(p.startswith(".") for p in below):
        return "it leads to a hidden path"
    return None


def json_body(raw: bytes) -> dict[str, Any]:
    """A request body read exactly as jupyter_server's ``get_json_body`` reads it.

    ``bytes.strip()`` first (it also removes ``\\x0b`` and ``\\x0c``, which JSON does not
    count as whitespace), then UTF-8 and JSON. Raises ValueError for a body jupyter_server
    could read but that is no JSON object, or that it could not read at all: what the gate
    screens must be what the handler will act on.
    """
    text = raw.strip().decode("utf-8") if raw else ""
    if not text:
        return {}
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("the body is not a JSON object")
    return data


def _json_body(handler: web.RequestHandler) -> dict[str, Any]:
    try:
        return json_body(handler.request.body)
    except (ValueError, UnicodeDecodeError):
        return {}  # admit() refuses such a request before anything acts on it
