"""Real git repositories for the git operations: a work tree, a bare ``origin``, other clones."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest


def git(repo: Path, *args: str) -> str:
    """Run git as a person would in a terminal; its stdout, stripped."""
    done = subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def stage(repo: Path, name: str, text: str) -> None:
    (repo / name).write_text(text)
    git(repo, "add", name)


def commit(repo: Path, name: str, text: str, message: str) -> str:
    stage(repo, name, text)
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def many_commits(repo: Path, count: int, subject_chars: int) -> None:
    """Add ``count`` commits on main, each with one new file and a subject of about
    ``subject_chars`` characters (made with fast-import: quickly, whatever the count)."""
    stream = []
    for i in range(count):
        stream += [
            "commit refs/heads/main",
            f"committer Ada <ada@example.org> {1_700_000_000 + i} +0000",
            f"data <<END\nCommit {i} {'y' * subject_chars}\nEND",
        ]
        if i == 0:
            stream.append("from refs/heads/main^0")
        stream += [f"M 644 inline f{i}.txt", f"data <<END\n{i}\nEND", ""]
    subprocess.run(
        ["git", "-C", str(repo), "fast-import", "--quiet"],
        input="\n".join(stream) + "\n",
        text=True,
        check=True,
    )


@pytest.fixture(autouse=True)
def isolated_git(monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither the user's git config nor their identity variables reach these repositories."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in ("AUTHOR", "COMMITTER"):
        for part in ("NAME", "EMAIL", "DATE"):
            monkeypatch.delenv(f"GIT_{name}_{part}", raising=False)
    for proxy in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(proxy, raising=False)


def new_repo(path: Path) -> Path:
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    git(path, "config", "user.name", "Ada Lovelace")
    git(path, "config", "user.email", "ada@example.org")
    return path


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    bare = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(bare)], check=True)
    return bare


@pytest.fixture
def repo(tmp_path: Path, origin: Path) -> Path:
    """A work tree with one commit, pushed to ``origin`` and tracking it."""
    work = new_repo(tmp_path / "repo")
    commit(work, "README", "hello\n", "Initial commit")
    git(work, "remote", "add", "origin", str(origin))
    git(work, "push", "-q", "-u", "origin", "main")
    return work


def clean_head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD")
