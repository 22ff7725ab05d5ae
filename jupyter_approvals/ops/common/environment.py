"""The environment a program the operations start receives, and the digest that binds it.

Shell and git approvals cover the whole environment the child gets (the kernel's
``os.environ`` with the call's changes applied) by this digest, so a variable set, changed or
removed in the kernel after the preview refuses the run.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping


def child_environment(changes: Mapping[str, str | None]) -> dict[str, str]:
    """The kernel's environment with ``changes`` applied: what the command runs with."""
    environment = dict(os.environ)
    for name, value in changes.items():
        if value is None:
            environment.pop(name, None)
        else:
            environment[name] = value
    return environment


def environment_digest(environment: Mapping[str, str]) -> str:
    """sha256 over the sorted ``name=value`` pairs of ``environment`` (NUL-separated)."""
    digest = hashlib.sha256()
    for name, value in sorted(environment.items()):
        # os.environ holds undecodable bytes as surrogates; surrogateescape gives them back.
        digest.update(f"{name}={value}".encode("utf-8", "surrogateescape") + b"\0")
    return digest.hexdigest()
