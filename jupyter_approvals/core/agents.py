"""The agent registry: who may connect to the Jupyter server as an agent, by token.

A person registers each agent once (``jupyter approvals agent add NAME``) and hands it the
token printed then. Only the sha256 of a token is stored, in ``<state dir>/agents.json``
(:func:`registry_path`), the file the CLI writes and the server reads; directory 0700, file
0600, replaced atomically under a lock so that two commands never lose each other's change.

The server keeps one :class:`AgentRegistry` and asks it about every request that carries a
token. It re-reads the file whenever the file's identity changes (one ``stat`` per lookup),
so a removal takes effect at once in a running server. A file that cannot be parsed refuses
every agent token: a broken registry must never let an agent in as the person.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import hmac
import json
import os
import re
import secrets
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from .atomic import atomic_replace
from .errors import (
    ApprovalAgentExists,
    ApprovalAgentRegistryUnreadable,
    ApprovalInvalidArgument,
    ApprovalUnknownAgent,
)
from .journal.files import make_private_dirs
from .model import iso_utc

if sys.platform != "win32":
    import fcntl

#: File name of the registry inside the state directory.
REGISTRY_FILENAME: Final = "agents.json"
#: Every agent token starts with this, so a person (and a secret scanner) recognises one.
TOKEN_PREFIX: Final = "jpagent_"
#: Agent names: lower-case letters, digits, ``-`` and ``_``; at most 40 characters.
NAME_PATTERN: Final = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
#: The programs that run agents in the server without a token of this registry ("" for an
#: agent with its own token): Jupyter AI's ACP agents.
RUNNERS: Final = ("", "jupyter-ai")
#: Version of the registry file format.
SCHEMA_VERSION: Final = 1
#: Names starting with this are agents the server knows by a JupyterHub token
#: (core/hub_identity.py); ``agent add`` refuses them.
HUB_NAME_PREFIX: Final = "hub-"
#: Names starting with this are Jupyter AI's agents (server/jupyter_ai); ``agent add`` refuses
#: them.
JUPYTER_AI_NAME_PREFIX: Final = "jupyter-ai-"


def registry_path(state_dir: str | os.PathLike[str]) -> Path:
    """Where the registry of ``state_dir`` lives (the CLI and the server use this one place)."""
    return Path(state_dir) / REGISTRY_FILENAME


def new_token() -> str:
    """A fresh agent token: the prefix and 256 random bits, URL-safe."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    """The stored form of a token: sha256 in hex (tokens are random, so no slow hash is needed)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def check_name(name: object) -> str:
    """``name`` if it is a valid agent name, else APPROVAL_INVALID_ARGUMENT."""
    if not isinstance(name, str) or NAME_PATTERN.fullmatch(name) is None:
        raise ApprovalInvalidArgument(
            f"{name!r} is not a valid agent name: use 1-40 lower-case letters, digits, '-' or "
            "'_', starting with a letter or digit.",
            name=name if isinstance(name, str) else None,
        )
    return name


@dataclass(frozen=True)
class AgentRecord:
    """One registered agent: its name, the hash of its token, when it was added.

    An agent of a JupyterHub token (``hub``) has no token here: the hub checks it, expires
    and revokes it; the record holds its name and whether the person paused it. So has an
    agent another program runs in the server (``runner``: ``"jupyter-ai"`` for Jupyter AI's
    agents), which reaches the server through that program, never with a token.
    """

    name: str
    token_sha256: str
    created_at: str
    paused: bool = False
    hub: bool = False
    runner: str = ""

    @property
    def tokenless(self) -> bool:
        """Whether the agent has no token of this registry (a hub's, or another program's)."""
        return self.hub or bool(self.runner)

    def to_json(self) -> dict[str, Any]:
        """The form stored in the registry file."""
        stored: dict[str, Any] = {
            "name": self.name,
            "token_sha256": None if self.tokenless else self.token_sha256,
            "created_at": self.created_at,
            "paused": self.paused,
        }
        if self.hub:
            stored["hub"] = True
        if self.runner:
            stored["runner"] = self.runner
        return stored

    def public(self) -> dict[str, Any]:
        """What ``agent list`` shows: everything but the hash."""
        return {
            "name": self.name,
            "created_at": self.created_at,
            "paused": self.paused,
            "hub": self.hub,
            "runner": self.runner or None,
        }


