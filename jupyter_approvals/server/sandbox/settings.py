"""The settings every sandboxed kernel's provisioner gets (made when the server starts), and
the one try of bubblewrap per process."""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ...core.bubblewrap import BubblewrapMissing, find_bubblewrap, sandbox_problems
from .command import python_paths

#: Folder of the sandboxed kernels' own folders, below the server's state folder.
KERNELS_FOLDER = "sandbox"

#: Key of the web app's settings under which the extension leaves :class:`SandboxSettings`.
SANDBOX_SETTING = "jupyter_approvals_sandbox"


@dataclass(frozen=True)
class SandboxSettings:
    """What the server extension tells every sandboxed kernel's provisioner."""

    #: ``c.ApprovalsServer.sandbox_bwrap``: the ``bwrap`` to use, or "" to look for one.
    configured_bwrap: str
    project: Path
    #: Root of the kernels' own folders (sockets, overlay), in the server's state folder.
    kernels_root: Path
    #: The Python folders and the folders the person added, read-only in the sandbox.
    readable: tuple[Path, ...]
    #: Folders never shown: the Jupyter runtime, config and data folders, the state folder.
    hidden: tuple[Path, ...]
    home: Path
    home_bytes: int
    tmp_bytes: int
    #: Most processes and threads of one kernel's sandbox at once.
    processes: int = 512
    #: Most bytes one kernel's overlay may hold (and the largest file it may write).
    overlay_bytes: int = 4 << 30


def sandbox_settings(
    configured_bwrap: str,
    project: Path,
    state_dir: Path,
    added_readable: Iterable[Path],
    hidden: Iterable[Path],
    home_bytes: int,
    tmp_bytes: int,
    processes: int = 512,
    overlay_bytes: int = 4 << 30,
) -> SandboxSettings:
    """The settings of this server's sandboxed kernels; bubblewrap is found and tried when the
    first one starts (:func:`find_and_try`), not when the server starts."""
    python = python_paths(
        {sys.prefix, sys.base_prefix, sys.exec_prefix, str(Path(sys.executable).resolve().parent)},
        sys.path,
    )
    return SandboxSettings(
        configured_bwrap=configured_bwrap,
        project=project,
        kernels_root=state_dir / KERNELS_FOLDER,
        readable=(*python, *added_readable),
        hidden=tuple(hidden),
        home=Path.home(),
        home_bytes=home_bytes,
        tmp_bytes=tmp_bytes,
        processes=processes,
        overlay_bytes=overlay_bytes,
    )


@functools.cache
def find_and_try(configured_bwrap: str) -> tuple[str | None, str]:
    """The ``bwrap`` to use and ``""``, or None and why the sandbox is unavailable: found
    (:func:`.bubblewrap.find_bubblewrap`) and tried once per process (a sandbox that writes
    one file through an overlay)."""
    try:
        found = find_bubblewrap(configured_bwrap)
    except BubblewrapMissing as missing:
        return None, str(missing)
    problems = sandbox_problems(found)
    return (None, "; ".join(problems)) if problems else (found.path, "")
