"""A git run commits the approved message exactly, fills its card, and uses only its own reading."""

from __future__ import annotations

import re
import subprocess

import pytest

from jupyter_approvals.core import errors
from jupyter_approvals.kernel import handoff
from jupyter_approvals.ops.git import (
    GitCommitDiffers,
    git_commit,
    git_push,
)
from jupyter_approvals.previews.text import PREVIEW_BUDGET

from ..conftest import approve, ask, change_after_fingerprint, request_of
from .conftest import clean_head, commit, git, stage

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


def test_the_commit_preview_lists_what_fits_and_counts_every_other_file(session, repo):
    # Given far more staged files than a card can list
    for i in range(2000):
        (repo / f"f{i:05d}.txt").write_text("x\n")
    git(repo, "add", ".")
    # When the commit is asked for
    preview = request_of(session, ask(lambda: git_commit("Many", repo=repo))).preview
    # Then the listing shows hundreds of files and counts the rest, within the budget
    listed = [line for line in preview.splitlines() if line.endswith(".txt  added, +1 -0")]
    [cut] = re.findall(r"… ([\d,]+) more files not shown", preview)
    assert len(listed) > 200
    assert len(listed) + int(cut.replace(",", "")) == 2000
    assert len(preview) <= PREVIEW_BUDGET


# -- a run uses the reading that was fingerprinted, or nothing -----------------------------


def test_a_commit_run_handed_no_reading_refuses_instead_of_reading_again(
    session, repo, monkeypatch
):
    # Given an approved commit
    stage(repo, "data.csv", "a,b\n")
    before = clean_head(repo)
    approve(session, lambda: git_commit("Add data", repo=repo))
    # When what the subject read is lost between the fingerprint and the run
    change_after_fingerprint(session, monkeypatch, handoff.clear)
    # Then the run refuses rather than commit with a reading nobody approved, and nothing ran
    with pytest.raises(errors.ApprovalFingerprintMismatch, match="was not handed to the run"):
        git_commit("Add data", repo=repo)
    assert clean_head(repo) == before
    assert session.store.recent(1)[0].status.value == "failed"


def test_a_push_run_handed_no_reading_refuses_instead_of_reading_again(
    session, repo, origin, monkeypatch
):
    # Given an approved push
    commit(repo, "a.txt", "a\n", "Add a")
    before = git(origin, "rev-parse", "main")
    approve(session, lambda: git_push(repo=repo))
    # When what the subject read is lost between the fingerprint and the run
    change_after_fingerprint(session, monkeypatch, handoff.clear)
    # Then the run refuses and nothing is pushed
    with pytest.raises(errors.ApprovalFingerprintMismatch, match="was not handed to the run"):
        git_push(repo=repo)
    assert git(origin, "rev-parse", "main") == before
