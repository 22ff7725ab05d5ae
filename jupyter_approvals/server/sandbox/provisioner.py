"""A kernel provisioner that starts the kernelspec's own command inside the sandbox.

jupyter_client picks it for a kernelspec whose ``metadata.kernel_provisioner`` names
``jupyter-approvals-sandbox`` (the "Python 3 (sandboxed)" kernel this package installs). It
needs the jupyter-approvals server extension, which hands it its settings
(:class:`SandboxSettings`) through the web app's settings; without them, or where bubblewrap
cannot build the sandbox, the kernel does not start (``APPROVAL_SANDBOX_UNAVAILABLE``), never
unsandboxed.

The kernel's channels use the ipc transport, with their sockets and the connection file in a
folder of the kernel's own (a new network namespace cannot reach the server's TCP ports, and the
Jupyter runtime folder, which holds the server's token, is never shown to the kernel).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from jupyter_client.provisioning.local_provisioner import LocalProvisioner
from tornado import web

from ...core import errors
from ...core.pids_cgroup import entering, make_pids_cgroup, needs_pids_cgroup, remove_pids_cgroup
from ...core.project import STATE_DIR_ENV
from .command import (
    SYSTEM_PATHS,
    KernelFolders,
    ProcessLimits,
    SandboxPlan,
    bwrap_argv,
    masked_paths,
    readable_paths,
    sandbox_environment,
)
from .decide import Decided, remove_discarded
from .settings import SANDBOX_SETTING, SandboxSettings, find_and_try

#: The name kernelspecs use for this provisioner (its entry point).
PROVISIONER_NAME = "jupyter-approvals-sandbox"
#: The kernelspec the wheel installs with this provisioner ("Python 3 (sandboxed)").
SANDBOXED_KERNEL_NAME = "python3-sandboxed"


def _short_base() -> str:
    """A folder for the kernels' socket folders whose paths stay short: the user's runtime
    folder (``XDG_RUNTIME_DIR``, private to the user) when it is short, else ``/tmp``."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime and len(runtime) <= 40 and os.path.isdir(runtime):
        return runtime
    return tempfile.gettempdir() if len(tempfile.gettempdir()) <= 40 else "/tmp"


class SandboxProvisioner(LocalProvisioner):
    """Launches the kernel under bubblewrap, with the project as a copy-on-write overlay."""

    folders: KernelFolders | None = None
    #: The kernel's pids cgroup, where the server runs as root (:mod:`...core.pids_cgroup`).
    pids_cgroup: Path | None = None

    def _settings(self) -> SandboxSettings:
        try:
            return self._checked_settings()
        except errors.ApprovalSandboxUnavailable as unavailable:
            # jupyter_server answers an HTTPError with its message; anything else with
            # "Unhandled error", which would hide the code and the reason from the person.
            raise web.HTTPError(unavailable.http_status, str(unavailable)) from unavailable

    def _checked_settings(self) -> SandboxSettings:
        km = self.parent
        serverapp = getattr(getattr(km, "parent", None), "parent", None)
        web_app = getattr(serverapp, "web_app", None)
        settings = getattr(web_app, "settings", {}).get(SANDBOX_SETTING)
        if not isinstance(settings, SandboxSettings):
            raise errors.ApprovalSandboxUnavailable(
                "a sandboxed kernel needs the jupyter-approvals server extension; it is not "
                "loaded in this server, so the kernel was not started",
                reason="extension not loaded",
            )
        return settings

    def _bwrap(self, settings: SandboxSettings) -> str:
        bwrap, because = find_and_try(settings.configured_bwrap)
        if bwrap is None:
            raise web.HTTPError(
                errors.ApprovalSandboxUnavailable.http_status,
                str(
                    errors.ApprovalSandboxUnavailable(
                        f"the sandbox is unavailable here: {because}; the kernel was not "
                        "started (run `jupyter approvals doctor`)",
                        reason=because,
                    )
                ),
            )
        return bwrap

    async def pre_launch(self, **kwargs: Any) -> dict[str, Any]:
        """Point the kernel's channels at its own socket folder, then prepare as usual."""
        settings = self._settings()
        self._bwrap(settings)
        km = self.parent
        if km is None:  # jupyter_client always gives its kernel manager
            raise web.HTTPError(500, "a sandboxed kernel needs a kernel manager")
        # A restart keeps the socket folder and connection file, as a TCP kernel keeps its
        # ports: the clients connected to the kernel reach the new process at the same paths.
        previous = Path(km.connection_file).parent if km.transport == "ipc" else None
        if previous is not None and previous.name.startswith("jpa-") and previous.is_dir():
            sockets = previous
        else:
            sockets = Path(tempfile.mkdtemp(prefix="jpa-", dir=_short_base()))
        folders = KernelFolders(settings.kernels_root / self.kernel_id, sockets)
        # What the previous process staged stays in the upper folder until a person decides
        # it; overlayfs wants its work folder empty at each mount.
        shutil.rmtree(folders.work, ignore_errors=True)
        folders.create()
        # The overlay is not mounted now: created files a person discarded can leave it.
        remove_discarded(folders.upper, Decided(folders.decided))
        km.transport = "ipc"
        km.cache_ports = False
        km.ip = str(folders.sockets / "k")
        km.connection_file = str(folders.sockets / "connection.json")
        self.folders = folders
        return dict(await super().pre_launch(**kwargs))

    async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> Any:
        """Start ``cmd`` inside the sandbox."""
        settings = self._settings()
        bwrap = self._bwrap(settings)
        if self.folders is None:
            raise errors.ApprovalSandboxUnavailable(
                "the kernel's sandbox was not prepared; the kernel was not started",
                reason="launch without pre_launch",
            )
        project = settings.project
        cwd = Path(kwargs.get("cwd") or project).resolve()
        if cwd != project and project not in cwd.parents:
            cwd = project
        plan = SandboxPlan(
            bwrap=bwrap,
            project=project,
            folders=self.folders,
            readable=readable_paths(settings.readable, (), project),
            cwd=cwd,
            home_bytes=settings.home_bytes,
            tmp_bytes=settings.tmp_bytes,
            masked=masked_paths(
                [project, *settings.readable, *map(Path, SYSTEM_PATHS)],
                settings.hidden,
                settings.home,
            ),
            limits=ProcessLimits(sys.executable, settings.processes, settings.overlay_bytes),
        )
        if needs_pids_cgroup() and self.pids_cgroup is None:
            self.pids_cgroup = make_pids_cgroup(f"jpa-{self.kernel_id}", settings.processes)
        environment = sandbox_environment(dict(kwargs.get("env") or {}), plan.home, self.kernel_id)
        # The kernel's own journal (its cards' record) goes to a folder of its own; the
        # server keeps its own record of what a person decided about the kernel's changes.
        environment[STATE_DIR_ENV] = str(self.folders.state)
        kwargs["env"] = environment
        kwargs["cwd"] = str(project)
        argv = entering(self.pids_cgroup, bwrap_argv(plan, cmd))
        return await super().launch_kernel(argv, **kwargs)

    async def cleanup(self, restart: bool = False) -> None:
        """Remove the kernel's sockets when it ends (a restart keeps them); the overlay's
        upper folder stays until its changes are decided."""
        await super().cleanup(restart=restart)
        if self.folders is not None and not restart:
            shutil.rmtree(self.folders.sockets, ignore_errors=True)
            shutil.rmtree(self.folders.work, ignore_errors=True)
        if not restart:
            remove_pids_cgroup(self.pids_cgroup)
            self.pids_cgroup = None


