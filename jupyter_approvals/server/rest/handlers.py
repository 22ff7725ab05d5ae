"""REST handlers of the server extension (docs/protocol.md, section 6).

Every verb is ``@web.authenticated`` then ``@authorized`` with the resource ``approvals``.
``APIHandler`` refuses, for cookie sessions, foreign origins and POSTs without the XSRF token;
the decision handler also refuses a foreign ``Origin`` when a token is used.
Handlers get what they need from the extension's settings, set up in ``app.py``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from tornado import web

from ...core import errors
from ...core.decision import check_decision
from ...core.policy import Limits
from ...doctor.report import Check
from ..api import API_PREFIX
from ..gate.identity import GATE_SETTING, is_agent
from ..gate.in_force import gate_checks
from ..mirror import sessions
from ..mirror.kernels import (
    LINKS_SETTING,
    KernelLinks,
)
from .pending_rows import PendingRows

AUTH_RESOURCE = "approvals"
#: Where the web app's settings keep the rendered rows of the pending list.
PENDING_ROWS_SETTING = "jupyter_approvals.pending_rows"
#: Path of the API below the server's base URL, as items' ``decide_url`` name it.
MAX_BODY_BYTES = 16 * 1024


class ApprovalsHandler(APIHandler):
    """Shared plumbing: JSON answers and coded errors."""

    auth_resource = AUTH_RESOURCE

    @property
    def links(self) -> KernelLinks:
        """The server's connections to its kernels."""
        links: KernelLinks = self.settings[LINKS_SETTING]
        return links

    def reply(self, body: dict[str, Any], status: int = 200) -> None:
        """Finish with a JSON body."""
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(body))

    @property
    def gate(self) -> Any:
        """The agent gate (server/agent_gate.py)."""
        return self.settings[GATE_SETTING]

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """Answer a coded error a handler raised with its status and body (every route of
        this extension raises; nothing else writes errors); anything else as jupyter_server
        does."""
        error = kwargs.get("exc_info", (None, None, None))[1]
        if not isinstance(error, errors.ApprovalError):
            super().write_error(status_code, **kwargs)
            return
        self.clear_header("Set-Cookie")
        self.set_status(error.http_status)
        self.set_header("Content-Type", "application/json")
        retry_after = error.details.get("retry_after_s")
        if isinstance(retry_after, int | float):
            self.set_header("Retry-After", str(max(1, round(retry_after))))
        self.finish(json.dumps(error.to_response()))

    def log_exception(self, typ: Any, value: Any, tb: Any) -> None:
        """A coded refusal is an answer, not a server failure: one line, no traceback."""
        if isinstance(value, errors.ApprovalError):
            self.log.info(
                "jupyter-approvals answered %s %s with %s: %s",
                self.request.method,
                self.request.path,
                value.code,
                value.message,
            )
            return
        super().log_exception(typ, value, tb)

    def check_not_agent(self) -> None:
        """Raise for an agent identity that got this far: agents never see or make decisions."""
        if is_agent(self.current_user):
            raise errors.ApprovalAgentForbidden(
                "Agents never see or make decisions. Nothing was done."
            )

    def check_decider(self) -> None:
        """Raise for a decision from an agent, or from a page of another origin."""
        self.check_not_agent()
        if not self._same_origin():
            raise errors.ApprovalCrossOrigin(
                "Decisions are accepted only from pages of this server's own origin."
            )

    def _same_origin(self) -> bool:
        # jupyter_server skips its origin check for token-authenticated requests; a decision
        # is a write that only a page of this server (or a client sending no Origin) may make.
        origin = self.request.headers.get("Origin")
        if origin is None or self.allow_origin == "*":
            return True
        if self.allow_origin:
            return origin == self.allow_origin
        if self.allow_origin_pat:
            return re.match(self.allow_origin_pat, origin) is not None
        return urlparse(origin).netloc.lower() == self.request.host.lower()

    def _read_body(self) -> tuple[str, str, str]:
        if len(self.request.body) > MAX_BODY_BYTES:
            raise errors.ApprovalTooLarge(f"The body is over {MAX_BODY_BYTES} bytes.")
        try:
            body = json.loads(self.request.body or b"")
        except (ValueError, RecursionError):
            raise errors.ApprovalMalformedDecision("The body must be a JSON object.") from None
        if not isinstance(body, dict):
            raise errors.ApprovalMalformedDecision("The body must be a JSON object.")
        unknown = set(body) - {"decision", "fingerprint", "reason"}
        if unknown:
            raise errors.ApprovalMalformedDecision(f"Unknown fields: {sorted(unknown)}.")
        return check_decision(
            body.get("decision"),
            body.get("fingerprint"),
            body.get("reason", ""),
            Limits().max_reason_chars,
        )


