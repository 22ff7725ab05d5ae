"""The change sets of this server's sandboxed kernels, as shown to people and as decided.

The server lists each sandboxed kernel's change set (computed from its overlay, never from
the kernel) and remembers each one it showed, by fingerprint, for the request timeout (10
minutes). A decision names the fingerprint it was made on; it is taken only for a change set
this server showed, no sooner than the reading floor after it was first shown, and within
those 10 minutes (docs/protocol.md 6.5).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core import errors
from ...previews.file_change import MAX_HELD_DIFF_BYTES, change_preview
from ...previews.large_csv_change import large_csv_change
from ...previews.render_text import preview_of
from ...previews.structured import StructuredPreview
from ...previews.text import size_text
from .changes import ChangeSet, FileChange, FileState, compute_change_set
from .command import KernelFolders
from .decide import Decided, Decision, Outcome, decide, follow_person_edits, without_settled

#: Files listed per change set; the counts cover them all, the rest are counted as left out
#: (an agent's code can create a hundred thousand files, and the sidebar polls the list).
MAX_LISTED_CHANGES = 1000


@dataclass
class _Shown:
    change_set: ChangeSet
    first_shown: float


@dataclass
class _KernelChanges:
    folders: KernelFolders
    shown: dict[str, _Shown] = field(default_factory=dict)


class ChangeSets:
    """Lists and decides the change sets of the sandboxed kernels ``kernels()`` names."""

    def __init__(
        self,
        project: Path,
        kernels: Callable[[], Iterable[tuple[str, KernelFolders]]],
        shown_for_s: float,
        min_answer_s: float,
        clock: Callable[[], float] = time.monotonic,
        upper_written: Callable[[str], None] = lambda _kernel: None,
    ) -> None:
        self.project = project
        self._upper_written = upper_written
        self._kernels = kernels
        self._shown_for_s = shown_for_s
        self._min_answer_s = min_answer_s
        self._clock = clock
        self._by_kernel: dict[str, _KernelChanges] = {}

    def _current(self, kernel_id: str, folders: KernelFolders) -> ChangeSet:
        decided = Decided(folders.decided)
        raw = compute_change_set(self.project, folders.upper)
        if follow_person_edits(self.project, folders.upper, raw, decided):
            self._upper_written(kernel_id)
        return without_settled(raw, decided)

    def _entries(self) -> Iterator[tuple[str, _KernelChanges]]:
        running = dict(self._kernels())
        for kernel_id in [k for k in self._by_kernel if k not in running]:
            del self._by_kernel[kernel_id]
        for kernel_id, folders in running.items():
            entry = self._by_kernel.setdefault(kernel_id, _KernelChanges(folders))
            yield kernel_id, entry

    def listing(self) -> list[dict[str, Any]]:
        """Every sandboxed kernel's change set that is not empty, as shown to people."""
        now = self._clock()
        listed = []
        for kernel_id, entry in self._entries():
            change_set = self._current(kernel_id, entry.folders)
            entry.shown = {
                fp: shown
                for fp, shown in entry.shown.items()
                if now - shown.first_shown <= self._shown_for_s
            }
            if not change_set:
                continue
            fingerprint = change_set.fingerprint
            shown = entry.shown.setdefault(fingerprint, _Shown(change_set, now))
            listed.append(
                {
                    "kernel_id": kernel_id,
                    "fingerprint": fingerprint,
                    "counts": dict(change_set.counts),
                    "changes": [
                        _change_row(change) for change in change_set.changes[:MAX_LISTED_CHANGES]
                    ],
                    "changes_left_out": max(0, len(change_set.changes) - MAX_LISTED_CHANGES),
                    "decide_after_s": max(0.0, self._min_answer_s - (now - shown.first_shown)),
                    "expires_in_s": max(0.0, self._shown_for_s - (now - shown.first_shown)),
                }
            )
        return listed

    def decide(
        self,
        kernel_id: str,
        fingerprint: str,
        decision: Decision,
        paths: list[str] | None,
    ) -> tuple[ChangeSet, Outcome]:
        """Apply or discard ``paths`` (None: all) of the change set shown as ``fingerprint``."""
        entry = dict(self._entries()).get(kernel_id)
        if entry is None:
            raise errors.ApprovalUnknownKernel(
                f"no sandboxed kernel {kernel_id} runs in this server", kernel_id=kernel_id
            )
        shown = entry.shown.get(fingerprint)
        now = self._clock()
        if shown is None:
            raise errors.ApprovalNotIssued(
                "this change set was not shown by this server (or changed since): reload the "
                "list and decide on what it shows",
                kernel_id=kernel_id,
                fingerprint=fingerprint,
            )
        age = now - shown.first_shown
        if age > self._shown_for_s:
            raise errors.ApprovalExpired(
                "this change set was shown more than 10 minutes ago: reload the list",
                kernel_id=kernel_id,
                fingerprint=fingerprint,
            )
        if age < self._min_answer_s:
            raise errors.ApprovalAutoAnswered(
                f"answered {age:.2f} s after the change set was shown, sooner than a person "
                f"reads it ({self._min_answer_s:g} s); nothing was done",
                kernel_id=kernel_id,
                fingerprint=fingerprint,
            )
        change_set = shown.change_set
        selected = [c.path for c in change_set.changes] if paths is None else paths
        current = self._current(kernel_id, entry.folders)
        outcome = decide(
            self.project,
            entry.folders.upper,
            change_set,
            current,
            selected,
            decision,
            Decided(entry.folders.decided),
        )
        # No execution of the kernel's made what the decision removed or wrote.
        self._upper_written(kernel_id)
        return change_set, outcome

    def page(self, kernel_id: str, fingerprint: str, offset: int) -> dict[str, Any]:
        """The files of the change set listed as ``fingerprint`` from ``offset`` on (at most
        :data:`MAX_LISTED_CHANGES`): a listing shows the first ones, this the others."""
        entry = dict(self._entries()).get(kernel_id)
        shown = entry.shown.get(fingerprint) if entry is not None else None
        if entry is None or shown is None:
            raise errors.ApprovalNotIssued(
                "this change set was not listed by this server (or changed since): reload the list",
                kernel_id=kernel_id,
                fingerprint=fingerprint,
            )
        changes = shown.change_set.changes
        rows = changes[offset : offset + MAX_LISTED_CHANGES]
        return {
            "kernel_id": kernel_id,
            "fingerprint": fingerprint,
            "offset": offset,
            "changes": [_change_row(change) for change in rows],
            "changes_left_out": max(0, len(changes) - offset - len(rows)),
        }

    def preview(self, kernel_id: str, path: str) -> dict[str, Any]:
        """The preview of ``path`` in the kernel's change set as last listed."""
        entry = dict(self._entries()).get(kernel_id)
        if entry is None:
            raise errors.ApprovalUnknownKernel(
                f"no sandboxed kernel {kernel_id} runs in this server", kernel_id=kernel_id
            )
        for shown in sorted(entry.shown.values(), key=lambda s: s.first_shown, reverse=True):
            for change in shown.change_set.changes:
                if change.path == path:
                    return file_preview(self.project, entry.folders.upper, change)
        raise errors.ApprovalNotIssued(
            f"{path!r} is in no change set this server listed for the kernel: reload the list",
            kernel_id=kernel_id,
        )


