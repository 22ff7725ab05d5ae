"""The package as a user gets it: a wheel built from a clean clone (npm builds the sidebar),
installed with JupyterLab into a fresh virtualenv, with both extensions enabled."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.install

ROOT = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def run(*args: str | Path, cwd: Path | None = None, timeout: float = 900) -> str:
    # A clean environment for Jupyter: nothing of the test run's own configuration leaks in.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_", "VIRTUAL_ENV"))}
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return ANSI.sub("", done.stdout + done.stderr)


def test_a_wheel_from_a_clean_clone_installs_with_both_extensions_enabled(tmp_path: Path):
    # Given a clean clone of the repository (what is committed, no build output)
    clone = tmp_path / "clone"
    run("git", "clone", "--quiet", ROOT, clone)
    # When its wheel is built as `pip` builds it (isolated; npm builds the sidebar)
    run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", tmp_path, clone)
    [wheel] = tmp_path.glob("jupyter_approvals-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    # Then it carries the license and the prebuilt sidebar with its install.json
    assert any(
        re.fullmatch(r"jupyter_approvals-[^/]+\.dist-info/(licenses/)?LICENSE", n) for n in names
    )
    lab = "share/jupyter/labextensions/jupyter-approvals/"
    assert any(n.endswith(lab + "install.json") for n in names)
    assert any(n.endswith(lab + "package.json") for n in names)
    # And the JSON Schemas of the contract, which the package loads at run time
    schema_dir = ROOT / "jupyter_approvals" / "core" / "schemas"
    for schema in schema_dir.glob("*.schema.json"):
        assert f"jupyter_approvals/core/schemas/{schema.name}" in names
    assert len(list(schema_dir.glob("*.schema.json"))) >= 3
    # When it is installed with JupyterLab into a fresh virtualenv
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", venv)
    python = venv / "bin" / "python"
    run(python, "-m", "pip", "install", "--quiet", wheel, "jupyterlab>=4,<5")
    jupyter = venv / "bin" / "jupyter"
    # Then jupyter lists both extensions enabled and loading
    servers = run(jupyter, "server", "extension", "list")
    assert "jupyter_approvals enabled" in servers
    assert re.search(r"jupyter_approvals \S+ OK", servers)
    labs = run(jupyter, "labextension", "list")
    assert re.search(r"jupyter-approvals v\S+ enabled\s+OK \(python, jupyter-approvals\)", labs)
