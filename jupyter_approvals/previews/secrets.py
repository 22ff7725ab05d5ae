"""What looks like a secret in what an operation would send or store: file names a secret is
kept in (``.env``, private keys, credential files) and lines that hold one (a private key, an
AWS access key id, ``NAME=value`` with a secret-looking name). A preview flags them first, so
a person sees a staged ``.env`` before reading a long diff.

A flag, never a guarantee: a secret under an innocent name in an innocent file is not found
(docs/security.md). Nothing here changes what runs or what the fingerprint covers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import PurePosixPath

from .redact import is_secret_name

__all__ = ["secret_looking_lines", "secret_looking_path"]

#: File names a secret is kept in, and what each is.
_NAMES = {
    ".env": "an environment file",
    ".netrc": "a credentials file",
    ".pgpass": "a credentials file",
    ".npmrc": "a registry credentials file",
    ".pypirc": "a registry credentials file",
    ".git-credentials": "a credentials file",
    "credentials": "a credentials file",
    "credentials.json": "a credentials file",
    "id_rsa": "a private key",
    "id_dsa": "a private key",
    "id_ecdsa": "a private key",
    "id_ed25519": "a private key",
}
#: File name endings a secret is kept in.
_SUFFIXES = {
    ".pem": "a key or certificate file",
    ".key": "a private key",
    ".p12": "a key store",
    ".pfx": "a key store",
    ".jks": "a key store",
    ".keystore": "a key store",
}

_PATTERNS = (
    re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----"),
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),  # an AWS access key id
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"),  # a GitHub token
    re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),  # a Slack token
    re.compile(r"\bsk-[A-Za-z0-9_-]{20,}"),  # an API secret key of several services
)
#: ``NAME=value``, ``NAME: value`` or ``"name": "value"``, the value at least 6 characters.
_ASSIGNED = re.compile(r"""["']?([A-Za-z_][A-Za-z0-9_.-]*)["']?\s*[:=]\s*["']?([^\s"',;]{6,})""")


def secret_looking_path(path: str) -> str | None:
    """What kind of secret file ``path`` looks like ("an environment file"), or None."""
    name = PurePosixPath(path).name.lower()
    if name in _NAMES:
        return _NAMES[name]
    if name.startswith(".env.") and not name.endswith((".example", ".sample", ".template")):
        return _NAMES[".env"]
    for suffix, what in _SUFFIXES.items():
        if name.endswith(suffix):
            return what
    if name.startswith(("id_rsa", "id_ed25519", "id_ecdsa")) and not name.endswith(".pub"):
        return "a private key"
    return None


def _line_looks_secret(line: str) -> bool:
    if any(pattern.search(line) for pattern in _PATTERNS):
        return True
    return any(is_secret_name(name) for name, _ in _ASSIGNED.findall(line))


def secret_looking_lines(lines: Iterable[str]) -> int:
    """How many of ``lines`` look like they hold a secret."""
    return sum(1 for line in lines if _line_looks_secret(line))
