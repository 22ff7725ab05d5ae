"""The upstream comparison's own logic: whose pytest configuration a suite runs with, and that
a differing test the re-run could not run stays a difference."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def runner():
    spec = importlib.util.spec_from_file_location("run_upstream", HERE / "run_upstream.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["run_upstream"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("run_upstream", None)


def test_an_sdist_without_pytest_configuration_gets_an_empty_one(runner, tmp_path):
    # Given an sdist whose pyproject.toml has no pytest section (as jupyter_server_ydoc's)
    tree = tmp_path / "pkg-1.0"
    tree.mkdir()
    (tree / "pyproject.toml").write_text("[project]\nname = 'pkg'\n")
    # When its root is anchored
    runner.anchor_rootdir(tree)
    # Then pytest finds an empty configuration there, not the one of a folder above
    assert (tree / "pytest.ini").read_text().splitlines()[-1] == "[pytest]"
    assert runner.has_pytest_config(tree)


def test_an_sdist_with_its_own_pytest_configuration_keeps_it(runner, tmp_path):
    # Given an sdist with a pytest section in its pyproject.toml (as jupyter_server's)
    tree = tmp_path / "pkg-1.0"
    tree.mkdir()
    (tree / "pyproject.toml").write_text("[tool.pytest.ini_options]\ntimeout = 100\n")
    # When its root is anchored
    runner.anchor_rootdir(tree)
    # Then nothing is added
    assert not (tree / "pytest.ini").exists()


def test_a_differing_test_the_rerun_could_not_run_stays_a_difference(
    runner, tmp_path, monkeypatch, capsys
):
    # Given two differing tests, one the re-run passes in both modes, one it cannot find
    flaky, lost = "tests/test_a.py::test_flaky", "tests/test_b.py::test_lost"

    def rerun(python, tree, label, mode, tests, out_dir, limits):
        run = runner.Run(mode, log=out_dir / f"{mode}.log")
        run.outcomes[flaky] = {"outcome": "passed"}
        return run

    monkeypatch.setattr(runner, "run_suite", rerun)
    args = argparse.Namespace(python=sys.executable, limits=None)
    # When they are confirmed
    confirmed = runner.confirm(args, tmp_path, "pkg-1.0", tmp_path, [flaky, lost])
    # Then only the one that ran and passed is ruled out
    assert confirmed == [lost]
    assert "not re-run, so not ruled out" in capsys.readouterr().out