def _parse(raw: bytes, path: Path) -> dict[str, AgentRecord]:
    try:
        data = json.loads(raw.decode("utf-8"))
        if not isinstance(data, dict) or data.get("v") != SCHEMA_VERSION:
            raise ValueError("not a version 1 registry")
        records: dict[str, AgentRecord] = {}
        for item in data["agents"]:
            paused = item.get("paused", False)
            if not isinstance(paused, bool):
                raise ValueError(f"'paused' of {item['name']!r} is not true or false")
            hub = item.get("hub", False)
            if not isinstance(hub, bool):
                raise ValueError(f"'hub' of {item['name']!r} is not true or false")
            runner = item.get("runner", "")
            if runner not in RUNNERS:
                raise ValueError(f"'runner' of {item['name']!r} is not one of {RUNNERS}")
            tokenless = hub or bool(runner)
            record = AgentRecord(
                name=check_name(item["name"]),
                token_sha256="" if tokenless else str(item["token_sha256"]),
                created_at=str(item["created_at"]),
                paused=paused,
                hub=hub,
                runner=runner,
            )
            token_ok = (
                item.get("token_sha256") is None
                if tokenless
                else re.fullmatch(r"[0-9a-f]{64}", record.token_sha256) is not None
            )
            if not token_ok or record.name in records:
                raise ValueError(f"bad entry {record.name!r}")
            records[record.name] = record
    except (ValueError, KeyError, TypeError, UnicodeDecodeError, ApprovalInvalidArgument) as exc:
        raise ApprovalAgentRegistryUnreadable(
            f"The agent registry {path} cannot be read ({exc}); every agent token is refused "
            "until it is repaired or removed.",
            path=str(path),
        ) from None
    return records


def _serialise(records: dict[str, AgentRecord]) -> bytes:
    body = {"v": SCHEMA_VERSION, "agents": [r.to_json() for r in records.values()]}
    return (json.dumps(body, indent=1, sort_keys=True) + "\n").encode("utf-8")