def file_preview(project: Path, upper: Path, change: FileChange) -> dict[str, Any]:
    """The preview of one listed change, from the project's bytes and the overlay's: a line
    diff for text, sizes and digests otherwise. Refused when the overlay's file no longer has
    the listed bytes (the person would read other bytes than the fingerprint binds)."""
    listed = [state.size for state in (change.before, change.after) if state is not None]
    large = any(size > MAX_HELD_DIFF_BYTES for size in listed)
    if large and change.kind == "modified" and change.path.lower().endswith(".csv"):
        # Streamed once, line by line, never whole in memory; hashed on the way.
        structured, found = large_csv_change(
            change.path, project / change.path, upper / change.path
        )
        if (found.old_sha256, found.new_sha256) != (
            change.before.sha256 if change.before else "",
            change.after.sha256 if change.after else "",
        ):
            raise errors.ApprovalFingerprintMismatch(
                f"{change.path} changed after it was listed: reload the list", path=change.path
            )
        summary = f"Replace {change.path} ({size_text(listed[-1])}, a large table)"
        preview = preview_of(structured)
    elif large:
        # Never read whole into the server's memory: the listed sizes and digests are shown.
        structured = StructuredPreview()
        for label, state in (("before", change.before), ("after", change.after)):
            if state is not None:
                structured.facts([(f"size {label}", size_text(state.size))])
                structured.facts([(f"sha256 {label}", state.sha256)])
        structured.note(f"Not diffed: content over {size_text(MAX_HELD_DIFF_BYTES)}.")
        summary, preview = f"{change.kind.capitalize()} {change.path}", preview_of(structured)
    elif change.kind == "unsupported":
        structured = StructuredPreview()
        structured.facts([("path:file", change.path), ("what", change.detail)])
        structured.note("Shown, never applied.")
        summary, preview = f"{change.path}: {change.detail}", preview_of(structured)
    else:
        source = change.detail if change.kind == "renamed" else change.path
        old = _listed_bytes(project / source, change.before, change.path, "the project")
        new = _listed_bytes(upper / change.path, change.after, change.path, "the sandbox")
        if change.kind == "deleted":
            structured = StructuredPreview()
            size = len(old or b"")
            structured.count("bytes to delete", size, "removed")
            structured.facts([("path:file", change.path), ("change", "Delete")])
            summary = f"Delete {change.path} ({size_text(size)})"
            preview = preview_of(structured)
        else:
            table = _as_table(change.path, old, new)
            if table is not None:
                summary = f"Replace {change.path} ({size_text(len(new or b''))}, a table)"
                preview = preview_of(table)
            else:
                facts = (("renamed from", change.detail),) if change.kind == "renamed" else ()
                summary, preview = change_preview(
                    change.path, old, len(old or b""), new or b"", where="project", facts=facts
                )
    return {
        "path": change.path,
        "kind": change.kind,
        "summary": summary,
        "preview": preview.text,
        "structured": preview.structured,
    }


