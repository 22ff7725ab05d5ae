"""git.commit on real repositories: exactly the staged tree, once, with a person's approval."""

from __future__ import annotations

import pytest

import jupyter_approvals as ja
from jupyter_approvals.core import errors
from jupyter_approvals.ops.git import (
    GitCommandFailed,
    GitCommitDiffers,
    git_commit,
)
from jupyter_approvals.previews.text import PREVIEW_BUDGET

from ..conftest import approve, ask, decide, request_of
from .conftest import clean_head, commit, git, new_repo, stage

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
    head = clean_head(repo)
    assert f"repository: {repo}\nbranch: main\nHEAD: {head}\n" in preview
    assert "author: Ada Lovelace <ada@example.org>" in preview
    assert "message:\n  Add data\n  \n  With a body" in preview
    assert "staged: 2 files changed, 3 insertions(+)" in preview
    assert "  data.csv  added, +2 -0" in preview
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
    assert "  a.txt  added, +1 -0" in info.preview
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