class AgentRegistry:
    """The registered agents of one state directory, read from and written to its file."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._seen: tuple[int, int, int, int] | None = None
        self._records: dict[str, AgentRecord] = {}
        self._by_hash: dict[str, AgentRecord] = {}
        self._problem: ApprovalAgentRegistryUnreadable | None = None

    # -- reading ---------------------------------------------------------------------

    def records(self) -> dict[str, AgentRecord]:
        """Every registered agent by name, as the file says now (raises if it is unreadable)."""
        with self._lock:
            self._refresh_locked()
            if self._problem is not None:
                raise self._problem
            return dict(self._records)

    def match(self, token: str) -> AgentRecord | None:
        """The agent whose token this is, or None. Unreadable registry: None for every token."""
        if not token.startswith(TOKEN_PREFIX):
            return None
        digest = hash_token(token)
        with self._lock:
            self._refresh_locked()
            if self._problem is not None:
                return None
            record = self._by_hash.get(digest)
        if record is None or not hmac.compare_digest(record.token_sha256, digest):
            return None
        return record

    def is_registered(self, name: str) -> bool:
        """True while an agent of this name is in the registry (and the registry is readable)."""
        with self._lock:
            self._refresh_locked()
            return self._problem is None and name in self._records

    def is_active(self, name: str) -> bool:
        """True while agent ``name`` is registered and not paused."""
        with self._lock:
            self._refresh_locked()
            record = self._records.get(name) if self._problem is None else None
            return record is not None and not record.paused

    @property
    def problem(self) -> ApprovalAgentRegistryUnreadable | None:
        """Why the registry is unreadable, if it is."""
        with self._lock:
            self._refresh_locked()
            return self._problem

    def _refresh_locked(self) -> None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            self._seen, self._records, self._by_hash, self._problem = None, {}, {}, None
            return
        except OSError as exc:
            self._seen, self._problem = None, self._unreadable(exc)
            return
        key = (st.st_ino, st.st_mtime_ns, st.st_size, st.st_ctime_ns)
        if key == self._seen:
            return
        try:
            records = _parse(self.path.read_bytes(), self.path)
        except ApprovalAgentRegistryUnreadable as exc:
            self._seen, self._records, self._by_hash, self._problem = key, {}, {}, exc
            return
        except OSError as exc:
            self._seen, self._problem = None, self._unreadable(exc)
            return
        self._seen, self._records, self._problem = key, records, None
        self._by_hash = {r.token_sha256: r for r in records.values() if not r.tokenless}

    def _unreadable(self, exc: OSError) -> ApprovalAgentRegistryUnreadable:
        return ApprovalAgentRegistryUnreadable(
            f"The agent registry {self.path} cannot be read ({exc}); every agent token is refused.",
            path=str(self.path),
        )

    # -- writing ---------------------------------------------------------------------

    def add(self, name: str) -> tuple[AgentRecord, str]:
        """Register ``name`` and return its record and its token (shown once, never stored)."""
        check_name(name)
        for prefix, whose in (
            (HUB_NAME_PREFIX, "agents of JupyterHub tokens"),
            (JUPYTER_AI_NAME_PREFIX, "Jupyter AI's agents"),
        ):
            if name.startswith(prefix):
                raise ApprovalInvalidArgument(
                    f"{name!r} is not a valid agent name: names starting with {prefix!r} are "
                    f"the server's for {whose}.",
                    name=name,
                )
        token = new_token()
        with self._edit() as records:
            if name in records:
                raise ApprovalAgentExists(
                    f"An agent named {name!r} is already registered. Remove it first "
                    f"('jupyter approvals agent remove {name}') to issue a new token.",
                    name=name,
                )
            record = AgentRecord(name, hash_token(token), iso_utc(time.time()))
            records[name] = record
        return record, token

    def hub_agent(self, name: str) -> AgentRecord:
        """The record of the agent of a JupyterHub token named ``name``, registered on first
        sight (no token is stored: the hub checks it). Raises if the registry is unreadable,
        or if ``name`` is another kind of agent."""
        return self._tokenless(name, hub=True)

    def runner_agent(self, name: str, runner: str) -> AgentRecord:
        """The record of agent ``name`` that ``runner`` (one of :data:`RUNNERS`) runs in the
        server, registered on first sight. Raises like :meth:`hub_agent`."""
        if runner not in RUNNERS or not runner:
            raise ApprovalInvalidArgument(f"{runner!r} is not one of {RUNNERS[1:]}.")
        return self._tokenless(name, runner=runner)

    def _tokenless(self, name: str, hub: bool = False, runner: str = "") -> AgentRecord:
        check_name(name)
        with self._lock:
            self._refresh_locked()
            if self._problem is not None:
                raise self._problem
            known = self._records.get(name)
        if known is not None and (known.hub, known.runner) == (hub, runner):
            return known
        with self._edit() as records:
            record = records.get(name)
            if record is None:
                record = records[name] = AgentRecord(
                    name, "", iso_utc(time.time()), hub=hub, runner=runner
                )
            elif (record.hub, record.runner) != (hub, runner):
                raise ApprovalAgentExists(
                    f"An agent named {name!r} is registered as another kind of agent.", name=name
                )
        return record

    def remove(self, name: str) -> AgentRecord:
        """Unregister ``name``: its token stops working at once."""
        with self._edit() as records:
            record = records.pop(name, None)
            if record is None:
                raise ApprovalUnknownAgent(f"No agent named {name!r} is registered.", name=name)
        return record

    def set_paused(self, name: str, paused: bool) -> AgentRecord:
        """Pause agent ``name`` (its token is refused, nothing of it is held) or resume it."""
        with self._edit() as records:
            record = records.get(name)
            if record is None:
                raise ApprovalUnknownAgent(f"No agent named {name!r} is registered.", name=name)
            record = records[name] = dataclasses.replace(record, paused=paused)
        return record

    @contextlib.contextmanager
    def _edit(self) -> Iterator[dict[str, AgentRecord]]:
        """Read, let the caller change, and replace the file, all under an exclusive lock."""
        make_private_dirs(self.path.parent)
        lock_path = self.path.with_name(self.path.name + ".lock")
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            if sys.platform != "win32":
                fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                raw = self.path.read_bytes()
            except FileNotFoundError:
                records: dict[str, AgentRecord] = {}
            else:
                records = _parse(raw, self.path)
            yield records
            with atomic_replace(self.path, mode=0o600) as handle:
                handle.write(_serialise(records))
        finally:
            os.close(fd)  # closing the descriptor releases the lock
        with self._lock:
            self._seen = None
