"""write_file, delete_path and move_path on real files, with approvals made in-process."""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

import pytest

import jupyter_approvals as ja
from jupyter_approvals.core import errors
from jupyter_approvals.ops import delete_path, move_path, write_file
from jupyter_approvals.ops.files import operations as files_module
from jupyter_approvals.ops.files import previews as file_previews
from jupyter_approvals.previews.text import PREVIEW_BUDGET

from ..conftest import approve, ask, decide, request_of


@pytest.fixture
def csv(session, tmp_path: Path) -> Path:
    path = tmp_path / "work" / "data.csv"
    path.write_text("id,name\n1,ann\n2,bob\n3,cy\n")
    path.chmod(0o640)
    return path


# -- write_file -------------------------------------------------------------------------------


def test_write_shows_a_diff_then_replaces_the_file_keeping_its_mode(session, csv):
    # Given an existing CSV and new content changing one row
    new = "id,name\n1,ann\n2,bea\n3,cy\n"
    # When the write is asked for
    info = approve(session, lambda: write_file(str(csv), new))
    # Then the card names the file, the sizes and the exact change
    assert info.action == "file.write"
    assert info.summary == f"Replace {csv} (25 bytes)"
    assert f"file: {csv}\nchange: Replace\n" in info.preview
    assert "size: 25 bytes -> 25 bytes" in info.preview
    assert "mode: 0o640 (kept)" in info.preview
    assert info.preview.startswith("1 line to add, 1 line to remove\n")
    assert "-2,bob\n+2,bea" in info.preview
    # And once approved, calling again writes it, keeping the file's mode
    assert write_file(str(csv), new) == 25
    assert csv.read_text() == new
    assert csv.stat().st_mode & 0o777 == 0o640
    # And a second run needs a new approval
    ask(lambda: write_file(str(csv), new))


def test_write_of_a_new_file_shows_all_lines_added(session, tmp_path):
    target = tmp_path / "work" / "new.txt"
    info = approve(session, lambda: write_file(target, b"a\nb\n"))
    assert info.summary.startswith("Create ")
    assert "--- /dev/null" in info.preview
    assert "+a\n+b" in info.preview
    assert "mode: new file (umask)" in info.preview
    write_file(target, b"a\nb\n")
    assert target.read_bytes() == b"a\nb\n"


def test_write_after_the_file_changed_refuses(session, csv):
    # Given an approved write
    approve(session, lambda: write_file(str(csv), "x\n"))
    # When someone changes the file before the run
    csv.write_text("changed meanwhile\n")
    # Then the run refuses and the file keeps the other change
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        write_file(str(csv), "x\n")
    assert csv.read_text() == "changed meanwhile\n"


def test_write_after_a_chmod_refuses(session, csv):
    approve(session, lambda: write_file(str(csv), "x\n"))
    csv.chmod(0o755)
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        write_file(str(csv), "x\n")
    assert csv.read_text().startswith("id,name")


def test_a_rejected_write_does_not_run(session, csv):
    pending = ask(lambda: write_file(str(csv), "x\n"))
    decide(session, pending, "reject", reason="wrong file")
    with pytest.raises(errors.ApprovalRejected):
        write_file(str(csv), "x\n")
    assert csv.read_text().startswith("id,name")


def test_binary_content_shows_sizes_and_hashes_only(session, csv):
    info = request_of(session, ask(lambda: write_file(str(csv), b"\x00\x01" * 10)))
    assert "sha256: " in info.preview
    assert "Binary content" in info.preview
    assert "@@" not in info.preview


def test_the_preview_of_a_huge_rewrite_stays_bounded(session, tmp_path):
    # Given a 300,000-line file rewritten on every line
    target = tmp_path / "work" / "big.txt"
    target.write_bytes(b"".join(b"old %d\n" % n for n in range(300_000)))
    new = b"".join(b"new %d\n" % n for n in range(300_000))
    # When the write is asked for
    info = request_of(session, ask(lambda: write_file(target, new)))
    # Then the preview is within budget, with all counts and the cut announced
    assert len(info.preview) <= PREVIEW_BUDGET
    assert info.preview.startswith("300,000 lines to add, 300,000 lines to remove\n")
    assert "more diff lines not shown" in info.preview


def test_content_too_large_to_diff_shows_sizes_and_hashes(session, csv, monkeypatch):
    monkeypatch.setattr(file_previews, "MAX_DIFF_BYTES", 10)
    info = request_of(session, ask(lambda: write_file(str(csv), "a much longer text\n")))
    assert "Not diffed: content over 10 bytes." in info.preview
    assert "sha256: " in info.preview


