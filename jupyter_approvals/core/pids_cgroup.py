"""A pids cgroup for a sandboxed kernel whose processes ``RLIMIT_NPROC`` cannot bound.

Linux does not enforce ``RLIMIT_NPROC`` for root (user id 0 of the host, which a user namespace
does not change). A server run as root therefore bounds each sandboxed kernel's processes with
a cgroup of its own under the cgroup v1 ``pids`` hierarchy, where that hierarchy is mounted and
writable (containers and CI machines that run as root). The launch command first moves itself
into the cgroup, then becomes bubblewrap, so every process of the sandbox is counted from the
first. Elsewhere (cgroup v2 only, no delegation) nothing is made and the doctor says so.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path

#: Where the cgroup v1 pids hierarchy is mounted.
PIDS_HIERARCHY = Path("/sys/fs/cgroup/pids")
#: Moves the shell into the cgroup whose ``cgroup.procs`` is $0, then runs "$@".
_ENTER = 'echo $$ > "$0" && exec "$@"'


def needs_pids_cgroup() -> bool:
    """Whether ``RLIMIT_NPROC`` leaves the kernel's processes unbounded here (root)."""
    return os.geteuid() == 0


def own_pids_cgroup(hierarchy: Path = PIDS_HIERARCHY) -> Path | None:
    """This process's cgroup in the pids hierarchy, if it is mounted and writable."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "pids" in controllers.split(","):
            folder = hierarchy / path.lstrip("/")
            if (folder / "cgroup.procs").exists() and os.access(folder, os.W_OK):
                return folder
    return None


def make_pids_cgroup(name: str, most: int, hierarchy: Path = PIDS_HIERARCHY) -> Path | None:
    """A new cgroup ``name`` below this process's, limited to ``most`` processes; None where
    none can be made."""
    parent = own_pids_cgroup(hierarchy)
    if parent is None:
        return None
    folder = parent / name
    try:
        folder.mkdir(exist_ok=True)
        (folder / "pids.max").write_text(str(most))
    except OSError:
        return None
    return folder


def entering(cgroup: Path | None, argv: Sequence[str]) -> list[str]:
    """``argv``, run from inside ``cgroup`` (unchanged without one)."""
    if cgroup is None:
        return list(argv)
    return ["/bin/sh", "-c", _ENTER, str(cgroup / "cgroup.procs"), *argv]


def remove_pids_cgroup(cgroup: Path | None) -> None:
    """Remove the kernel's cgroup once its processes are gone (kept while any remain)."""
    if cgroup is not None:
        with contextlib.suppress(OSError):  # processes remain: kept, as the kernel's own
            cgroup.rmdir()
