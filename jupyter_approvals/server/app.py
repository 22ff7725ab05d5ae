"""The jupyter-approvals server extension: the REST API the sidebar speaks.

Enabled on install by ``jupyter-config/server-config/jupyter_approvals.json``; configured with
``c.ApprovalsServer.*`` in ``jupyter_server_config.py``.
"""

from __future__ import annotations

from jupyter_server.extension.application import ExtensionApp
from traitlets import Float

from .._version import __version__
from .handlers import DecisionHandler, DoctorHandler, JournalHandler, PendingHandler
from .kernels import KernelLinks

API = "jupyter-approvals/api"


class ApprovalsServer(ExtensionApp):
    """Serves the pending approvals of every kernel, the journal and the doctor."""

    name = "jupyter_approvals"
    version = __version__
    load_other_extensions = True

    kernel_timeout = Float(
        2.0,
        help=(
            "Seconds the server waits for one kernel to answer a listing or a decision. A kernel "
            "that takes longer (busy running a cell, or dead) is reported as unanswered; the "
            "other kernels' answers are not held up by it."
        ),
    ).tag(config=True)

    def initialize_settings(self) -> None:
        """Create the kernel links the handlers share."""
        assert self.serverapp is not None
        self.settings["jupyter_approvals.links"] = KernelLinks(
            self.serverapp.kernel_manager, self.kernel_timeout
        )

    def initialize_handlers(self) -> None:
        """Register the REST endpoints of docs/protocol.md section 6."""
        self.handlers.extend(
            [
                (rf"/{API}/pending", PendingHandler),
                (rf"/{API}/pending/([^/]+)/([^/]+)", DecisionHandler),
                (rf"/{API}/journal", JournalHandler),
                (rf"/{API}/doctor", DoctorHandler),
            ]
        )

    async def stop_extension(self) -> None:
        """Disconnect from the kernels."""
        links = self.settings.get("jupyter_approvals.links")
        if links is not None:
            links.close()
