"""What a git approval covers besides the repository: the program, its environment and config.

git obeys far more than its arguments: ``GIT_SSH_COMMAND``, ``GIT_CONFIG_PARAMETERS``, a
``core.hooksPath`` or a ``url.<base>.insteadOf`` set after an approval would change what the
approved commit or push runs, or where it goes. So both subjects hold a :class:`GitSetting`:

- the git program found on PATH: its path, the file it resolves to, and that file's content;
- a digest of every variable that steers git (all ``GIT_*``, ``SSH_*``, ``LD_*`` and
  ``DYLD_*``, every ``*_proxy``/``*_PROXY``, ``PATH``, ``HOME``, ``XDG_CONFIG_HOME``,
  ``GNUPGHOME``, ``SSL_CERT_FILE``, ``SSL_CERT_DIR``, ``CURL_CA_BUNDLE``) as git receives them;
- a digest of the effective config entries (``git config --list``: every scope, includes,
  ``GIT_CONFIG_*``) that start programs or decide where and how the operation goes.

The card lists the steering variables that are set, except the ordinary ones (:data:`ORDINARY`);
secret-looking ones by name only. The subject computed right before a run hands its setting to
the run (``ops._handoff``), so the writer runs the very program and environment
that were fingerprinted.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..core.fingerprint import FileContent
from .git_command import RUNNER_VARIABLES, GitRun, git_run, invalid, redact_url, run_git
from .redact import is_secret_name

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

    def subject(self) -> dict[str, Any]:
        """The part of an operation's subject that pins program, environment and config."""
        return {
            "program": self.run.program,
            "program file": os.path.realpath(self.run.program),
            "program content": FileContent(self.run.program),
            "environment": self.environment,
            "config": self.config,
        }

    def card_lines(self) -> list[str]:
        """``  environment: NAME=value`` for each steering variable that is not ordinary."""
        return [f"  environment: {line}" for line in self.shown]


def git_setting(repo: str, config_covered: Callable[[str], bool]) -> GitSetting:
    """Read the program, the environment git gets and the config ``config_covered`` selects."""
    run = git_run()
    steering = {name: value for name, value in run.env.items() if steers_git(name)}
    code, listing, err = run_git(repo, "config", "--list", "-z", via=run)
    if code != 0:
        raise invalid(f"cannot read git's config: {err or 'git config failed'}.", repository=repo)
    entries = [entry for entry in listing.split("\0") if entry]
    covered = [entry for entry in entries if config_covered(entry.partition("\n")[0])]
    return GitSetting(
        run=run,
        environment=_digest(part for item in sorted(steering.items()) for part in item),
        config=_digest(covered),  # in git's order: the last of repeated entries wins
        shown=tuple(
            _shown(name, value, steering)
            for name, value in sorted(steering.items())
            if name not in ORDINARY
        ),
    )


def _digest(parts: Iterable[str]) -> str:
    hasher = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogateescape")
        hasher.update(len(data).to_bytes(8, "big") + data)
    return f"sha256:{hasher.hexdigest()}"


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
