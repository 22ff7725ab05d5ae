"""REST handlers of the server extension (docs/protocol.md, section 6).

Every verb is ``@web.authenticated`` then ``@authorized`` with the resource ``approvals``.
``APIHandler`` refuses, for cookie sessions, foreign origins and POSTs without the XSRF token;
the decision handler also refuses a foreign ``Origin`` when a token is used.
Each handler gets the extension's collaborators as one typed :class:`.parts.RestParts`, its
``initialize()`` keyword argument (``app.py`` makes it).
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
from ..api import API_PREFIX, coded_error_body
from ..gate.agent_gate import AgentGate
from ..gate.hub import watcher_reason
from ..gate.identity import is_agent, username_of
from ..gate.in_force import gate_checks
from ..mirror import sessions
from ..mirror.journal_checks import kernel_journals_check
from ..mirror.kernels import KernelLinks
from .parts import RestParts

AUTH_RESOURCE = "approvals"
#: Largest decision body taken, in bytes (a decision is a verdict, a fingerprint and a reason).
MAX_BODY_BYTES = 16 * 1024


def same_origin(handler: Any) -> bool:
    """Whether ``handler``'s request comes from a page of this server's origin (or from a
    client that sends no ``Origin``)."""
    # jupyter_server skips its origin check for token-authenticated requests; a decision
    # is a write that only a page of this server (or a client sending no Origin) may make.
    origin = handler.request.headers.get("Origin")
    if origin is None or handler.allow_origin == "*":
        return True
    if handler.allow_origin:
        return bool(origin == handler.allow_origin)
    if handler.allow_origin_pat:
        return re.match(handler.allow_origin_pat, origin) is not None
    return bool(urlparse(origin).netloc.lower() == handler.request.host.lower())


def refusal_sender(handler: Any) -> tuple[str, dict[str, Any]]:
    """Who sent a decision the server refused, for its journal line: the sender whose budget
    the refusal is charged to (an agent, a page of another origin, a credential that is not
    a person's, or the person), and the line's fields naming it."""
    user = handler.current_user
    agent = getattr(user, "agent", None) if is_agent(user) else None
    cross_origin = not same_origin(handler)
    sender = (
        f"agent {agent}"
        if agent
        else "cross_origin"
        if cross_origin
        else "not_a_person"
        if watcher_reason(handler)
        else "person"
    )
    origin = handler.request.headers.get("Origin", "")[:200] if cross_origin else None
    return sender, {"agent": agent, "decided_by": username_of(user), "origin": origin}


def check_not_an_agent(user: object) -> None:
    """Raise for an agent identity: agents never see or make decisions."""
    if is_agent(user):
        raise errors.ApprovalAgentForbidden("Agents never see or make decisions. Nothing was done.")


def check_decider(handler: Any) -> None:
    """The decider rule, for any Jupyter handler: raise for a decision from an agent, from a
    hub credential that is not the owner's browser session, or from a page of another
    origin."""
    check_not_an_agent(handler.current_user)
    watcher = watcher_reason(handler)
    if watcher is not None:
        raise errors.ApprovalNotAPerson(
            "On this JupyterHub server only its owner's browser session decides; this "
            f"request came with {watcher}. Nothing was decided.",
            why=watcher,
        )
    if not same_origin(handler):
        raise errors.ApprovalCrossOrigin(
            "Decisions are accepted only from pages of this server's own origin."
        )


class ApprovalsHandler(APIHandler):
    """Shared plumbing: the extension's parts, JSON answers and coded errors."""

    auth_resource = AUTH_RESOURCE

    def initialize(self, parts: RestParts) -> None:
        """Keep the extension's collaborators (given by the route, ``app.py``)."""
        self.parts = parts

    @property
    def links(self) -> KernelLinks:
        """The server's connections to its kernels."""
        return self.parts.links

    @property
    def gate(self) -> AgentGate:
        """The agent gate (:mod:`..gate.agent_gate`)."""
        return self.parts.gate

    def reply(self, body: dict[str, Any], status: int = 200) -> None:
        """Finish with a JSON body."""
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(body))

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """Answer a coded error a handler raised with its status and body (every route of
        this extension raises; nothing else writes errors); anything else as jupyter_server
        does."""
        error = kwargs.get("exc_info", (None, None, None))[1]
        if not isinstance(error, errors.ApprovalError):
            super().write_error(status_code, **kwargs)
            return
        self.finish(coded_error_body(self, error))

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
        check_not_an_agent(self.current_user)

    def check_decider(self) -> None:
        """Raise for a decision from an agent, from a hub credential that is not the owner's
        browser session, or from a page of another origin."""
        check_decider(self)

    def _same_origin(self) -> bool:
        return same_origin(self)

    def _read_body(self, channels: tuple[str, ...] = ("sidebar",)) -> tuple[str, str, str, str]:
        """The decision, fingerprint, reason and channel of a decision body.

        ``channels`` are where the route's decisions may be made, the default first: a body
        may name one of them as ``channel`` only where there is more than one.
        """
        if len(self.request.body) > MAX_BODY_BYTES:
            raise errors.ApprovalTooLarge(f"The body is over {MAX_BODY_BYTES} bytes.")
        try:
            body = json.loads(self.request.body or b"")
        except (ValueError, RecursionError):
            raise errors.ApprovalMalformedDecision("The body must be a JSON object.") from None
        if not isinstance(body, dict):
            raise errors.ApprovalMalformedDecision("The body must be a JSON object.")
        known = {"decision", "fingerprint", "reason"} | (
            {"channel"} if len(channels) > 1 else set()
        )
        unknown = set(body) - known
        if unknown:
            raise errors.ApprovalMalformedDecision(f"Unknown fields: {sorted(unknown)}.")
        channel = body.get("channel", channels[0])
        if channel not in channels:
            raise errors.ApprovalMalformedDecision(
                f'"channel" is one of {", ".join(map(json.dumps, channels))}.'
            )
        decision, fingerprint, reason = check_decision(
            body.get("decision"),
            body.get("fingerprint"),
            body.get("reason", ""),
            Limits().max_reason_chars,
        )
        return decision, fingerprint, reason, channel