@pytest.mark.parametrize(
    ("call", "reason"),
    [
        (lambda d: write_file(d, "x"), "is a directory"),
        (lambda d: write_file(d / "f.txt", 42), "data must be str or bytes"),
        (lambda d: write_file(d / "f.txt", "é", encoding="ascii"), "cannot be encoded"),
        (lambda d: write_file(d / "f.txt", "x", encoding="no-such"), "Unknown encoding"),
        (lambda d: write_file(d / "missing" / "f.txt", "x"), "does not exist"),
        (lambda d: write_file(3, "x"), "must be a str or path-like"),
    ],
)
def test_invalid_writes_are_refused_before_asking(session, tmp_path, call, reason):
    with pytest.raises(errors.ApprovalInvalidArgument, match=reason) as refused:
        call(tmp_path / "work")
    assert refused.value.code == "APPROVAL_INVALID_ARGUMENT"
    assert session.store.pending() == []


def test_the_writers_refuse_outside_an_approved_run(session, csv, tmp_path):
    with pytest.raises(errors.ApprovalRequired):
        write_file.fn(str(csv), b"x")
    with pytest.raises(errors.ApprovalRequired):
        delete_path.fn(str(csv))
    with pytest.raises(errors.ApprovalRequired):
        move_path.fn(str(csv), str(tmp_path / "elsewhere.csv"))
    assert csv.read_text().startswith("id,name")


def test_a_failing_write_leaves_the_target_unchanged(session, csv, monkeypatch):
    # Given an approved write whose second chunk fails to be written
    monkeypatch.setattr(files_module, "CHUNK", 4)
    approve(session, lambda: write_file(str(csv), "replaced content\n"))
    real_replace = files_module.atomic_replace
    written = []

    class FailingHandle:
        def __init__(self, handle):
            self.handle = handle

        def write(self, chunk):
            if written:
                raise OSError(errno.ENOSPC, "No space left on device")
            written.append(bytes(chunk))
            return self.handle.write(chunk)

    @contextlib.contextmanager
    def failing(path, expected=None):
        with real_replace(path, expected) as handle:
            yield FailingHandle(handle)

    monkeypatch.setattr(files_module, "atomic_replace", failing)
    # When it runs
    with pytest.raises(OSError, match="No space left"):
        write_file(str(csv), "replaced content\n")
    # Then the target has its old content, and no temporary file is left
    assert written == [b"repl"]
    assert csv.read_text() == "id,name\n1,ann\n2,bob\n3,cy\n"
    assert sorted(p.name for p in csv.parent.iterdir()) == ["data.csv"]
    assert session.store.recent(1)[0].status.value == "failed"


def test_a_symlink_is_written_through_to_the_real_file(session, csv):
    link = csv.parent / "link.csv"
    link.symlink_to(csv.name)
    info = approve(session, lambda: write_file(link, "y\n"))
    assert str(csv) in info.summary
    write_file(link, "y\n")
    assert link.is_symlink()
    assert csv.read_text() == "y\n"


# -- delete_path ------------------------------------------------------------------------------


@pytest.fixture
def tree(session, tmp_path: Path) -> Path:
    root = tmp_path / "work" / "out"
    (root / "sub").mkdir(parents=True)
    (root / "a.csv").write_text("1,2\n")
    (root / "sub" / "b.txt").write_text("hello\n")
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me\n")
    (root / "link").symlink_to(outside)
    return root


def test_delete_lists_the_tree_then_removes_it(session, tree, tmp_path):
    # When a folder's deletion is asked for
    info = approve(session, lambda: delete_path(tree, recursive=True))
    # Then the card counts and lists everything in it, links as links
    assert info.summary == f"Delete the directory {tree} and everything in it"
    assert "directory with 3 files and 1 directory inside, 10 bytes in total" in info.preview
    assert "  a.csv  4 bytes" in info.preview
    assert "  sub/  directory" in info.preview
    assert "  sub/b.txt  6 bytes" in info.preview
    assert f"  link  symlink -> {tmp_path / 'outside.txt'}" in info.preview
    # And once approved it is gone, but not what the link pointed to
    delete_path(tree, recursive=True)
    assert not tree.exists()
    assert (tmp_path / "outside.txt").read_text() == "keep me\n"


def test_delete_of_a_changed_tree_refuses(session, tree):
    approve(session, lambda: delete_path(tree, recursive=True))
    # When a file deep inside changes after the preview
    (tree / "sub" / "b.txt").write_text("new work\n")
    # Then nothing is deleted
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        delete_path(tree, recursive=True)
    assert (tree / "sub" / "b.txt").read_text() == "new work\n"


def test_a_retargeted_link_in_the_tree_refuses(session, tree, tmp_path):
    approve(session, lambda: delete_path(tree, recursive=True))
    (tree / "link").unlink()
    (tree / "link").symlink_to(tmp_path)
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        delete_path(tree, recursive=True)
    assert tree.exists()


