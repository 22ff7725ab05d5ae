"""The REST routes of sandboxed kernels' change sets (docs/protocol.md 6.5).

``GET changes`` lists every sandboxed kernel's change set, computed by the server from the
kernel's overlay. ``POST changes/{kernel_id}`` applies or discards it, all of it or some
files, bound to the fingerprint of the set the person was shown. Only a person decides: an
agent identity is refused (it never reaches these routes past the gate's allowlist either),
and so is a page of another origin. Every decision is journaled with what it did per file.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from jupyter_server.auth.decorator import authorized
from tornado import web

from ...core import errors
from ...core.fingerprint import is_fingerprint
from ..gate.identity import username_of
from ..gate.in_force import policy_in_force
from .handlers import ApprovalsHandler

#: Largest decision body taken, in bytes (a verdict, a fingerprint and up to many paths).
MAX_CHANGE_DECISION_BYTES = 4 << 20
_DECISIONS = {"apply": "approved", "discard": "rejected"}


class ChangesHandler(ApprovalsHandler):
    """``GET changes``: the change sets of every sandboxed kernel."""

    #: A sidebar poll is not the person working: the hub's idle culler must not see it.
    _track_activity = False

    @web.authenticated
    @authorized
    async def get(self) -> None:
        """List the change sets, as the server computes them now, and whether agents' code
        can run sandboxed here (else the sidebar says why it is held per cell)."""
        self.check_not_agent()
        self.reply(
            {
                "change_sets": self.parts.change_sets.listing(),
                "sandbox": policy_in_force(self.parts.serverapp, self.parts.gate.policy),
            }
        )


class ChangePreviewHandler(ApprovalsHandler):
    """``GET changes/{kernel_id}/preview?path=...``: one listed file's diff."""

    @web.authenticated
    @authorized
    async def get(self, kernel_id: str) -> None:
        """The preview of a file of the kernel's listed change set, from its bytes."""
        self.check_not_agent()
        path = self.get_query_argument("path", "")
        if not path:
            raise errors.ApprovalMalformedMessage('"path" names the listed file to preview.')
        # Off the event loop: a preview reads and diffs whole files (a large CSV for seconds).
        loop = asyncio.get_running_loop()
        self.reply(
            await loop.run_in_executor(None, self.parts.change_sets.preview, kernel_id, path)
        )


class ChangeFilesHandler(ApprovalsHandler):
    """``GET changes/{kernel_id}/files?fingerprint=F&offset=N``: more files of a listed set."""

    @web.authenticated
    @authorized
    async def get(self, kernel_id: str) -> None:
        """The files of the listed change set ``F`` from ``N`` on."""
        self.check_not_agent()
        fingerprint = self.get_query_argument("fingerprint", "")
        offset = self.get_query_argument("offset", "0")
        if not is_fingerprint(fingerprint) or not offset.isdigit():
            raise errors.ApprovalMalformedMessage(
                '"fingerprint" names a listed change set and "offset" is a count of files.'
            )
        self.reply(self.parts.change_sets.page(kernel_id, fingerprint, int(offset)))


class ChangeDecisionHandler(ApprovalsHandler):
    """``POST changes/{kernel_id}``: apply or discard a kernel's change set."""

    @web.authenticated
    @authorized
    async def post(self, kernel_id: str) -> None:
        """Decide, file by file, on the change set the body's fingerprint names."""
        decided_by = username_of(self.current_user)
        try:
            self.check_decider()
            decision, fingerprint, paths = _read(self.request.body)
            change_set, outcome = self.parts.change_sets.decide(
                kernel_id, fingerprint, decision, paths
            )
        except errors.ApprovalError as refused:
            self.parts.journals.append(
                "refused",
                None,
                action="sandbox.changes",
                kernel_id=kernel_id[:64],
                code=refused.code,
                decided_by=decided_by,
                channel="sidebar",
            )
            raise
        journal = self.parts.journals
        journal.append(
            _DECISIONS[decision],
            None,
            action="sandbox.changes",
            kernel_id=kernel_id,
            fingerprint=fingerprint,
            counts=change_set.counts,
            paths=sorted(outcome.done) + sorted(outcome.refused),
            decided_by=decided_by,
            channel="sidebar",
        )
        if decision == "apply" and outcome.done:
            journal.append(
                "executed",
                None,
                action="sandbox.changes",
                kernel_id=kernel_id,
                fingerprint=fingerprint,
                applied=sorted(outcome.done),
            )
        for path, code in sorted(outcome.refused.items()):
            journal.append(
                "refused",
                None,
                action="sandbox.changes",
                kernel_id=kernel_id,
                fingerprint=fingerprint,
                path=path,
                code=code,
            )
        self.reply(
            {
                "ok": not outcome.refused,
                "kernel_id": kernel_id,
                "decision": decision,
                "done": sorted(outcome.done),
                "refused": dict(sorted(outcome.refused.items())),
            }
        )


def _read(body: bytes) -> tuple[Any, str, list[str] | None]:
    if len(body) > MAX_CHANGE_DECISION_BYTES:
        raise errors.ApprovalTooLarge(f"The body is over {MAX_CHANGE_DECISION_BYTES} bytes.")
    try:
        parsed = json.loads(body or b"")
    except (ValueError, RecursionError):
        parsed = None
    if not isinstance(parsed, dict):
        raise errors.ApprovalMalformedDecision("The body must be a JSON object.")
    decision = parsed.get("decision")
    if decision not in _DECISIONS:
        raise errors.ApprovalMalformedDecision('"decision" must be "apply" or "discard".')
    fingerprint = parsed.get("fingerprint")
    if not is_fingerprint(fingerprint):
        raise errors.ApprovalMalformedDecision('"fingerprint" must be "sha256:" and 64 hex.')
    paths = parsed.get("paths")
    if paths is not None and (
        not isinstance(paths, list) or not all(isinstance(p, str) for p in paths) or not paths
    ):
        raise errors.ApprovalMalformedDecision('"paths", when given, is a non-empty list of paths.')
    return decision, str(fingerprint), paths
