"""Shell: ``run_command`` (shell.run).

The operation lives in :mod:`.run` and its preview in :mod:`.preview`; this package is their
public home.
"""

from __future__ import annotations

from .run import SHELL, run_command

__all__ = ["SHELL", "run_command"]
