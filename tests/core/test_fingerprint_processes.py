"""Fingerprints across processes and threads, and what importing the core imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import zoneinfo
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from jupyter_approvals.core.errors import ApprovalUnfingerprintable
from jupyter_approvals.core.fingerprint import (
    fingerprint,
)

from .test_fingerprint import VECTORS
from .test_fingerprint_files import FILE_HELLO_DIGEST

REPO = Path(__file__).resolve().parents[2]
PARIS = zoneinfo.ZoneInfo("Europe/Paris")
NAN = float("nan")


# -- processes and imports ---------------------------------------------------------------

CROSS_PROCESS_SCRIPT = textwrap.dedent(
    """
    import datetime as dt, json, pathlib, sys
    import numpy as np, pandas as pd
    from jupyter_approvals.core.fingerprint import FileContent, fingerprint

    def subjects(path):
        frame = pd.DataFrame(
            {"x": np.linspace(0.0, 1.0, 1000), "s": pd.Series(["a", "b"] * 500, dtype=object)}
        )
        return {
            "builtins": {"b": [1, 2.5, None, True], "a": ("x", b"y"), "set": {"p", "q", "r"}},
            "array": np.arange(100_000, dtype="<f8").reshape(1000, 100)[:, ::3],
            "frame": frame,
            "file": FileContent(path),
            "mixed": {"when": dt.datetime(2024, 1, 1), "path": pathlib.PurePosixPath(path)},
        }

    path = sys.argv[1]
    print(json.dumps({k: fingerprint(v) for k, v in subjects(path).items()}))
    """
)


def test_same_fingerprints_in_another_process(tmp_path: Path) -> None:
    # Given a structure with an array, a DataFrame and a FileContent of a temp file
    path = tmp_path / "content.bin"
    path.write_bytes(bytes(range(256)) * 5000)
    namespace: dict[str, Any] = {}
    exec(CROSS_PROCESS_SCRIPT.split("path = sys.argv[1]")[0], namespace)
    here = {k: fingerprint(v) for k, v in namespace["subjects"](str(path)).items()}
    # When another interpreter (another hash seed) computes them
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONHASHSEED": "12345"}
    result = subprocess.run(
        [sys.executable, "-c", CROSS_PROCESS_SCRIPT, str(path)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
    )
    # Then they are identical
    assert json.loads(result.stdout) == here


def test_importing_the_core_imports_no_numpy_pandas_or_jupyter(tmp_path: Path) -> None:
    # Given a fresh interpreter that loads only the core package (not jupyter_approvals/__init__)
    script = textwrap.dedent(
        f"""
        import sys, types, json
        package = types.ModuleType("jupyter_approvals")
        package.__path__ = [{str(REPO / "jupyter_approvals")!r}]
        sys.modules["jupyter_approvals"] = package
        from jupyter_approvals.core.fingerprint import FileContent, fingerprint
        fingerprint({{"a": [1, 2.0, "x", b"y", None], "f": FileContent({str(tmp_path)!r} + "/x")}})
        heavy = ("numpy", "pandas", "ipykernel", "traitlets", "ipywidgets", "jupyter_client")
        print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in heavy)))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    # Then fingerprinting plain data loaded none of them
    assert json.loads(result.stdout) == []


def test_protocol_doc_vectors_are_the_frozen_ones() -> None:
    # Given the worked vectors in docs/protocol.md section 1.11
    doc = (REPO / "docs" / "protocol.md").read_text(encoding="utf-8")
    section = doc.split("### 1.11 Test vectors", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    documented = [row.rstrip(" |").rsplit("`", 2)[-2] for row in rows]
    # Then each one is a frozen vector of this file
    frozen = {expected for _, _, expected in VECTORS} | {FILE_HELLO_DIGEST}
    assert len(documented) >= 5
    assert set(documented) <= frozen


def test_columns_hashed_on_several_threads_give_the_same_fingerprint(monkeypatch):

    from jupyter_approvals.core.fingerprint import pandas_values as _fingerprint_pandas

    # Given frames of every layout: mixed blocks, Fortran order, row slices, a refused dtype
    rng = np.random.default_rng(3)
    mixed = pd.DataFrame(
        {
            "f": rng.random(50),
            "i": np.arange(50),
            "b": rng.random(50) > 0.5,
            "t": pd.date_range("2026-01-01", periods=50, freq="h"),
            "z": pd.date_range("2026-01-01", periods=50, freq="h", tz="Europe/Berlin"),
            "c": pd.Categorical(["a", "b"] * 25),
            "n": pd.array(range(50), dtype="Int64"),
            "o": ["x"] * 50,
        }
    )
    frames = [
        mixed,
        mixed.iloc[::2],
        pd.DataFrame(np.asfortranarray(rng.random((40, 6)))),
        pd.DataFrame(rng.random((40, 6))).T.T,
    ]

    def both_ways(frame):
        monkeypatch.setattr(_fingerprint_pandas, "PARALLEL_MIN_BYTES", 0)
        monkeypatch.setattr(_fingerprint_pandas, "_usable_cpus", lambda: 4)
        parallel = fingerprint({"df": frame})
        monkeypatch.setattr(_fingerprint_pandas, "_usable_cpus", lambda: 1)
        sequential = fingerprint({"df": frame})
        return parallel, sequential

    # When each is fingerprinted with columns hashed side by side and one after another
    for frame in frames:
        parallel, sequential = both_ways(frame)
        # Then the fingerprints are identical
        assert parallel == sequential
    # And a dtype without an encoding is refused the same way, naming the column
    if hasattr(np, "longdouble") and np.dtype(np.longdouble).itemsize > 8:
        bad = pd.DataFrame({"x": np.zeros(4, dtype=np.longdouble), "y": np.zeros(4)})
        monkeypatch.setattr(_fingerprint_pandas, "_usable_cpus", lambda: 4)
        with pytest.raises(ApprovalUnfingerprintable, match=r"df\.x"):
            fingerprint({"df": bad})
