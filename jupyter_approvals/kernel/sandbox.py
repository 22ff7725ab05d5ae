"""Whether this kernel runs in a jupyter-approvals sandbox, and what that means for a protected
operation called in it.

In a sandboxed kernel ("Python 3 (sandboxed)", docs/security.md "The sandbox") every file the
kernel writes in the project is staged in its overlay and reaches the project only when a
person applies the kernel's change set, and there is no network. So:

- an operation whose effect is on files (``file.*``, ``table.write``, ``git.commit``,
  ``shell.run``, SQL on SQLite) runs at once, without a card: its effect waits in the change
  set, which is the one approval it needs. It is journaled ``staged``, then ``executed`` or
  ``failed``;
- an operation that needs the network (``http.request``, ``git.push``, SQL on a server
  database) is refused with ``APPROVAL_SANDBOX_NO_NETWORK``, saying what to do instead;
- any other protected function (the person's own) asks with a card as everywhere.

The kernel is taken as sandboxed only when everything agrees: the server named it so in its
environment, its working folder is an overlay mount, and it has no network interface but
loopback. Code in the kernel can fake each of these, as it can defeat any check made in the
kernel (docs/security.md, T3); faking them in a kernel that is not sandboxed gains nothing a
cell could not do directly.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from ..core.protocol import SANDBOX_ENVIRONMENT

Effect = Literal["staged", "network"]

#: Actions whose whole effect is on files (their own, or the project's through the overlay).
_STAGED_ACTIONS = frozenset(
    {"file.write", "file.delete", "file.move", "table.write", "git.commit", "shell.run"}
)
#: Actions that always need the network.
_NETWORK_ACTIONS = frozenset({"http.request", "git.push"})
#: Actions whose effect is on a database: staged for SQLite (a file), network for a server.
_DATABASE_ACTIONS = frozenset({"sql.execute", "table.to_sql"})


@functools.cache
def in_sandbox() -> bool:
    """Whether this process runs in a jupyter-approvals sandbox (looked at once)."""
    return bool(os.environ.get(SANDBOX_ENVIRONMENT)) and _cwd_is_overlay() and _no_network()


def _cwd_is_overlay() -> bool:
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return False
    cwd = os.getcwd()
    mounts: dict[str, str] = {}
    for line in lines:
        fields = line.split(" ")
        if " - " not in line or len(fields) < 5:
            continue
        after = line.split(" - ", 1)[1].split(" ")
        mounts[fields[4]] = after[0]  # the mount point, then its file system type
    # The deepest mount point that holds the working folder.
    holding = max((point for point in mounts if _within(cwd, point)), key=len, default="")
    # The sandbox mounts the project itself as an overlay; a container's overlay root is not.
    return holding != "/" and mounts.get(holding) == "overlay"


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _no_network() -> bool:
    try:
        lines = Path("/proc/net/dev").read_text().splitlines()[2:]
    except OSError:
        return False
    interfaces = {line.split(":", 1)[0].strip() for line in lines if ":" in line}
    return interfaces <= {"lo"}


def sandbox_effect(action: str, arguments: Mapping[str, Any]) -> Effect | None:
    """What a protected ``action`` called with ``arguments`` does in a sandboxed kernel: its
    effect is staged, it needs the network, or (None) it asks a person as usual."""
    if action in _STAGED_ACTIONS:
        return "staged"
    if action in _NETWORK_ACTIONS:
        return "network"
    if action in _DATABASE_ACTIONS:
        dialects = {
            getattr(value, "dialect", None)
            for value in arguments.values()
            if isinstance(getattr(value, "dialect", None), str)
        }
        if dialects and dialects <= {"sqlite"}:
            return "staged"
        return "network" if dialects else None
    return None
