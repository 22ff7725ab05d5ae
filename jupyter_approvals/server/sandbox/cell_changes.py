"""Which of a sandboxed kernel's changes one execution made: the notice under its cell.

A kernel runs one execution at a time. The server looks at the kernel's upper folder (never
at anything the kernel says) when an execution starts, if it has not looked yet, and again
when the kernel reports it idle: every entry that appeared or changed between the two looks
was made by that execution (or by a thread of the kernel's while it ran). Only names, sizes
and times are compared, never bytes, so the look costs as little as listing the upper folder:
what the change set holds and its fingerprint are computed where it is listed
(:mod:`.change_sets`).

The notice is a ``display_data`` output: a pointer for the notebook's card, which shows the
kernel's change set as the server lists it, and a plain-text line for any other client. A
notice that cell code forges can point only at a kernel's real change set.
"""

from __future__ import annotations

import stat
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...core.visible import make_visible
from .changes import is_whiteout, upper_stats
from .command import KernelFolders

#: The MIME type of the notice the notebook's card renders (docs/protocol.md 6.6).
CHANGES_MIME = "application/vnd.jupyter-approvals.changes+json"
#: Paths a notice names; the count covers them all.
NAMED_IN_NOTICE = 20
#: Executions whose notice is kept, for the other clients of the kernel.
_NOTICES_KEPT = 256

_Entry = tuple[int, int, int, bool]


def upper_entries(upper: Path) -> dict[str, _Entry]:
    """Every entry below ``upper`` but folders (whose times move with what is below them),
    by POSIX path relative to it: its type and permission bits, size, modification time, and
    whether it is a whiteout (the mark of a deletion)."""
    return {
        path: (info.st_mode, info.st_size, info.st_mtime_ns, is_whiteout(info))
        for path, info in upper_stats(upper)
        if not stat.S_ISDIR(info.st_mode)
    }


class CellChanges:
    """The upper-folder entries each sandboxed kernel had at its last look, and the notices
    of the executions already looked at."""

    def __init__(self, folders_of: Callable[[str], KernelFolders | None]) -> None:
        self._folders_of = folders_of
        self._seen: dict[str, dict[str, _Entry]] = {}
        self._notices: OrderedDict[tuple[str, str], dict[str, Any] | None] = OrderedDict()

    def starting(self, kernel_id: str) -> None:
        """An execution was sent to ``kernel_id``: look, unless an earlier look stands."""
        if kernel_id not in self._seen:
            self.look_again(kernel_id)

    def look_again(self, kernel_id: str) -> None:
        """Take the upper folder as it is now as seen (after a person's decision, which
        removes and rewrites its entries: no execution made those)."""
        folders = self._folders_of(kernel_id)
        if folders is None:
            self._seen.pop(kernel_id, None)
        else:
            self._seen[kernel_id] = upper_entries(folders.upper)

    def finished(self, kernel_id: str, msg_id: str) -> dict[str, Any] | None:
        """The notice of execution ``msg_id`` of ``kernel_id`` (None: it changed nothing, or
        the kernel is not sandboxed). Asked once per client of the kernel: looked at once."""
        key = (kernel_id, msg_id)
        if key in self._notices:
            return self._notices[key]
        folders = self._folders_of(kernel_id)
        notice = None
        if folders is not None:
            before = self._seen.get(kernel_id, {})
            now = upper_entries(folders.upper)
            self._seen[kernel_id] = now
            changed = sorted(path for path, entry in now.items() if before.get(path) != entry)
            if changed:
                deleted = sum(1 for path in changed if now[path][3])
                notice = change_notice(kernel_id, changed, deleted)
        self._notices[key] = notice
        if len(self._notices) > _NOTICES_KEPT:
            self._notices.popitem(last=False)
        return notice


def change_notice(kernel_id: str, paths: list[str], deleted: int) -> dict[str, Any]:
    """The ``display_data`` content of an execution that changed ``paths`` in its sandbox."""
    count = len(paths)
    named = ", ".join(make_visible(path, keep_lines=False) for path in paths[:NAMED_IN_NOTICE])
    more = f" and {count - NAMED_IN_NOTICE:,} more" if count > NAMED_IN_NOTICE else ""
    files = "1 file" if count == 1 else f"{count:,} files"
    text = (
        f"Sandboxed: this cell changed {files} in its sandbox, not in the project "
        f"({named}{more}). Nothing lands until a person applies it: Approvals sidebar, Pending."
    )
    return {
        "data": {
            CHANGES_MIME: {
                "version": 1,
                "kernel_id": kernel_id,
                "paths": paths[:NAMED_IN_NOTICE],
                "count": count,
                "deleted": deleted,
            },
            "text/plain": text,
        },
        "metadata": {},
        "transient": {},
    }
