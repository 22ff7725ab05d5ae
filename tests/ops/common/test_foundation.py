"""The pieces every ready operation shares: atomic replacement, bounded previews, extras."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from jupyter_approvals.core import atomic as _atomic
from jupyter_approvals.core import errors
from jupyter_approvals.core.atomic import atomic_replace
from jupyter_approvals.ops.common.extras import require
from jupyter_approvals.previews.text import plural, size_text


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(_atomic.TEMP_SUFFIX))


def test_replacement_keeps_the_mode_of_the_file_it_replaces(tmp_path):
    # Given an existing file with unusual permissions
    target = tmp_path / "data.csv"
    target.write_text("old")
    target.chmod(0o640)
    # When it is replaced
    with atomic_replace(target) as out:
        out.write(b"new")
    # Then the content is new, the mode is the old one, and nothing else is left behind
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert leftovers(tmp_path) == []


def test_a_new_file_gets_the_mode_the_umask_gives(tmp_path):
    # Given a umask of 027
    old = os.umask(0o027)
    try:
        # When a new file is written
        with atomic_replace(tmp_path / "new.txt") as out:
            out.write(b"x")
    finally:
        os.umask(old)
    # Then its mode is what open() would have given it
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o640


def write_then_fail(target: Path) -> None:
    with atomic_replace(target) as out:
        out.write(b"half of the new")
        raise RuntimeError("disk full")


def test_an_error_mid_write_leaves_the_target_untouched(tmp_path):
    # Given an existing file
    target = tmp_path / "data.csv"
    target.write_text("old")
    # When the writer fails halfway
    with pytest.raises(RuntimeError, match="disk full"):
        write_then_fail(target)
    # Then the old content is intact and no temporary file remains
    assert target.read_text() == "old"
    assert leftovers(tmp_path) == []


def test_a_temporary_file_of_a_killed_writer_is_removed_by_the_next_write(tmp_path):
    # Given a partial temporary file left by a writer process that no longer exists
    import subprocess

    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    target = tmp_path / "data.csv"
    target.write_text("old")
    abandoned = tmp_path / f".data.csv.{gone.stdout.strip()}.0123456789ab{_atomic.TEMP_SUFFIX}"
    abandoned.write_text("partial")
    # And one of a writer that is still running (this process)
    running = tmp_path / f".data.csv.{os.getpid()}.ba9876543210{_atomic.TEMP_SUFFIX}"
    running.write_text("in progress")
    # When the target is replaced
    with atomic_replace(target) as out:
        out.write(b"new")
    # Then the abandoned file is gone, the running writer's file is left alone
    assert target.read_text() == "new"
    assert leftovers(tmp_path) == [running.name]


def test_a_symlink_keeps_pointing_at_the_replaced_file(tmp_path):
    # Given a link to a data file
    real = tmp_path / "real.csv"
    real.write_text("old")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    # When the link's path is replaced
    with atomic_replace(link) as out:
        out.write(b"new")
    # Then the link is still a link and the file it names has the new content
    assert link.is_symlink()
    assert real.read_text() == "new"


def test_a_target_resolving_elsewhere_than_expected_is_refused_and_left_alone(tmp_path):
    # Given a path approved as the real file it named, then made a link to another file
    approved = tmp_path / "out.csv"
    other = tmp_path / "other.csv"
    other.write_text("keep")
    approved.symlink_to(other)
    # When it is replaced with the approved real path as expected
    with (
        pytest.raises(errors.ApprovalFingerprintMismatch) as refused,
        atomic_replace(approved, expected=str(approved)) as out,
    ):
        out.write(b"new")
    # Then the error names both paths, and nothing is written or left behind
    assert str(approved) in refused.value.message
    assert str(other) in refused.value.message
    assert other.read_text() == "keep"
    assert approved.is_symlink()
    assert leftovers(tmp_path) == []


def test_a_target_resolving_as_expected_is_replaced(tmp_path):
    # Given a link whose real file is the expected one
    real = tmp_path / "real.csv"
    real.write_text("old")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    # When it is replaced with that expectation
    with atomic_replace(link, expected=str(real)) as out:
        out.write(b"new")
    # Then the real file has the new content
    assert real.read_text() == "new"


def test_sizes_and_counts_read_naturally():
    assert size_text(1) == "1 byte"
    assert size_text(1_234_567) == "1,234,567 bytes (1.2 MiB)"
    assert plural(1, "row") == "1 row"
    assert plural(1204, "row") == "1,204 rows"


def test_a_missing_optional_package_names_the_extra(monkeypatch):
    # Given pyarrow is not importable
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    # When an operation requires it
    with pytest.raises(errors.ApprovalMissingDependency) as missing:
        require("pyarrow", "write Parquet files")
    # Then the error says what to install
    assert missing.value.code == "APPROVAL_MISSING_DEPENDENCY"
    assert missing.value.details["extra"] == "tables"
    assert "pip install '/path/to/your/clone[tables]'" in str(missing.value)


def test_importing_the_ops_package_imports_no_optional_package():
    # Given a fresh interpreter
    import subprocess

    code = (
        "import sys, jupyter_approvals.ops as ops; "
        "print(sorted(m for m in ('pandas', 'pyarrow', 'sqlalchemy') if m in sys.modules))"
    )
    # When only the ops package is imported
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # Then none of the optional packages was loaded
    assert out.stdout.strip() == "[]"


def test_every_operation_refuses_arguments_with_one_code_and_one_closing_sentence():
    from jupyter_approvals.ops.common.refusal import invalid_argument

    # When refusals are built with and without their own full stop
    plain = invalid_argument("path must be a file", argument="path")
    stopped = invalid_argument("path must be a file.")
    # Then both read the same and say that nothing happened
    assert plain.code == "APPROVAL_INVALID_ARGUMENT"
    assert plain.message == stopped.message == "path must be a file. Nothing was asked or run."
    assert plain.details == {"argument": "path"}
