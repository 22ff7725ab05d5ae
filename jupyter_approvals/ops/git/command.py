"""Running the ``git`` program for the git operations: never waiting, never elsewhere.

Every call runs ``git --no-pager -C <repo>`` with ``LC_ALL=C``, ``GIT_TERMINAL_PROMPT=0``, no
stdin, its own session (no terminal to prompt on) and a timeout that stops the whole session,
so nothing waits for a password. Variables that would point git at another repository than the
one named (``GIT_DIR``, ``GIT_WORK_TREE``, ``GIT_INDEX_FILE``...) are dropped.

A :class:`GitRun` pins the program and environment of one call: the writers run git with the
very program and environment whose fingerprint was approved (see :mod:`.setting`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import threading
from collections.abc import Mapping
from dataclasses import dataclass

from ...core.errors import ApprovalFingerprintMismatch
from ...previews.redact import redact_urls_in_text
from ..common.paths import path_text
from ..common.refusal import invalid_argument

#: Seconds a local git command may take (rev-parse, write-tree, diff).
LOCAL_SECONDS = 30.0
#: Seconds ``git ls-remote`` may take to reach the remote.
REMOTE_SECONDS = 30.0
# These would make git act on another repository, index or object store than the one named.
_LOCATION_VARIABLES = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
)
#: Variables every git call gets from this runner, whatever the kernel's environment says.
RUNNER_VARIABLES: Mapping[str, str] = {
    "LC_ALL": "C",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_EDITOR": "true",
}


class GitCommandFailed(RuntimeError):
    """A git command failed during an approved run; ``stderr`` holds git's own words."""

    def __init__(self, message: str, stderr: str = "") -> None:
        super().__init__(message)
        self.stderr = stderr


class GitCommitDiffers(GitCommandFailed):
    """The commit was made but is not what was approved (a hook changed the index or message)."""

    def __init__(self, message: str, sha: str) -> None:
        super().__init__(message)
        self.sha = sha


#: ``https://user:token@host/x`` -> ``https://***@host/x`` everywhere in a text.
redact_url = redact_urls_in_text


# -- running git ---------------------------------------------------------------------------


invalid = invalid_argument


def nothing_kept(action: str, repo: str) -> ApprovalFingerprintMismatch:
    """The refusal of a run that was handed no reading of its own subject.

    Reading the repository again here would run with a program, environment and state nobody
    approved; the run refuses instead (fails closed).
    """
    return ApprovalFingerprintMismatch(
        f"{action} in {repo}: the reading of the repository that was fingerprinted for this "
        "approval was not handed to the run, so what would run cannot be shown to be what was "
        "approved. Nothing ran; call again to ask for a new approval.",
        action=action,
        repository=repo,
    )


@dataclass(frozen=True)
class GitRun:
    """The git program and the environment git receives, as read at one moment."""

    program: str
    env: Mapping[str, str]


def git_run() -> GitRun:
    """The git program found on PATH and the environment git gets now (os.environ at call time).

    os.environ is read at call time so that a notebook's GIT_AUTHOR_NAME or
    GIT_COMMITTER_DATE reach git; what could steer git is fingerprinted by :mod:`.setting`.
    """
    env = {k: v for k, v in os.environ.items() if k not in _LOCATION_VARIABLES}
    env.update(RUNNER_VARIABLES)
    program = shutil.which("git", path=env.get("PATH"))
    if program is None:
        # Not APPROVAL_MISSING_DEPENDENCY: that code names a pip extra, and no extra brings git.
        raise invalid(
            "The git program is not installed (not found on PATH); install git to commit or push.",
            program="git",
        )
    return GitRun(program=os.path.abspath(program), env=env)


def _argv(repo: str, run: GitRun) -> list[str]:
    return [
        run.program,
        "--no-pager",
        "-C",
        repo,
        "-c",
        "color.ui=never",
        "-c",
        "core.quotePath=off",
    ]


def git_argv(repo: str, run: GitRun, *args: str) -> list[str]:
    """The exact argv a git call in ``repo`` with ``args`` runs (what a card shows first)."""
    return [*_argv(repo, run), *args]


def _kill(process: subprocess.Popen[bytes]) -> None:
    # The whole session: ssh or a hook started by git must not outlive the timeout.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def run_git(
    repo: str, *args: str, timeout: float = LOCAL_SECONDS, via: GitRun | None = None
) -> tuple[int, str, str]:
    """Run git in ``repo``: (exit code, stdout, stderr); exit code -1 when it timed out.

    ``via`` pins the program and environment (default: as they are now).
    """
    process = _start(repo, args, via or git_run(), stderr=subprocess.PIPE)
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(process)
        process.communicate()
        return -1, "", f"git {args[0]} did not finish within {timeout:g} s and was stopped"
    return process.returncode, decode(out), redact_url(decode(err)).strip()


def _start(repo: str, args: tuple[str, ...], run: GitRun, stderr: int) -> subprocess.Popen[bytes]:
    """Start git in ``repo`` with ``run``'s program and environment: no stdin, its own session
    (no terminal to prompt on, and a timeout can stop everything it started)."""
    return subprocess.Popen(
        git_argv(repo, run, *args),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=stderr,
        env=dict(run.env),
        start_new_session=True,
    )


def decode(data: bytes) -> str:
    """git output as text (invalid UTF-8 replaced, never fatal)."""
    return data.decode("utf-8", "replace")


def git_output(
    repo: str, *args: str, what: str, timeout: float = LOCAL_SECONDS, via: GitRun | None = None
) -> str:
    """stdout of a git command that must succeed (stripped), else APPROVAL_INVALID_ARGUMENT."""
    code, out, err = run_git(repo, *args, timeout=timeout, via=via)
    if code != 0:
        raise invalid(f"{what}: {err or f'git {args[0]} failed'}.", repository=repo, git=err)
    return out.strip()


def git_prefix(repo: str, *args: str, limit: int, timeout: float) -> tuple[str, bool]:
    """The first ``limit`` bytes of a command's output, and whether that was all of it."""
    process = _start(repo, args, git_run(), stderr=subprocess.DEVNULL)
    timer = threading.Timer(timeout, _kill, (process,))
    timer.start()
    stdout = process.stdout
    if stdout is None:  # pragma: no cover - PIPE always gives one
        raise RuntimeError("git output pipe missing")
    try:
        with stdout:
            data = stdout.read(limit + 1)
        if len(data) > limit:
            _kill(process)
        complete = process.wait() == 0 and len(data) <= limit
    finally:
        timer.cancel()
    return decode(data[:limit]), complete


def toplevel(repo: object) -> str:
    """The absolute top level of the work tree ``repo`` is in, or APPROVAL_INVALID_ARGUMENT."""
    text = path_text(repo, "repo")
    return git_output(text, "rev-parse", "--show-toplevel", what=f"{text!r} is not a git work tree")


def rev_sha(repo: str, rev: str) -> str | None:
    """The commit sha ``rev`` names, or None."""
    code, out, _ = run_git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    return out.strip() if code == 0 else None


def current_branch(repo: str) -> str | None:
    """The checked-out branch, or None on a detached HEAD."""
    code, out, _ = run_git(repo, "symbolic-ref", "--quiet", "--short", "HEAD")
    return out.strip() if code == 0 else None
