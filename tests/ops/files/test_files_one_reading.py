"""The file operations' previews show what was fingerprinted, and writes go where approved."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_approvals.core import errors
from jupyter_approvals.ops import delete_path, move_path, write_file
from jupyter_approvals.ops.files import operations as files_module

from ..conftest import approve, ask, change_after_fingerprint, request_of


@pytest.fixture
def csv(session, tmp_path: Path) -> Path:
    path = tmp_path / "work" / "data.csv"
    path.write_text("id,name\n1,ann\n2,bob\n")
    return path


def test_the_write_preview_shows_the_content_that_was_fingerprinted(session, csv, monkeypatch):
    # Given a file that another writer changes right after the approval's reading of it
    change_after_fingerprint(session, monkeypatch, lambda: csv.write_text("changed in between\n"))
    # When its write is asked for
    info = approve(session, lambda: write_file(csv, "id,name\n1,ann\n"))
    # Then the card shows the diff against the content read for the fingerprint
    assert "size: 20 bytes -> 14 bytes" in info.preview
    assert "-2,bob" in info.preview
    assert "changed in between" not in info.preview
    # And the approved call refuses, since the file is not what the card showed
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        write_file(csv, "id,name\n1,ann\n")
    assert csv.read_text() == "changed in between\n"


def test_the_delete_preview_lists_the_tree_that_was_fingerprinted(session, tmp_path, monkeypatch):
    # Given a folder into which a file appears right after the approval's scan of it
    folder = tmp_path / "work" / "out"
    folder.mkdir()
    (folder / "a.csv").write_text("1\n")
    change_after_fingerprint(session, monkeypatch, lambda: (folder / "late.csv").write_text("2\n"))
    # When its deletion is asked for
    info = approve(session, lambda: delete_path(folder, recursive=True))
    # Then the card lists what was fingerprinted, without the late file
    assert "  a.csv  2 bytes" in info.preview
    assert "late.csv" not in info.preview
    # And the approved call refuses, since the folder holds more than the card showed
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        delete_path(folder, recursive=True)
    assert (folder / "late.csv").exists()


def test_the_move_preview_shows_the_destination_that_was_fingerprinted(session, csv, monkeypatch):
    # Given a destination that appears right after the approval's scan of both ends
    destination = csv.parent / "moved.csv"
    change_after_fingerprint(session, monkeypatch, lambda: destination.write_text("late\n"))
    # When the move is asked for (overwrite allowed)
    info = request_of(session, ask(lambda: move_path(csv, destination, overwrite=True)))
    # Then the card says the destination does not exist, as fingerprinted
    assert "destination now: does not exist yet" in info.preview
    assert "(replacing it)" not in info.summary


def test_a_symlink_swapped_in_at_write_time_refuses_and_writes_nothing(session, csv, monkeypatch):
    # Given an approved write of data.csv
    approve(session, lambda: write_file(csv, "x\n"))
    # And data.csv replaced by a symlink to another file once the run has started
    elsewhere = csv.parent / "elsewhere.csv"
    elsewhere.write_text("keep\n")
    real_require_lease = files_module.require_lease

    def swap_in_link(action):
        real_require_lease(action)
        csv.unlink()
        csv.symlink_to(elsewhere)

    monkeypatch.setattr(files_module, "require_lease", swap_in_link)
    # When it runs
    with pytest.raises(errors.ApprovalFingerprintMismatch) as refused:
        write_file(csv, "x\n")
    # Then it names both paths and the other file keeps its content
    assert str(elsewhere) in refused.value.message
    assert str(csv) in refused.value.message
    assert elsewhere.read_text() == "keep\n"
    assert csv.is_symlink()
