"""The folders of a Jupyter server that hold the person's secrets and settings.

Agents may not touch them over the contents API (the runtime folder with the kernels'
connection files and the server's own, the cookie secret, the approvals state folder, Jupyter's
data, config and kernel-spec paths), and a sandboxed kernel's code cannot read them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jupyter_core.paths import (
    jupyter_config_dir,
    jupyter_config_path,
    jupyter_data_dir,
    jupyter_path,
)


def _server_own(serverapp: Any, state_dir: Path) -> list[Path]:
    return [
        Path(serverapp.runtime_dir),
        state_dir,
        Path(jupyter_data_dir()),
        Path(serverapp.cookie_secret_file).parent,
    ]


def secret_dirs(serverapp: Any, state_dir: Path) -> list[Path]:
    """Where agents may not read or write over the contents API."""
    dirs = _server_own(serverapp, state_dir)
    dirs.extend(Path(p) for p in jupyter_config_path())
    dirs.extend(Path(p) for p in jupyter_path())
    return dirs


def sandbox_hidden(serverapp: Any, state_dir: Path) -> list[Path]:
    """What a sandboxed kernel's code may not read (even where the allowlist would let it)."""
    hidden = _server_own(serverapp, state_dir)
    hidden.append(Path(jupyter_config_dir()))
    hidden.extend(Path(p) for p in jupyter_config_path())
    return hidden