def _as_table(path: str, old: bytes | None, new: bytes | None) -> StructuredPreview | None:
    """A table diff of a CSV, Parquet or SQLite file both of whose versions read as one."""
    if old is None or new is None:
        return None
    # Imported here: the table engines need numpy and pandas, which the server extension
    # does not depend on (without them a table file is shown as a line or byte diff).
    try:
        from ...previews.sqlite_file_change import is_sqlite, sqlite_change
        from ...previews.table_file_change import table_change, table_format
    except ImportError:
        return None
    if is_sqlite(path, old) and is_sqlite(path, new):
        return sqlite_change(path, old, new)
    fmt = table_format(path)
    return table_change(path, old, new, fmt) if fmt is not None else None


def _listed_bytes(path: Path, state: FileState | None, listed_as: str, where: str) -> bytes | None:
    """The bytes at ``path`` if the change listed a file there (``state``), refused unless
    they are the listed ones; None when the change listed none."""
    if state is None:
        return None
    try:
        content = path.read_bytes()
    except OSError as missing:
        raise errors.ApprovalFingerprintMismatch(
            f"{listed_as} is no longer in {where} as listed: reload the list", path=listed_as
        ) from missing
    if hashlib.sha256(content).hexdigest() != state.sha256:
        raise errors.ApprovalFingerprintMismatch(
            f"{listed_as} changed in {where} after it was listed: reload the list",
            path=listed_as,
        )
    return content


def _change_row(change: Any) -> dict[str, Any]:
    def state(value: Any) -> dict[str, Any] | None:
        if value is None:
            return None
        return {"size": value.size, "sha256": value.sha256, "mode": f"{value.mode:04o}"}

    return {
        "path": change.path,
        "kind": change.kind,
        "before": state(change.before),
        "after": state(change.after),
        "detail": change.detail,
    }
