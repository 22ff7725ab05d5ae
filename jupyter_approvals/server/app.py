"""The jupyter-approvals server extension: the REST API the sidebar speaks, and the agent gate.

Enabled on install by ``jupyter-config/server-config/jupyter_approvals.json``; configured with
``c.ApprovalsServer.*`` in ``jupyter_server_config.py``.
"""

from __future__ import annotations

import asyncio
import atexit
from pathlib import Path
from typing import Any

from jupyter_server.extension.application import ExtensionApp
from tornado.ioloop import PeriodicCallback

from .._version import __version__
from ..config import ApprovalsConfig
from ..core import errors
from ..core.agents import AgentRegistry, registry_path
from ..core.project import journal_location
from .api import API_PREFIX
from .gate.agent_gate import AgentGate
from .gate.change_notices import ChangeNotices
from .gate.contents import ContentsHold
from .gate.hold import AgentHold
from .gate.hub import HubContext
from .gate.identity import (
    GATE_SETTING,
    is_agent,
    make_agent_aware,
    narrow_for_agents,
    wrap_kernel_connection,
)
from .gate.in_force import loosened_origin_checks
from .gate.limits import AgentLimits
from .gate.notebook_trust import never_sign_for_agents
from .gate.pause import reject_in_kernels
from .gate.private_places import sandbox_hidden, secret_dirs
from .gate.sandboxed_starts import sandbox_agents_kernels
from .gate.staged_writes import StagedWrites
from .jupyter_ai.bridge import JupyterAiBridge
from .jupyter_ai.context import BridgeContext
from .mirror import sessions
from .mirror.journals import ServerJournals
from .mirror.kernels import KERNEL_ACTIONS_EVENT, KernelLinks
from .mirror.lost_at_stop import journal_lost_at_stop
from .mirror.relayed import RelayedDecisions
from .rest.agent_handlers import AgentPauseHandler, AgentsHandler
from .rest.change_handlers import (
    ChangeDecisionHandler,
    ChangeFilesHandler,
    ChangePreviewHandler,
    ChangesHandler,
)
from .rest.decision_handlers import DecisionHandler, HeldDecisionHandler
from .rest.handlers import DoctorHandler, PendingHandler
from .rest.journal_handler import JournalHandler, JournalRequestsHandler
from .rest.parts import RestParts
from .rest.pending_rows import PendingRows
from .rest.refusals import RestRefusals
from .sandbox.cell_changes import CellChanges
from .sandbox.change_sets import ChangeSets
from .sandbox.overlay_bound import OverlayBound, stop_overgrown
from .sandbox.provisioner import (
    SANDBOXED_KERNEL_NAME,
    is_sandboxed,
    kernels_with_changes,
    sandbox_available,
    sandbox_folders,
    sandboxed_kernels,
)
from .sandbox.settings import KERNELS_FOLDER, SANDBOX_SETTING, sandbox_settings
from .sandbox.staging import agent_upper
from .settings import ServerSettings

API = API_PREFIX
#: Every route of this extension: URL pattern (below the base URL) and handler; each handler
#: gets the extension's :class:`.rest.parts.RestParts` when it is registered.
ROUTES: list[tuple[str, type[Any]]] = [
    (rf"/{API}/pending", PendingHandler),
    (rf"/{API}/pending/([^/]+)/([^/]+)", DecisionHandler),
    (rf"/{API}/held/([^/]+)", HeldDecisionHandler),
    (rf"/{API}/agents", AgentsHandler),
    (rf"/{API}/agents/([^/]+)/(pause|resume)", AgentPauseHandler),
    (rf"/{API}/journal", JournalHandler),
    (rf"/{API}/journal/requests", JournalRequestsHandler),
    (rf"/{API}/doctor", DoctorHandler),
    (rf"/{API}/changes", ChangesHandler),
    (rf"/{API}/changes/([^/]+)", ChangeDecisionHandler),
    (rf"/{API}/changes/([^/]+)/preview", ChangePreviewHandler),
    (rf"/{API}/changes/([^/]+)/files", ChangeFilesHandler),
]
CONNECTION_SETTING = "kernel_websocket_connection_class"