def sandboxed_kernels(kernel_manager: Any) -> Iterator[tuple[str, KernelFolders]]:
    """The running kernels of ``kernel_manager`` that run in a sandbox, with their folders."""
    for kernel_id in list(kernel_manager.list_kernel_ids()):
        folders = sandbox_folders(kernel_manager, kernel_id)
        if folders is not None:
            yield kernel_id, folders


def kernels_with_changes(
    kernel_manager: Any, kernels_root: Path
) -> Iterator[tuple[str, KernelFolders]]:
    """The running sandboxed kernels, then the kernels that ended (shut down, stopped at a
    limit, or of an earlier server run) leaving staged changes: those wait for a person too."""
    running = dict(sandboxed_kernels(kernel_manager))
    yield from running.items()
    try:
        ended = sorted(kernels_root.iterdir())
    except OSError:
        return
    for root in ended:
        if root.name in running or not root.is_dir():
            continue
        folders = KernelFolders(root, sockets=root / "sockets-gone")
        try:
            with os.scandir(folders.upper) as entries:
                staged = any(True for _ in entries)
        except OSError:
            continue
        if staged:
            yield root.name, folders


def is_sandboxed(kernel_manager: Any, kernel_id: str) -> bool:
    """Whether kernel ``kernel_id`` of ``kernel_manager`` runs in a sandbox now (asked for every
    execute an agent sends: one lookup, not a walk over the kernels)."""
    return sandbox_folders(kernel_manager, kernel_id) is not None


def sandbox_folders(kernel_manager: Any, kernel_id: str) -> KernelFolders | None:
    """The folders of kernel ``kernel_id`` if it runs in a sandbox now (else None)."""
    try:
        provisioner = getattr(kernel_manager.get_kernel(kernel_id), "provisioner", None)
    except (KeyError, web.HTTPError):  # jupyter_server's manager answers 404 for no kernel
        return None
    return provisioner.folders if isinstance(provisioner, SandboxProvisioner) else None


def sandbox_unavailable(kernel_spec_manager: Any, configured_bwrap: str) -> str | None:
    """Why no sandboxed kernel can start here (None: one can): its kernelspec is not installed,
    or bubblewrap cannot build the sandbox (:func:`.settings.find_and_try`)."""
    try:
        kernel_spec_manager.get_kernel_spec(SANDBOXED_KERNEL_NAME)
    except Exception:  # NoSuchKernel, or a kernelspec that does not load
        return f"the {SANDBOXED_KERNEL_NAME!r} kernelspec is not installed"
    bwrap, because = find_and_try(configured_bwrap)
    return None if bwrap is not None else because


def sandbox_available(kernel_spec_manager: Any, configured_bwrap: str) -> bool:
    """Whether a sandboxed kernel can start here (:func:`sandbox_unavailable`)."""
    return sandbox_unavailable(kernel_spec_manager, configured_bwrap) is None
