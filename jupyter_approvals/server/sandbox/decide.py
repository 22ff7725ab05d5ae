"""Applying or discarding a sandboxed kernel's changes, as a person decided, file by file.

The person decided on a change set the server showed (:class:`ShownChanges`, by its
fingerprint). Each selected file is judged again at the moment of the decision: its change
now must be exactly the change shown (same bytes in the overlay, same project file), else that
file is refused with ``APPROVAL_FINGERPRINT_MISMATCH`` and the others go on.

**Apply** writes the bytes that were shown into the project, all at once (a temporary file
renamed over the target), with the shown permission bits (never setuid, setgid or sticky), or
removes the project's file for a deletion. The bytes written are the bytes hashed while
copying, never read again. A target whose path passes through a symbolic link is refused.

**Discard** brings the kernel's view back to the project where overlayfs lets a mounted
overlay follow (its upper folder is changed in place; docs/security.md, "The sandbox"):

- a modified file gets the project's bytes and mode in place: the kernel sees them at once;
- a deleted file's whiteout is removed: the kernel sees the project's file again;
- a created file cannot leave a mounted overlay (the kernel keeps seeing it); it is recorded
  as discarded, no longer listed while the kernel leaves it as it was, and removed from the
  upper folder when the kernel next starts.

Both record what was decided (:class:`Decided`), so a file the kernel has not touched since
is not listed again, and a person's later edit of an applied file is not taken for the
kernel's.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ...core import errors
from .changes import ChangeSet, FileChange, file_state, is_whiteout

Decision = Literal["apply", "discard"]
#: Permission bits an applied file may carry.
_MODE_BITS = 0o777
_CHUNK = 1 << 20


@dataclass
class Outcome:
    """What a decision did, per file."""

    done: list[str] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)


class Decided:
    """The changes a person decided, per path, with the change as it was then (JSON in the
    kernel's own folder, outside the project)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            loaded = json.loads(path.read_text())
        except (OSError, ValueError):
            loaded = {}
        self._entries: dict[str, dict[str, object]] = loaded if isinstance(loaded, dict) else {}

    def settled(self, change: FileChange) -> bool:
        """Whether the kernel left ``change``'s path as it was when a person decided it: the
        file in the overlay has the same bytes and mode (what the project has may differ: the
        person may have edited it since)."""
        entry = self._entries.get(change.path)
        if entry is None or change.after is None:
            return False
        return bool(entry.get("after") == change.subject()["after"])

    def record(self, change: FileChange, decision: Decision) -> None:
        """Remember ``change`` (as it is now) as decided."""
        self._entries[change.path] = change.subject()
        if decision == "discard" and change.kind in ("created", "renamed"):
            self._entries[change.path] = {**change.subject(), "remove_at_start": True}

    def to_remove_at_start(self) -> list[str]:
        """Paths of discarded created files, to remove from the upper folder before the
        overlay is mounted again."""
        return [path for path, entry in self._entries.items() if entry.get("remove_at_start")]

    def forget(self, paths: Iterable[str]) -> None:
        """Drop the records of ``paths``."""
        for path in paths:
            self._entries.pop(path, None)

    def save(self) -> None:
        """Write the records (all at once)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(dir=self.path.parent, prefix=".decided-")
        with os.fdopen(handle, "w") as out:
            json.dump(self._entries, out, sort_keys=True)
        os.replace(temp, self.path)


def follow_person_edits(
    project: Path, upper: Path, change_set: ChangeSet, decided: Decided
) -> bool:
    """Where a person edited a project file that the kernel's overlay holds a decided copy of
    (an applied file), give that copy the person's bytes in place: the kernel sees the edit.
    Returns whether it wrote any."""
    wrote = False
    for change in change_set.changes:
        if change.kind == "modified" and decided.settled(change):
            _overwrite_in_place(project / change.path, upper / change.path)
            wrote = True
    return wrote


def without_settled(change_set: ChangeSet, decided: Decided) -> ChangeSet:
    """``change_set`` without the changes already decided and untouched since."""
    kept = tuple(change for change in change_set.changes if not decided.settled(change))
    counts: dict[str, int] = {}
    for change in kept:
        counts[change.kind] = counts.get(change.kind, 0) + 1
    return ChangeSet(kept, counts)


def decide(
    project: Path,
    upper: Path,
    shown: ChangeSet,
    now: ChangeSet,
    paths: Iterable[str],
    decision: Decision,
    decided: Decided,
) -> Outcome:
    """Apply or discard the changes of ``paths`` in ``shown``, each only if it is the same
    change in ``now`` (the change set computed again at the decision)."""
    shown_by_path = {change.path: change for change in shown.changes}
    now_by_path = {change.path: change for change in now.changes}
    outcome = Outcome()
    for path in paths:
        change = shown_by_path.get(path)
        if change is None:
            outcome.refused[path] = "APPROVAL_MALFORMED_DECISION"
            continue
        if now_by_path.get(path) != change:
            outcome.refused[path] = errors.ApprovalFingerprintMismatch.code
            continue
        try:
            if decision == "apply":
                _apply(project, upper, change)
            else:
                _discard(project, upper, change)
        except errors.ApprovalError as refused:
            outcome.refused[path] = refused.code
            continue
        decided.record(change, decision)
        outcome.done.append(path)
    decided.save()
    return outcome


# -- apply ---------------------------------------------------------------------------------


def _apply(project: Path, upper: Path, change: FileChange) -> None:
    target = _inside(project, change.path)
    if change.kind == "unsupported":
        raise errors.ApprovalChangeUnsupported(
            f"{change.path} is a {change.detail}; such entries are shown, never applied"
        )
    if change.kind in ("deleted", "renamed"):
        source = change.path if change.kind == "deleted" else change.detail
        _check_project_file(project, source, change.before)
    if change.kind == "modified":
        _check_project_file(project, change.path, change.before)
    if change.kind in ("created", "modified", "renamed"):
        if change.kind != "modified" and os.path.lexists(target):
            raise errors.ApprovalFingerprintMismatch(f"{change.path} exists in the project now")
        if change.after is None:
            raise errors.ApprovalFingerprintMismatch(f"{change.path} has no content to apply")
        _copy_in(upper / change.path, target, change.after.sha256, change.after.mode)
    if change.kind in ("deleted", "renamed"):
        gone = _inside(project, change.path if change.kind == "deleted" else change.detail)
        gone.unlink()


def _inside(project: Path, relative: str) -> Path:
    """``project / relative``, refused if any part of it is a symbolic link or leaves."""
    target = project / relative
    current = project
    for part in Path(relative).parts[:-1]:
        current = current / part
        if current.is_symlink() or (current.exists() and not current.is_dir()):
            raise errors.ApprovalFingerprintMismatch(f"{relative}: {part} is not a folder now")
    if target.is_symlink() or not os.path.abspath(target).startswith(str(project) + os.sep):
        raise errors.ApprovalFingerprintMismatch(f"{relative} is a symbolic link in the project")
    return target


def _check_project_file(project: Path, relative: str, before: object) -> None:
    target = _inside(project, relative)
    try:
        current = file_state(target) if stat.S_ISREG(target.lstat().st_mode) else None
    except OSError:
        current = None
    if current != before:
        raise errors.ApprovalFingerprintMismatch(
            f"{relative} in the project changed after the change set was shown"
        )


def _copy_in(source: Path, target: Path, sha256: str, mode: int) -> None:
    """Copy ``source`` over ``target`` in one rename, only if its bytes hash to ``sha256``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".jpa-tmp")
    try:
        digest = hashlib.sha256()
        with os.fdopen(handle, "wb") as out, source.open("rb") as src:
            while chunk := src.read(_CHUNK):
                digest.update(chunk)
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != sha256:
            raise errors.ApprovalFingerprintMismatch(
                f"{target.name} changed in the sandbox after the change set was shown"
            )
        os.chmod(temp, mode & _MODE_BITS)
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