class ApprovalsServer(ExtensionApp, ServerSettings):
    """Serves the pending approvals of every kernel, the journal and the doctor; gates agents.

    Its settings (``c.ApprovalsServer.*``) are those of :class:`.settings.ServerSettings`.
    """

    name = "jupyter_approvals"
    version = __version__
    load_other_extensions = True

    #: What the handlers share, made when the extension loads.
    parts: RestParts

    # -- load ---------------------------------------------------------------------------

    def initialize_settings(self) -> None:
        """Create the kernel links and the agent gate the handlers share."""
        serverapp = self.serverapp
        assert serverapp is not None
        root = Path(serverapp.root_dir).expanduser().resolve()
        limits, _ignored = ApprovalsConfig(config=self.config).limits()
        location = journal_location(root)
        state_dir = location.state_dir
        if isinstance(location.problem, errors.ApprovalJournalUnusable):
            self.log.warning(
                "jupyter-approvals: %s; the server's journal and agent registry use %s",
                location.problem.message,
                state_dir,
            )
        links = KernelLinks(
            serverapp.kernel_manager,
            self.kernel_timeout,
            self.log,
            state_dir,
            notebook_of=lambda kernel_id: sessions.notebook_of_kernel(
                serverapp.session_manager, kernel_id
            ),
        )
        if serverapp.event_logger is not None:
            serverapp.event_logger.add_listener(
                schema_id=KERNEL_ACTIONS_EVENT, listener=links.on_kernel_action
            )
        journals = ServerJournals(lambda: state_dir, root)
        relayed = RelayedDecisions(links.row_of, journals)
        hold = AgentHold(limits, journals)
        cell_changes = CellChanges(
            lambda kernel_id: sandbox_folders(serverapp.kernel_manager, kernel_id)
        )
        gate = AgentGate(
            AgentRegistry(registry_path(state_dir)),
            hold,
            policy=self.agent_code,
            server_root=root,
            secret_dirs=lambda: secret_dirs(serverapp, state_dir),
            session_manager=serverapp.session_manager,
            log=self.log,
            limits=AgentLimits(self.agent_max_body_bytes, self.agent_requests_per_minute),
            is_sandboxed=lambda kernel_id: is_sandboxed(serverapp.kernel_manager, kernel_id),
            change_notices=ChangeNotices(
                cell_changes,
                lambda kernel_id: is_sandboxed(serverapp.kernel_manager, kernel_id),
            ),
            relayed=relayed.record,
            hub=HubContext.from_environment(self.hub_tokens_without_session),
        )
        if self.agent_code == "sandbox":
            sandbox_agents_kernels(
                serverapp.kernel_manager,
                SANDBOXED_KERNEL_NAME,
                lambda: sandbox_available(serverapp.kernel_spec_manager, self.sandbox_bwrap),
                self.log,
            )
        # Upstream handlers (the kernel websocket, the identity provider's callers) reach
        # the gate only through the web app's settings.
        self.settings[GATE_SETTING] = gate
        refusals = RestRefusals(journals)
        self.jupyter_ai = JupyterAiBridge(
            BridgeContext(
                hold,
                gate.registry,
                root,
                lambda: secret_dirs(serverapp, state_dir),
                refusals,
                self.log,
            )
        )
        if self.jupyter_ai_bridge and self.jupyter_ai.install():
            self.log.info("jupyter-approvals: Jupyter AI's agents ask and act through the gate.")
        self.parts = RestParts(
            links=links,
            gate=gate,
            refusals=refusals,
            pending_rows=PendingRows(),
            server_root=root,
            serverapp=serverapp,
            change_sets=ChangeSets(
                root,
                lambda: kernels_with_changes(serverapp.kernel_manager, state_dir / KERNELS_FOLDER),
                shown_for_s=limits.request_timeout_s,
                min_answer_s=limits.min_answer_s,
                upper_written=cell_changes.look_again,
            ),
            journals=journals,
            relayed=relayed,
            approval_ttl_s=limits.approval_ttl_s,
            bridge_checks=lambda: [self.jupyter_ai.check(self.jupyter_ai_bridge)],
            gated_extensions=self.jupyter_ai.gated_extensions,
        )
        make_agent_aware(serverapp.identity_provider)
        narrow_for_agents(serverapp.authorizer)
        staged = StagedWrites(
            lambda agent: (
                agent_upper(
                    state_dir / KERNELS_FOLDER,
                    agent,
                    [k for k, by in gate.kernels_started.items() if by == agent],
                    lambda kernel_id: sandbox_folders(serverapp.kernel_manager, kernel_id),
                )
                if self.agent_code == "sandbox"
                else None
            ),
            journals.append,
            root,
            self.sandbox_overlay_bytes,
        )
        ContentsHold(
            hold, root, lambda: secret_dirs(serverapp, state_dir), self.log, staging=staged
        ).install(serverapp.contents_manager)
        never_sign_for_agents(serverapp.contents_manager, is_agent, self.log)
        # Sandboxed kernels' provisioners are made by jupyter_client: the web app's settings
        # are how they find theirs.
        self.settings[SANDBOX_SETTING] = sandbox_settings(
            self.sandbox_bwrap,
            root,
            state_dir,
            [Path(path) for path in self.sandbox_readable_paths],
            sandbox_hidden(serverapp, state_dir),
            self.sandbox_home_bytes,
            self.sandbox_tmp_bytes,
            processes=self.sandbox_processes,
            overlay_bytes=self.sandbox_overlay_bytes,
        )
        self._overlay_bound = OverlayBound(
            lambda: sandboxed_kernels(serverapp.kernel_manager),
            self.sandbox_overlay_bytes,
            stop_overgrown(serverapp.kernel_manager, journals.append, self.log),
        )
        # These settings are copied over the web app's when this method returns.
        self.keep_gate_in_force(self.settings)
        self._pausing: set[asyncio.Future[int]] = set()
        self._sweeper = PeriodicCallback(self._sweep, 1000)
        self._sweeper.start()
        atexit.register(self._journal_lost_once)
        for loosened in loosened_origin_checks(serverapp):
            self.log.warning(
                "jupyter-approvals: %s: a page of another site could act in this server with "
                "the person's browser session, and decide approvals (see jupyter approvals "
                "doctor).",
                loosened,
            )
        if not serverapp.identity_provider.auth_enabled:
            self.log.warning(
                "jupyter-approvals: this server has no authentication; agent tokens are refused "
                "and agents cannot be told from the person (see jupyter approvals doctor)."
            )

    def keep_gate_in_force(self, settings: dict[str, Any]) -> bool:
        """Wrap what is in ``settings`` and not wrapped yet: the kernel websocket connection
        class, the identity provider and the authorizer.

        Returns whether it had to (another extension put its own there after us).
        """
        had_to = False
        current = settings.get(CONNECTION_SETTING)
        if current is not None:
            wrapped = wrap_kernel_connection(current)
            if wrapped is not current:
                settings[CONNECTION_SETTING] = wrapped
                had_to = True
        if settings.get("identity_provider") is not None:
            had_to = make_agent_aware(settings["identity_provider"]) or had_to
        if settings.get("authorizer") is not None:
            had_to = narrow_for_agents(settings["authorizer"]) or had_to
        return had_to

    def _sweep(self) -> None:
        assert self.serverapp is not None
        if self.keep_gate_in_force(self.serverapp.web_app.settings):
            self.log.warning(
                "jupyter-approvals: the kernel websocket connection class, identity provider or "
                "authorizer was replaced by another extension; the agent gate was wrapped around "
                "it again."
            )
        links = self.parts.links
        links.sync()
        links.refresh_soon()
        self._overlay_bound.sweep()
        for agent in self.parts.gate.sweep():  # paused from the CLI
            task = asyncio.ensure_future(reject_in_kernels(links, agent, None, channel="server"))
            self._pausing.add(task)
            task.add_done_callback(self._pausing.discard)

    def _journal_lost_once(self) -> None:
        """Journal what the kernels lose as the server stops, once: from the extension's stop
        (a server stopped by SIGTERM or its shutdown API; extensions stop before kernels), or
        at the process's exit (SIGINT, which a hub's spawner sends first, ends jupyter_server's
        loop without stopping its extensions, and the kernels then end without a word)."""
        parts: RestParts | None = getattr(self, "parts", None)
        if parts is None or getattr(self, "_lost_journaled", False):
            return
        self._lost_journaled = True
        journal_lost_at_stop(parts.links, parts.journals)

    def initialize_handlers(self) -> None:
        """Register the REST endpoints of docs/protocol.md section 6."""
        self.handlers.extend(
            (pattern, handler, {"parts": self.parts}) for pattern, handler in ROUTES
        )

    async def stop_extension(self) -> None:
        """Disconnect from the kernels and stop the sweep."""
        bridge = getattr(self, "jupyter_ai", None)
        if bridge is not None:
            bridge.uninstall()
        sweeper = getattr(self, "_sweeper", None)
        if sweeper is not None:
            sweeper.stop()
        self._journal_lost_once()
        atexit.unregister(self._journal_lost_once)
        parts: RestParts | None = getattr(self, "parts", None)
        if parts is not None:
            links = parts.links
            serverapp = self.serverapp
            if serverapp is not None and serverapp.event_logger is not None:
                serverapp.event_logger.remove_listener(
                    schema_id=KERNEL_ACTIONS_EVENT, listener=links.on_kernel_action
                )
            links.close()
