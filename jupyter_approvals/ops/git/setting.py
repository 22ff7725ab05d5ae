"""What a git approval covers besides the repository: program, environment, config and hooks.

git obeys far more than its arguments: ``GIT_SSH_COMMAND``, ``GIT_CONFIG_PARAMETERS``, a
``core.hooksPath``, a ``url.<base>.insteadOf``, an edited hook or a ``BASH_ENV`` that a hook's
shell reads, set after an approval, would change what the approved commit or push runs, or
where it goes. So both subjects hold a :class:`GitSetting`:

- the git program found on PATH: its path, the file it resolves to, and that file's content;
- a digest of every variable that steers git (all ``GIT_*``, ``SSH_*``, ``LD_*`` and
  ``DYLD_*``, every ``*_proxy``/``*_PROXY``, ``PATH``, ``HOME``, ``XDG_CONFIG_HOME``,
  ``GNUPGHOME``, ``SSL_CERT_FILE``, ``SSL_CERT_DIR``, ``CURL_CA_BUNDLE``) as git receives them;
- the sha256 of the complete environment git receives (hooks and helpers inherit all of it:
  ``BASH_ENV``, ``PYTHONPATH``, ``PERL5OPT``, ``NODE_OPTIONS``...), as ``shell.run`` binds it;
- a digest of the effective config entries (``git config --list``: every scope, includes,
  ``GIT_CONFIG_*``) that start programs or decide where and how the operation goes;
- the effective hooks directory (``git rev-parse --git-path hooks``, which honours
  ``core.hooksPath``) and, for each hook the operation may run, its content if it exists as
  an executable file (git runs it), else that it does not run.

The card lists the steering variables that are set, except the ordinary ones (:data:`ORDINARY`);
secret-looking ones by name only; and the hooks that will run. The subject computed right
before a run hands its setting to the run (``kernel.handoff``), so the writer runs the very
program and environment that were fingerprinted.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ...core.fingerprint import FileContent, fingerprint
from ...previews.redact import is_secret_name
from ..common.environment import environment_digest
from .command import RUNNER_VARIABLES, GitRun, git_run, invalid, redact_url, run_git

_STEERING_NAMES = frozenset(
    {
        "PATH",
        "HOME",
        "XDG_CONFIG_HOME",
        "GNUPGHOME",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "CURL_CA_BUNDLE",
    }
)
_STEERING_PREFIXES = ("GIT_", "SSH_", "LD_", "DYLD_")

#: Steering variables set in most sessions; fingerprinted, but not listed on the card. The
#: identity variables are shown as the commit's author and committer instead.
ORDINARY = frozenset(
    {
        "PATH",
        "HOME",
        "XDG_CONFIG_HOME",
        "SSH_AUTH_SOCK",
        "SSH_AGENT_PID",
        "SSH_CLIENT",
        "SSH_CONNECTION",
        "SSH_TTY",
        *(
            f"GIT_{who}_{part}"
            for who in ("AUTHOR", "COMMITTER")
            for part in ("NAME", "EMAIL", "DATE")
        ),
        *RUNNER_VARIABLES,
    }
)

#: Hooks ``git commit`` may run in the committing repository (``pre-auto-gc`` through the
#: automatic maintenance a commit starts; ``reference-transaction`` when HEAD's branch moves).
COMMIT_HOOKS = (
    "pre-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "post-index-change",
    "reference-transaction",
    "pre-auto-gc",
)
#: Hooks ``git push`` may run in the pushing repository (``reference-transaction`` when the
#: remote-tracking branch is updated). The remote's own hooks are the remote's business.
PUSH_HOOKS = ("pre-push", "reference-transaction")
_NOT_RUN = "absent or not executable: not run"

# Config that makes git start a program, whatever the operation.
_STARTS_PROGRAMS = r"core\.(hookspath|fsmonitor|sshcommand|askpass|gitproxy)"
_COMMIT_CONFIG = re.compile(rf"{_STARTS_PROGRAMS}|(commit|gpg|user|i18n)\..*")
_PUSH_CONFIG = re.compile(
    rf"{_STARTS_PROGRAMS}|url\..*\.(push)?insteadof|(credential|http|protocol|push|ssh|gpg)\..*"
)
_CONFIG_KEY = re.compile(r"GIT_CONFIG_KEY_(\d+)")


def steers_git(name: str) -> bool:
    """True for an environment variable that can change what git runs or where it connects."""
    return (
        name in _STEERING_NAMES
        or name.startswith(_STEERING_PREFIXES)
        or name.upper().endswith("_PROXY")
    )


def commit_config(key: str) -> bool:
    """Config keys a commit's approval covers: hooks, signing, identity, encoding."""
    return _COMMIT_CONFIG.fullmatch(key.lower()) is not None