class PendingHandler(ApprovalsHandler):
    """``GET pending``: every pending request of every running kernel."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        """List pending requests from the server's copy; no busy kernel is waited for.

        Requests the server holds (agent code) are in the same list; a person's UI
        receiving them starts their reading floor.
        """
        self.check_not_agent()
        manager = self.settings["session_manager"]
        notebooks: dict[str, str | None] = {}  # one session lookup per kernel and request

        def notebook_of(kernel_id: str) -> str | None:
            if kernel_id not in notebooks:
                notebooks[kernel_id] = sessions.notebook_of_kernel(manager, kernel_id)
            return notebooks[kernel_id]

        root = Path(self.settings["server_root_dir"]).expanduser().resolve()

        def decorate(item: dict[str, Any]) -> None:
            path = item.get("notebook_path") or notebook_of(str(item.get("kernel_id")))
            item["notebook_path"] = _relative(path, root)
            item["decide_url"] = f"{API_PREFIX}/pending/{item['kernel_id']}/{item['id']}"
            item.setdefault("held_at", "kernel")

        rows, listing = await self.links.snapshot()
        # The newest decision anywhere (a card, the sidebar, held code), for the sidebar.
        latest = [d for d in (listing["last_decision"], *self.gate.hold.decided()[:1]) if d]
        listing["last_decision"] = max(latest, key=lambda d: str(d["decided_at"]), default=None)
        keyed = [((*row.key, notebook_of(str(row.key[0]))), row) for row in rows]
        held = self.gate.hold.listing(shown=True)
        rendered: PendingRows = self.settings[PENDING_ROWS_SETTING]
        self.set_header("Content-Type", "application/json")
        self.finish(rendered.body(held, keyed, listing, decorate))


class DoctorHandler(ApprovalsHandler):
    """``GET doctor``: the checks of ``jupyter approvals doctor`` as JSON."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        """Run the installation checks for the server root's project."""
        from ...doctor import run_checks

        root = Path(self.settings["server_root_dir"]).expanduser().resolve()
        # The checks read files and import modules: keep them off the server's event loop.
        report = await asyncio.to_thread(run_checks, root)
        listing = await self.links.list_all()
        problems = listing["journal_errors"]
        elsewhere = [e for e in problems if e.get("elsewhere")]
        fixes = []
        if elsewhere:
            fixes.append(
                "Do not set JUPYTER_APPROVALS_STATE_DIR in a notebook; set it for the server "
                "and its kernels alike, then restart those kernels."
            )
        if len(elsewhere) < len(problems):
            fixes.append(
                "Free space on the state directory's disk (or lift the file size limit) so "
                "the failing journal can be written again; decisions are not changed by it."
            )
        kernel_journals = Check(
            "kernel_journals",
            not problems,
            "; ".join(f"kernel {e['kernel_id'][:8]}: {e['error']}" for e in problems)
            if problems
            else "every kernel known to the server writes its journal where this server reads it",
            fix=" ".join(fixes) or None,
            info={
                "elsewhere": [e["elsewhere"] for e in elsewhere],
                "failing": [e["kernel_id"] for e in problems if not e.get("elsewhere")],
            },
        )
        checks = [
            *report.checks,
            *gate_checks(self.settings["serverapp"], self.gate),
            kernel_journals,
        ]
        self.reply(dataclasses.replace(report, checks=checks).to_dict())


def _relative(path: object, root: Path) -> object:
    if isinstance(path, str) and os.path.isabs(path):
        candidate = Path(path)
        if candidate.is_relative_to(root):
            return str(candidate.relative_to(root))
    return path
