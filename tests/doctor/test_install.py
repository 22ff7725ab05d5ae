"""The installed package is wired into Jupyter: server extension enabled, sidebar present."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

JUPYTER = str(Path(sys.executable).with_name("jupyter"))
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def jupyter(*args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER_")}
    result = subprocess.run(
        [JUPYTER, *args], capture_output=True, text=True, env=env, timeout=120, check=True
    )
    return ANSI.sub("", result.stdout + result.stderr)


def test_server_extension_is_enabled_and_validates():
    # When jupyter lists its server extensions
    listing = jupyter("server", "extension", "list")
    # Then ours is enabled and loads
    assert "jupyter_approvals enabled" in listing
    assert re.search(r"jupyter_approvals \S+ OK", listing)


@pytest.mark.sidebar
def test_sidebar_labextension_is_installed_and_enabled():
    listing = jupyter("labextension", "list")
    assert re.search(r"jupyter-approvals v\S+ enabled\s+OK", listing)