# -- discard -------------------------------------------------------------------------------


def _discard(project: Path, upper: Path, change: FileChange) -> None:
    if change.kind == "modified":
        _overwrite_in_place(project / change.path, upper / change.path)
    elif change.kind in ("deleted", "renamed"):
        source = change.path if change.kind == "deleted" else change.detail
        whiteout = upper / source
        try:
            if is_whiteout(whiteout.lstat()):
                whiteout.unlink()
        except FileNotFoundError:
            pass  # deleted with its folder: the folder's own mark stays (docs/security.md)
    # created (and a rename's new path): stays visible until the kernel starts again.


def _overwrite_in_place(project_file: Path, upper_file: Path) -> None:
    """Give the upper file the project file's bytes and mode, keeping its inode: the mounted
    overlay reads that inode, so the kernel sees the project's version at once."""
    with project_file.open("rb") as src, upper_file.open("r+b") as out:
        out.truncate(0)
        while chunk := src.read(_CHUNK):
            out.write(chunk)
        out.flush()
        os.fsync(out.fileno())
    os.chmod(upper_file, stat.S_IMODE(project_file.stat().st_mode))


def remove_discarded(upper: Path, decided: Decided) -> None:
    """Before a kernel's overlay is mounted again: remove the created files a person
    discarded, if the kernel left them as they were when discarded."""
    removed = []
    for relative in decided.to_remove_at_start():
        path = upper / relative
        try:
            unchanged = stat.S_ISREG(path.lstat().st_mode) and decided.settled(
                FileChange(relative, "created", after=file_state(path))
            )
        except OSError:
            unchanged = False
        if unchanged:
            path.unlink()
        removed.append(relative)
    decided.forget(removed)
    decided.save()