def test_a_rejected_delete_does_not_run_and_a_second_one_asks_again(session, tree):
    pending = ask(lambda: delete_path(tree / "a.csv"))
    decide(session, pending, "reject")
    with pytest.raises(errors.ApprovalRejected):
        delete_path(tree / "a.csv")
    assert (tree / "a.csv").exists()
    approve(session, lambda: delete_path(tree / "a.csv"))
    delete_path(tree / "a.csv")
    assert not (tree / "a.csv").exists()
    with pytest.raises(errors.ApprovalInvalidArgument, match="Nothing exists"):
        delete_path(tree / "a.csv")


def test_deleting_a_symlink_removes_only_the_link(session, tree, tmp_path):
    info = approve(session, lambda: delete_path(tree / "link"))
    assert "symlink to" in info.preview
    delete_path(tree / "link")
    assert not (tree / "link").is_symlink()
    assert (tmp_path / "outside.txt").exists()


def test_invalid_deletes_are_refused(session, tree):
    with pytest.raises(errors.ApprovalInvalidArgument, match="recursive=True"):
        delete_path(tree)
    with pytest.raises(errors.ApprovalInvalidArgument, match="Nothing exists"):
        delete_path(tree / "missing")
    with pytest.raises(errors.ApprovalInvalidArgument, match="True or False"):
        delete_path(tree, recursive="yes")
    assert session.store.pending() == []


def test_the_listing_of_a_huge_tree_stays_bounded(session, tmp_path):
    root = tmp_path / "work" / "many"
    root.mkdir()
    for n in range(3_000):
        (root / f"file-{n:05d}-with-a-long-name.txt").write_bytes(b"x")
    info = request_of(session, ask(lambda: delete_path(root, recursive=True)))
    assert len(info.preview) <= PREVIEW_BUDGET
    assert "3,000 files" in info.preview
    assert "more paths not shown" in info.preview


# -- move_path --------------------------------------------------------------------------------


def test_move_renames_and_says_what_it_replaces(session, csv):
    # Given an existing destination
    destination = csv.parent / "old.csv"
    destination.write_text("old\n")
    # When a move over it is asked for
    info = approve(session, lambda: move_path(csv, destination, overwrite=True))
    # Then the card names both ends and what is replaced
    assert info.summary == f"Move {csv} -> {destination} (replacing it)"
    assert "source: file, 25 bytes" in info.preview
    assert "replaces: file, 4 bytes" in info.preview
    assert "renamed in one step" in info.preview
    move_path(csv, destination, overwrite=True)
    assert not csv.exists()
    assert destination.read_text().startswith("id,name")


def test_move_after_the_destination_appeared_refuses(session, csv):
    destination = csv.parent / "moved.csv"
    approve(session, lambda: move_path(csv, destination, overwrite=True))
    destination.write_text("someone else's\n")
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        move_path(csv, destination, overwrite=True)
    assert destination.read_text() == "someone else's\n"
    assert csv.exists()


def test_a_rejected_move_does_not_run(session, csv):
    pending = ask(lambda: move_path(csv, csv.parent / "x.csv"))
    decide(session, pending, "reject")
    with pytest.raises(ja.ApprovalRejected):
        move_path(csv, csv.parent / "x.csv")
    assert csv.exists()


def test_invalid_moves_are_refused(session, csv, tree):
    with pytest.raises(errors.ApprovalInvalidArgument, match="overwrite=True"):
        move_path(csv, tree / "a.csv")
    with pytest.raises(errors.ApprovalInvalidArgument, match="existing directory"):
        move_path(csv, tree)
    with pytest.raises(errors.ApprovalInvalidArgument, match="into itself"):
        move_path(tree, tree / "sub" / "deeper")
    with pytest.raises(errors.ApprovalInvalidArgument, match="Nothing exists"):
        move_path(csv.parent / "missing", csv.parent / "y")
    with pytest.raises(errors.ApprovalInvalidArgument, match="same path"):
        move_path(csv, csv)
    assert session.store.pending() == []


@pytest.mark.parametrize("kind", ["file", "dir", "link"])
def test_move_across_file_systems_copies_then_removes(session, tree, monkeypatch, kind):
    # Given renames that fail as they do between two file systems
    def cross_device(source, destination):
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(files_module, "_rename", cross_device)
    source = {"file": tree / "a.csv", "dir": tree / "sub", "link": tree / "link"}[kind]
    destination = tree.parent / f"moved-{kind}"
    destination.write_text("to be replaced\n")
    if kind == "file":
        source.chmod(0o600)
    approve(session, lambda: move_path(source, destination, overwrite=True))
    # When the move runs
    move_path(source, destination, overwrite=True)
    # Then the destination has the source's content, and the source is gone
    assert not os.path.lexists(source)
    if kind == "file":
        assert destination.read_text() == "1,2\n"
        assert destination.stat().st_mode & 0o777 == 0o600
    elif kind == "dir":
        assert (destination / "b.txt").read_text() == "hello\n"
    else:
        assert destination.is_symlink()
        assert destination.read_text() == "keep me\n"
    assert not [p for p in tree.parent.iterdir() if p.name.startswith(".")]
