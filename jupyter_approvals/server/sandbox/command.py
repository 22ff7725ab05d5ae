"""The bubblewrap command line of one sandboxed kernel, built from what may be seen in it.

What the kernel sees is an allowlist, not "everything but a denylist":

- the system, read-only: ``/usr``, ``/bin``, ``/sbin``, ``/lib*`` and ``/etc``;
- its Python, read-only: the interpreter's prefixes and the folders on its ``sys.path``;
- the folders the person adds (``ApprovalsServer.sandbox_readable_paths``), read-only;
- the project, as a copy-on-write overlay at its own path: reads see the project, writes land
  in the kernel's upper folder, outside the project, and wait there as a change set;
- a private, size-bounded HOME and ``/tmp`` (empty at each start), its own ``/dev`` and
  ``/proc`` (its own PID namespace: no other process is visible), and the folder of its own
  channel sockets;
- no network (its own network namespace; the channels are unix sockets), no IPC or UTS
  namespace of the host's.

Everything else, the Jupyter runtime, config and data folders, the jupyter-approvals state
folder, credential stores in HOME and other kernels' sockets, is simply not there. The
environment is cleared to a short list as well (:data:`KEPT_ENVIRONMENT`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ...core.protocol import SANDBOX_ENVIRONMENT

#: Folders of the system bound read-only when they exist (a symlink is recreated as one).
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
#: Environment variables a sandboxed kernel keeps from the server's (and its kernelspec's):
#: none of them carries a credential. Everything else (tokens, cloud keys) is dropped.
KEPT_ENVIRONMENT = frozenset(
    {
        "PATH",
        "LANG",
        "LANGUAGE",
        "TZ",
        "TERM",
        "PYTHONHASHSEED",
        "PYTHONUNBUFFERED",
        "PYTHONIOENCODING",
        "PYDEVD_DISABLE_FILE_VALIDATION",
        "MPLBACKEND",
        "JPY_SESSION_NAME",
        "KERNEL_LAUNCH_TIMEOUT",
    }
)
#: The IPython startup files every sandboxed kernel runs: a clear error for network calls,
#: and for the sandbox's limits.
STARTUP_FILES = tuple(sorted((Path(__file__).parent / "startup").glob("*.py")))


@dataclass(frozen=True)
class KernelFolders:
    """Where one sandboxed kernel's own state lives, never in the project: its overlay's upper
    and work folders and its own journal in the server's state folder (``root``), and its
    channel sockets with its connection file in a short private folder (``sockets``: a unix
    socket's path has at most 107 bytes, which a state folder path can exceed)."""

    root: Path
    sockets: Path

    @property
    def state(self) -> Path:
        """The kernel's own state folder (its journal), writable in the sandbox."""
        return self.root / "state"

    @property
    def decided(self) -> Path:
        """The record of what a person decided about the kernel's changes (JSON)."""
        return self.root / "decided.json"

    @property
    def upper(self) -> Path:
        """The overlay's upper folder: every file the kernel created, changed or deleted."""
        return self.root / "upper"

    @property
    def work(self) -> Path:
        """overlayfs's own work folder (same file system as :attr:`upper`)."""
        return self.root / "work"

    def create(self) -> None:
        """Create the folders, readable by this user only."""
        for folder in (self.root, self.state, self.upper, self.work):
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)


@dataclass(frozen=True)
class SandboxPlan:
    """Everything one kernel's sandbox is made of."""

    bwrap: str
    project: Path
    folders: KernelFolders
    readable: tuple[Path, ...]
    cwd: Path
    home_bytes: int
    tmp_bytes: int
    masked: tuple[Path, ...] = ()
    home: Path = Path("/home/sandbox")
    #: The limits set on the kernel's processes (:func:`limited_argv`); None: none set.
    limits: ProcessLimits | None = None


@dataclass(frozen=True)
class ProcessLimits:
    """Resource limits of a sandboxed kernel's processes, set inside the sandbox before the
    kernel starts (so they count the sandbox's own processes only)."""

    #: The interpreter that sets them and then runs the kernel (readable in the sandbox).
    python: str
    #: Most processes and threads at once (``RLIMIT_NPROC``; not enforced for root, whose
    #: kernels get a pids cgroup instead where one can be made: :mod:`.pids_cgroup`).
    processes: int
    #: Largest file the kernel may write (``RLIMIT_FSIZE``): the overlay's bound.
    file_bytes: int


#: Sets the limits of argv[1:3], then becomes argv[3:]. Run with -S -I: nothing of the
#: project or the environment is imported before the limits hold.
_LIMITS_CODE = (
    "import os, resource, sys\n"
    "processes, file_bytes = int(sys.argv[1]), int(sys.argv[2])\n"
    "resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))\n"
    "resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))\n"
    "os.execvp(sys.argv[3], sys.argv[3:])\n"
)


def limited_argv(limits: ProcessLimits | None, kernel_argv: Sequence[str]) -> list[str]:
    """``kernel_argv`` started under ``limits`` (unchanged without)."""
    if limits is None:
        return list(kernel_argv)
    return [
        limits.python,
        "-S",
        "-I",
        "-c",
        _LIMITS_CODE,
        str(limits.processes),
        str(limits.file_bytes),
        *kernel_argv,
    ]


