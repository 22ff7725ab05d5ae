"""git.push on real repositories: exactly the approved commit, checked against the live remote."""

from __future__ import annotations

import functools
import http.server
import re
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import jupyter_approvals as ja
from jupyter_approvals.core import errors
from jupyter_approvals.ops.git import (
    git_commit,
    git_push,
    redact_url,
)
from jupyter_approvals.previews.text import PREVIEW_BUDGET

from ..conftest import approve, ask, decide, request_of
from .conftest import commit, git, many_commits, stage

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
    assert f"  + {second[:7]} | Add b\n  + {first[:7]} | Add a" in info.preview
    assert f"remote: origin\nURL: {origin}\n" in info.preview
    assert f"branch: main at {second}\nto: origin refs/heads/main" in info.preview
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
    assert "remote's tip: none: a new branch on origin" in info.preview
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
    many_commits(repo, 300, subject_chars=100)
    git(repo, "reset", "-q", "--hard")
    # When the push is asked for
    preview = request_of(session, ask(lambda: git_push(repo=repo))).preview
    # Then the count is exact, the list is bounded and the rest is announced
    assert "300 commits to push:" in preview
    assert "Commit 299 " in preview
    listed = [line for line in preview.splitlines() if line.startswith("  + ") and "Commit" in line]
    cut = re.findall(r"… (\d+) more (?:rows|commits) not shown", preview)
    assert len(listed) + sum(map(int, cut)) == 300
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
    assert f"remote: mirror\nURL: {http_origin.replace('http://', 'http://***@')}" in info.preview
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
    monkeypatch.setattr("jupyter_approvals.ops.git.push.REMOTE_SECONDS", 1.0)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        git(repo, "remote", "add", "silent", f"http://127.0.0.1:{silent.getsockname()[1]}/x")
        commit(repo, "a.txt", "a\n", "Add a")
        # When a push to it is asked for
        # Then git is stopped at the limit and the call is refused
        with pytest.raises(errors.ApprovalInvalidArgument, match="did not finish within 1 s"):
            git_push("silent", repo=repo)
