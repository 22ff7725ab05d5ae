"""Fingerprints of files: FileContent is the current content, streamed, never the path."""

from __future__ import annotations

import hashlib
import os
import pathlib
import tracemalloc
import zoneinfo
from pathlib import Path

import numpy as np
import pytest

from jupyter_approvals.core.errors import ApprovalUnfingerprintable
from jupyter_approvals.core.fingerprint import (
    FINGERPRINT_PREFIX,
    FileContent,
    encoding,
    fingerprint,
)

from .fingerprint_reference import digest_of, u64

REPO = Path(__file__).resolve().parents[2]
PARIS = zoneinfo.ZoneInfo("Europe/Paris")
NAN = float("nan")


# -- FileContent ------------------------------------------------------------------------


FILE_HELLO_DIGEST = "bcfcd8b8f2267f724df516a46e09a2e56fd795d94c4be0e83ec77bd75d1586dc"


def file_encoding(content: bytes) -> bytes:
    return b"Kf" + u64(len(content)) + hashlib.sha256(content).digest()


def test_file_content_vector(tmp_path: Path) -> None:
    # Given a file holding "hello\n" / Then the frozen digest (the path plays no part)
    path = tmp_path / "hello.txt"
    path.write_bytes(b"hello\n")
    assert fingerprint(FileContent(path)) == digest_of(file_encoding(b"hello\n"))
    assert fingerprint(FileContent(str(path))) == FINGERPRINT_PREFIX + FILE_HELLO_DIGEST


def test_file_larger_than_the_chunk_is_streamed(tmp_path: Path) -> None:
    # Given a file of 3.5 read chunks / When fingerprinted
    content = np.random.default_rng(7).bytes(encoding.CHUNK * 3 + encoding.CHUNK // 2)
    path = tmp_path / "big.bin"
    path.write_bytes(content)
    tracemalloc.start()
    try:
        result = fingerprint(FileContent(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Then it matches size + sha256 of the whole content, read with one chunk buffer
    assert result == digest_of(file_encoding(content))
    assert peak < encoding.CHUNK + 256 * 1024


def test_file_content_changes_change_the_fingerprint(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    path.write_text("a,b\n1,2\n")
    before = fingerprint(FileContent(path))
    path.write_text("a,b\n1,3\n")
    assert fingerprint(FileContent(path)) != before
    path.write_text("a,b\n1,2\n")
    assert fingerprint(FileContent(path)) == before


def test_file_content_covers_the_content_not_the_path(tmp_path: Path) -> None:
    # Given two paths with the same bytes / Then FileContent agrees; the caller adds paths
    (tmp_path / "one").write_bytes(b"same")
    (tmp_path / "two").write_bytes(b"same")
    one, two = FileContent(tmp_path / "one"), FileContent(tmp_path / "two")
    assert fingerprint(one) == fingerprint(two)
    subject_one = {"path": one.path, "content": one}
    subject_two = {"path": two.path, "content": two}
    assert fingerprint(subject_one) != fingerprint(subject_two)


def test_absent_file_is_its_own_state(tmp_path: Path) -> None:
    missing = tmp_path / "missing.txt"
    absent = fingerprint(FileContent(missing))
    assert absent == digest_of(b"Ka")
    assert absent == fingerprint(FileContent(tmp_path / "other-missing"))
    assert absent == fingerprint(FileContent(tmp_path / "missing.txt" / "below"))
    # And it differs from an empty file, and from the file once created
    missing.write_bytes(b"")
    assert fingerprint(FileContent(missing)) == digest_of(file_encoding(b""))
    assert fingerprint(FileContent(missing)) != absent


def test_symlinks_are_followed_and_dangling_ones_are_absent(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.write_bytes(b"data")
    link = tmp_path / "link"
    link.symlink_to(target)
    assert fingerprint(FileContent(link)) == fingerprint(FileContent(target))
    target.unlink()
    assert fingerprint(FileContent(link)) == digest_of(b"Ka")


def test_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ApprovalUnfingerprintable, match="is a directory") as caught:
        fingerprint({"out": FileContent(tmp_path)})
    assert caught.value.details["path"] == "out"
    assert caught.value.details["type"] == "jupyter_approvals.core.fingerprint.FileContent"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(ApprovalUnfingerprintable, match="not a regular file"):
        fingerprint(FileContent(fifo))


def test_file_content_value_semantics(tmp_path: Path) -> None:
    content = FileContent(str(tmp_path / "x"))
    assert content.path == tmp_path / "x"
    assert isinstance(content.path, pathlib.Path)
    assert content == FileContent(tmp_path / "x")
    assert hash(content) == hash(FileContent(tmp_path / "x"))
    assert "x" in repr(content)