def push_config(remote: str) -> Callable[[str], bool]:
    """Config keys a push's approval covers: ``remote.<remote>.*``, URL rewriting, transport."""
    prefix = f"remote.{remote}."  # git prints the subsection as written, the rest lower case
    return lambda key: key.startswith(prefix) or _PUSH_CONFIG.fullmatch(key.lower()) is not None


@dataclass(frozen=True)
class GitSetting:
    """The program, environment and config one git operation was previewed or runs with."""

    run: GitRun
    environment: str
    config: str
    shown: tuple[str, ...]
    hooks_dir: str
    #: Every hook the operation may run, in git's order, each with whether git runs it.
    hooks: tuple[tuple[str, bool], ...]

    def subject(self) -> dict[str, Any]:
        """The part of an operation's subject that pins program, environment, config, hooks."""
        return {
            "program": self.run.program,
            "program file": os.path.realpath(self.run.program),
            "program content": FileContent(self.run.program),
            "environment": self.environment,
            "environment_sha256": environment_digest(self.run.env),
            "config": self.config,
            "hooks directory": self.hooks_dir,
            "hooks": [
                {"name": name, "content": FileContent(self.hook_path(name)) if runs else _NOT_RUN}
                for name, runs in self.hooks
            ],
        }

    def hook_path(self, name: str) -> str:
        """Where git looks for the hook ``name``."""
        return os.path.join(self.hooks_dir, name)

    def card_facts(self) -> list[tuple[str, str]]:
        """The hooks that will run, where, and the steering variables, as a card's facts."""
        running = ", ".join(name for name, runs in self.hooks if runs) or "none"
        facts = [("hooks that will run", running), ("path:hooks directory", self.hooks_dir)]
        return facts + [("environment", line) for line in self.shown]


def git_setting(
    repo: str, config_covered: Callable[[str], bool], hooks: Iterable[str]
) -> GitSetting:
    """Read the program, environment, the config ``config_covered`` selects, and ``hooks``."""
    run = git_run()
    steering = {name: value for name, value in run.env.items() if steers_git(name)}
    code, listing, err = run_git(repo, "config", "--list", "-z", via=run)
    if code != 0:
        raise invalid(f"cannot read git's config: {err or 'git config failed'}.", repository=repo)
    entries = [entry for entry in listing.split("\0") if entry]
    covered = [entry for entry in entries if config_covered(entry.partition("\n")[0])]
    hooks_dir = _hooks_dir(repo, run)
    return GitSetting(
        run=run,
        environment=fingerprint(sorted(steering.items())),
        config=fingerprint(covered),  # in git's order: the last of repeated entries wins
        hooks_dir=hooks_dir,
        hooks=tuple((name, _runs(os.path.join(hooks_dir, name))) for name in hooks),
        shown=tuple(
            _shown(name, value, steering)
            for name, value in sorted(steering.items())
            if name not in ORDINARY
        ),
    )


def _hooks_dir(repo: str, run: GitRun) -> str:
    # Asked of the pinned program and environment: GIT_CONFIG_* may set core.hooksPath.
    code, out, err = run_git(repo, "rev-parse", "--git-path", "hooks", via=run)
    if code != 0:
        raise invalid(f"cannot find the hooks directory: {err or 'git rev-parse failed'}.")
    # Relative to the top level, where git runs hooks from (repo is always the top level).
    return os.path.normpath(os.path.join(repo, out.rstrip("\n")))


def _runs(path: str) -> bool:
    # What git checks before running a hook: an executable file (a symlink is followed).
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _secret_key(key: str) -> bool:
    # http.extraHeader carries "Authorization: ..." under a harmless-looking name.
    return is_secret_name(key) or key.lower().endswith("extraheader")


def _shown(name: str, value: str, env: Mapping[str, str]) -> str:
    key = _CONFIG_KEY.fullmatch(name)
    if key is not None:  # a config key, not a secret, though its name contains "KEY"
        return f"{name}={value}"
    if name.startswith("GIT_CONFIG_VALUE_"):
        if _secret_key(env.get(f"GIT_CONFIG_KEY_{name[len('GIT_CONFIG_VALUE_') :]}", "")):
            return f"{name} (value hidden)"
        return f"{name}={redact_url(value)}"
    if is_secret_name(name):
        return f"{name} (value hidden)"
    if name == "GIT_CONFIG_PARAMETERS":
        try:
            pairs = [item.partition("=") for item in shlex.split(value)]
        except ValueError:
            return f"{name} (unreadable; value hidden)"
        return f"{name} sets " + ", ".join(
            f"{k} (value hidden)" if _secret_key(k) else f"{k}{eq}{redact_url(v)}"
            for k, eq, v in pairs
        )
    return f"{name}={redact_url(value)}"
