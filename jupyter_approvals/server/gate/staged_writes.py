"""Agents' file saves staged in a change set (policy ``sandbox``) instead of held one by one.

A file an agent saves over the contents API is written into the overlay upper folder of its
most recent running sandboxed kernel, or into a staging folder of its own
(:mod:`..sandbox.staging`), and waits there with everything else the agent changed: the
person applies or discards it in the change set. The agent gets the model the save would have
returned, marked as staged; the server's journal records it ``staged``.
"""

from __future__ import annotations

import functools
import hashlib
import mimetypes
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ...previews.source_encoding import refuse_misread_source
from ..sandbox.staging import stage_bytes

#: Where an agent's saves are staged: (the change set's id, its upper folder), or None.
UpperFor = Callable[[str], "tuple[str, Path] | None"]


class StagedWrites:
    """Stages agents' file saves and records each."""

    def __init__(self, upper_for: UpperFor, journal: Callable[..., None]) -> None:
        self._upper_for = upper_for
        self._journal = journal

    def stage_for(
        self, agent: str, api_path: str, data: bytes
    ) -> Callable[[], dict[str, Any]] | None:
        """The staging of ``data`` at ``api_path`` for ``agent``, or None where agents' saves
        are not staged (another policy): then they are held as before."""
        found = self._upper_for(agent)
        if found is None:
            return None
        change_set, upper = found
        return functools.partial(self._stage, agent, change_set, upper, api_path, data)

    def _stage(
        self, agent: str, change_set: str, upper: Path, api_path: str, data: bytes
    ) -> dict[str, Any]:
        # The person would read other text than Python runs: refused as a held write is.
        refuse_misread_source(api_path, data, shown_in="the change set")
        stage_bytes(str(upper), api_path, data)
        digest = hashlib.sha256(data).hexdigest()
        self._journal(
            "staged",
            None,
            action="file.write",
            agent=agent,
            path=api_path,
            size=len(data),
            sha256=digest,
            change_set=change_set,
            held_at="server",
        )
        now = datetime.now(timezone.utc)
        name = api_path.rsplit("/", 1)[-1]
        return {
            "name": name,
            "path": api_path,
            "type": "file",
            "writable": True,
            "created": now,
            "last_modified": now,
            "mimetype": mimetypes.guess_type(name)[0] or "text/plain",
            "content": None,
            "format": None,
            "size": len(data),
            "hash": None,
            "hash_algorithm": None,
            # Not in the project yet: in the change set this id names (GET changes).
            "jupyter_approvals_staged_in": change_set,
        }