class PendingHandler(ApprovalsHandler):
    """``GET pending``: every pending request of every running kernel."""

    #: A sidebar poll is not the person working: the hub's idle culler must not see it.
    _track_activity = False

    @web.authenticated
    @authorized
    async def get(self) -> None:
        """List pending requests from the server's copy; no busy kernel is waited for.

        Requests the server holds (agent code) are in the same list; a person's UI
        receiving them starts their reading floor.
        """
        self.check_not_agent()
        manager = self.parts.serverapp.session_manager
        notebooks: dict[str, str | None] = {}  # one session lookup per kernel and request

        def notebook_of(kernel_id: str) -> str | None:
            if kernel_id not in notebooks:
                notebooks[kernel_id] = sessions.notebook_of_kernel(manager, kernel_id)
            return notebooks[kernel_id]

        root = self.parts.server_root

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
        self.set_header("Content-Type", "application/json")
        self.finish(self.parts.pending_rows.body(held, keyed, listing, decorate))


class DoctorHandler(ApprovalsHandler):
    """``GET doctor``: the checks of ``jupyter approvals doctor`` as JSON."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        """Run the installation checks for the server root's project."""
        from ...doctor import run_checks

        # The checks read files and import modules: keep them off the server's event loop.
        report = await asyncio.to_thread(run_checks, self.parts.server_root)
        listing = await self.links.list_all()
        checks = [
            *report.checks,
            *gate_checks(self.parts.serverapp, self.gate, self.parts.gated_extensions()),
            *self.parts.bridge_checks(),
            kernel_journals_check(listing["journal_errors"]),
        ]
        self.reply(dataclasses.replace(report, checks=checks).to_dict())


def _relative(path: object, root: Path) -> object:
    if isinstance(path, str) and os.path.isabs(path):
        candidate = Path(path)
        if candidate.is_relative_to(root):
            return str(candidate.relative_to(root))
    return path