def python_paths(prefixes: Iterable[str], search_path: Iterable[str]) -> list[Path]:
    """The folders a Python needs to run: its prefixes and the existing folders on its
    ``sys.path`` (site-packages, an editable install's source), deduplicated, resolved."""
    found: dict[Path, None] = {}
    for entry in [*prefixes, *search_path]:
        if not entry:
            continue
        path = Path(entry)
        for candidate in (path, path.resolve()):
            if candidate.is_dir():
                found[candidate] = None
    return list(found)


def readable_paths(
    python: Iterable[Path], added: Iterable[Path], project: Path
) -> tuple[Path, ...]:
    """The allowlist bound read-only: ``python`` and ``added`` that exist, without the project
    (it is the overlay). Secrets inside them are covered (:func:`masked_paths`)."""
    kept: dict[Path, None] = {}
    for path in [*python, *added]:
        if path.resolve() != project and path.exists():
            kept[path] = None
    return tuple(kept)


#: Credential stores and browser profiles below HOME, covered when the project holds them.
CREDENTIALS_IN_HOME = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
    ".config/git/credentials",
    ".pgpass",
    ".my.cnf",
    ".pypirc",
    ".config/gh",
    ".local/share/keyrings",
    ".password-store",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".ipython",
    ".jupyter",
    ".local/share/jupyter",
    ".local/state",
)


def masked_paths(shown: Iterable[Path], hidden: Iterable[Path], home: Path) -> tuple[Path, ...]:
    """What must be covered inside the folders the sandbox shows (``shown``: the project, the
    readable folders, the system's): each of ``hidden`` (the Jupyter runtime, config and data
    folders, the state folder) and each credential store of :data:`CREDENTIALS_IN_HOME`
    that exists inside one of them. A project that is HOME holds them all."""
    folders = [path.resolve() for path in shown]
    found: dict[Path, None] = {}
    for path in [*hidden, *(home / name for name in CREDENTIALS_IN_HOME)]:
        resolved = path.resolve()
        inside = any(resolved != folder and _within(resolved, folder) for folder in folders)
        if inside and os.path.lexists(resolved):
            found[resolved] = None
    return tuple(found)


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def sandbox_environment(
    environment: Mapping[str, str], home: Path, kernel_id: str
) -> dict[str, str]:
    """The kernel's environment: :data:`KEPT_ENVIRONMENT` and ``LC_*`` from ``environment``,
    a private HOME and TMPDIR, and :data:`SANDBOX_ENVIRONMENT` naming the kernel."""
    kept = {
        name: value
        for name, value in environment.items()
        if name in KEPT_ENVIRONMENT or name.startswith("LC_")
    }
    return {
        **kept,
        "HOME": str(home),
        "TMPDIR": "/tmp",
        SANDBOX_ENVIRONMENT: kernel_id,
    }


def bwrap_argv(plan: SandboxPlan, kernel_argv: Sequence[str]) -> list[str]:
    """The command that runs ``kernel_argv`` in the sandbox ``plan`` describes."""
    # The environment is the one bubblewrap is started with (:func:`sandbox_environment`).
    # A user namespace of its own in which it may make no other (nested namespaces are how
    # most container escapes start), and no capability: bubblewrap run by root keeps them all
    # unless told otherwise.
    argv = [plan.bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL"]
    argv += ["--die-with-parent"]
    # jupyter_client's launcher names the server as the kernel's parent; in its own PID
    # namespace the kernel's parent is PID 1, and ipykernel would take that for an orphaning
    # and exit. --die-with-parent ends it with the server instead.
    argv += ["--unsetenv", "JPY_PARENT_PID"]
    for system in SYSTEM_PATHS:
        if os.path.islink(system):
            argv += ["--symlink", os.readlink(system), system]
        elif os.path.isdir(system):
            argv += ["--ro-bind", system, system]
    argv += ["--dev", "/dev", "--proc", "/proc"]
    argv += ["--size", str(plan.tmp_bytes), "--tmpfs", "/tmp"]
    for path in plan.readable:
        argv += ["--ro-bind", str(path), str(path)]
    argv += ["--size", str(plan.home_bytes), "--tmpfs", str(plan.home)]
    # IPython runs them at start: a failed connection then says the network is off, and a
    # limit reached says which.
    startup = plan.home / ".ipython" / "profile_default" / "startup"
    for explaining in STARTUP_FILES:
        argv += ["--ro-bind", str(explaining), str(startup / explaining.name)]
    project = str(plan.project)
    argv += ["--overlay-src", project]
    argv += ["--overlay", str(plan.folders.upper), str(plan.folders.work), project]
    # Secrets inside what is shown (a project that is HOME holds them all) are covered: a
    # folder by an empty read-only one, a file by an empty file.
    for path in plan.masked:
        if path.is_dir():
            argv += ["--tmpfs", str(path), "--remount-ro", str(path)]
        else:
            argv += ["--ro-bind", "/dev/null", str(path)]
    for own in (plan.folders.sockets, plan.folders.state):
        argv += ["--bind", str(own), str(own)]
    # The sandbox's own root (where the mount points above were made) is read-only: nothing is
    # writable but the project overlay, HOME, /tmp and the kernel's own two folders.
    argv += ["--remount-ro", "/"]
    argv += ["--chdir", str(plan.cwd)]
    return [*argv, "--", *limited_argv(plan.limits, kernel_argv)]
