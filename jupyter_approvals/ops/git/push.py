"""git.push: push exactly the approved commit to the branch of the same name, never forcing.

A push is approved for the local commit, the remote's tip as ``git ls-remote`` sees it now,
the push URL (after ``insteadOf`` rewriting), and the git setting (program, environment,
the config that redirects or transports the push: ``remote.<remote>.*``,
``url.*.insteadOf``/``pushInsteadOf``, ``credential.*``, ``http.*``...; and the content of
the pre-push hook if one will run; see :mod:`.setting`). Anything else committed or pushed
meanwhile, or a changed setting or hook, refuses the run with APPROVAL_FINGERPRINT_MISMATCH.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ...core.lease import require_lease
from ...kernel.gate import protected
from ...kernel.handoff import recall, remember
from ...previews.render_text import preview_of
from ...previews.structured import Preview, StructuredPreview
from ...previews.text import plural
from .command import (
    REMOTE_SECONDS,
    GitCommandFailed,
    current_branch,
    git_argv,
    git_output,
    invalid,
    nothing_kept,
    redact_url,
    rev_sha,
    run_git,
    toplevel,
)
from .setting import PUSH_HOOKS, GitSetting, git_setting, push_config

#: Seconds ``git push`` may take, pre-push hook and transfer included.
PUSH_SECONDS = 600.0
#: Commits a push preview lists by name; the rest are counted.
MAX_COMMITS_LISTED = 200


@dataclass(frozen=True)
class _PushState:
    url: str
    local: str
    remote_tip: str | None
    setting: GitSetting


def _push_url(repo: str, remote: str) -> str:
    urls = git_output(
        repo, "remote", "get-url", "--push", "--all", remote, what=f"no remote named {remote!r}"
    ).splitlines()
    if len(urls) != 1:
        raise invalid(f"Remote {remote!r} pushes to {len(urls)} URLs; git_push supports one.")
    return urls[0]


def _prepare_push(remote: object, branch: object, repo: object) -> dict[str, Any]:
    top = toplevel(repo)
    if not isinstance(remote, str) or not remote or remote.startswith("-"):
        raise invalid(f"remote must be the name of a configured remote, got {remote!r}.")
    if branch is None:
        branch = current_branch(top)
        if branch is None:
            raise invalid(
                f"HEAD is detached in {top}: name the branch to push, or check one out.",
                argument="branch",
            )
    if not isinstance(branch, str) or not branch:
        raise invalid(f"branch must be a branch name, got {branch!r}.", argument="branch")
    if branch.startswith("+") or ":" in branch or "*" in branch or branch.startswith("-"):
        raise invalid(
            f"branch {branch!r} is a refspec; git_push pushes one branch to the branch of the "
            "same name and never forces or deletes ('+', ':' and '*' are refused).",
            argument="branch",
        )
    if branch.startswith("refs/") or run_git(top, "check-ref-format", f"refs/heads/{branch}")[0]:
        raise invalid(f"{branch!r} is not a valid branch name (without refs/heads/).")
    if rev_sha(top, f"refs/heads/{branch}") is None:
        raise invalid(f"There is no local branch {branch!r} in {top}.", argument="branch")
    _push_url(top, remote)  # the remote must exist
    return {"remote": remote, "branch": branch, "repo": top}


def _push_state(remote: str, branch: str, repo: str) -> _PushState:
    setting = git_setting(repo, push_config(remote), PUSH_HOOKS)
    url = _push_url(repo, remote)
    local = rev_sha(repo, f"refs/heads/{branch}")
    if local is None:
        raise invalid(f"There is no local branch {branch!r} in {repo}.", argument="branch")
    ref = f"refs/heads/{branch}"
    # The remote itself, not the remote-tracking ref, which may be stale.
    listing = git_output(
        repo,
        "ls-remote",
        "--",
        url,
        ref,
        timeout=REMOTE_SECONDS,
        what=f"cannot read {ref} from remote {remote!r} ({redact_url(url)})",
        via=setting.run,
    )
    tips = [line.split("\t")[0] for line in listing.splitlines() if line.endswith(f"\t{ref}")]
    return _PushState(url=url, local=local, remote_tip=tips[0] if tips else None, setting=setting)


def _push_subject(remote: str, branch: str, repo: str) -> dict[str, Any]:
    state = remember(("push", repo, remote, branch), _push_state(remote, branch, repo))
    return {
        "repository": repo,
        "remote": remote,
        "url": state.url,
        "branch": branch,
        "local": state.local,
        "remote_tip": state.remote_tip or "absent",
        "git": state.setting.subject(),
    }


def _push_summary(remote: str, branch: str, repo: str) -> str:
    return f"git push {branch} to {remote} from {os.path.basename(repo)}"


def _push_range(repo: str, remote: str, branch: str, state: _PushState) -> list[str]:
    """Revision arguments selecting the commits the push sends; invalid if it cannot be pushed."""
    # Refused here, not in prepare: at run time a changed remote must report a mismatch.
    tip = state.remote_tip
    if tip is None:
        return [state.local, "--not", f"--remotes={remote}"]
    where = f"{remote}'s {branch}"
    if tip == state.local:
        raise invalid(f"Nothing to push: {where} is already at {tip[:12]}.")
    if run_git(repo, "cat-file", "-e", f"{tip}^{{commit}}")[0] != 0:
        raise invalid(
            f"{where} is at {tip[:12]}, which this repository does not have: fetch it "
            f"(git fetch {remote}) and integrate it first. git_push never forces."
        )
    if run_git(repo, "merge-base", "--is-ancestor", tip, state.local)[0] != 0:
        raise invalid(
            f"Not a fast-forward: {where} ({tip[:12]}) has commits that {branch} "
            f"({state.local[:12]}) does not. Integrate them first; git_push never forces."
        )
    return [f"{tip}..{state.local}"]


def _push_preview(remote: str, branch: str, repo: str) -> Preview:
    state: _PushState = recall(("push", repo, remote, branch)) or _push_state(remote, branch, repo)
    revisions = _push_range(repo, remote, branch, state)
    count = int(
        git_output(repo, "rev-list", "--count", *revisions, what="cannot count the commits")
    )
    structured = StructuredPreview()
    structured.count("commits to push", count, "added")
    argv = git_argv(repo, state.setting.run, *_push_args(remote, state.local, branch))
    structured.argv(argv, title="runs (argv)", fold=True)
    facts = [
        ("path:repository", repo),
        ("remote", remote),
        ("URL", redact_url(state.url)),
        ("branch", f"{branch} at {state.local}"),
        ("to", f"{remote} refs/heads/{branch}"),
    ]
    if state.remote_tip is None:
        facts.append(("remote's tip", f"none: a new branch on {remote}"))
        title = f"{plural(count, 'commit')} not on any known branch of {remote}"
    else:
        facts.append(("remote's tip", f"{state.remote_tip} (fast-forward from it, as read now)"))
        title = f"{plural(count, 'commit')} to push"
    settings = state.setting.card_facts()
    structured.facts([*facts, *settings[:1]], last=True)  # the commits lead
    structured.facts(settings[1:], title="git settings", fold=True)
    log = git_output(
        repo,
        "log",
        "--no-color",
        "--no-decorate",
        "--format=%h %s",
        f"--max-count={MAX_COMMITS_LISTED}",
        *revisions,
        what="cannot list the commits",
    )
    lines = log.splitlines()
    table = structured.table([("commit", None, True), ("subject", None, False)], title=title)
    shown = counted = 0  # counted: refused by the builder, which counts it itself
    if table is not None:
        for line in lines:
            if structured.full:
                break
            sha, _, subject = line.partition(" ")
            if not table.row("added", [sha, subject], kind="commits"):
                counted = 1
                break
            shown += 1
    structured.left_out(count - shown - counted, "commits")
    structured.note("The pre-push hook, if any, runs as usual. Tags are not pushed.")
    return preview_of(structured)


def _push_args(remote: str, local: str, branch: str) -> tuple[str, ...]:
    """What git_push runs: exactly the approved commit to the same-named branch, no tags."""
    return (
        "push",
        "--porcelain",
        "--no-follow-tags",
        "--recurse-submodules=no",
        "--",
        remote,
        f"{local}:refs/heads/{branch}",
    )


@protected(
    "git.push",
    summary=_push_summary,
    preview=_push_preview,
    subject=_push_subject,
    target=lambda remote, branch, repo: [repo, remote, branch],
    prepare=_prepare_push,
)
def git_push(
    remote: str = "origin", branch: str | None = None, *, repo: str | os.PathLike[str] = "."
) -> str:
    """Push ``branch`` (default: the current one) to the same-named branch on ``remote``.

    Pushes exactly the approved commit (``<sha>:refs/heads/<branch>``), never forces, never
    pushes tags; returns the pushed sha.
    """
    require_lease("git.push")
    repo = os.fspath(repo)
    assert branch is not None  # prepare fills in the current branch
    key = ("push", repo, remote, branch)
    state: _PushState | None = recall(key)
    if state is None:
        raise nothing_kept("git.push", repo)
    code, _, err = run_git(
        repo,
        *_push_args(remote, state.local, branch),
        timeout=PUSH_SECONDS,
        via=state.setting.run,
    )
    if code != 0:
        raise GitCommandFailed(f"git push to {remote} failed: {err or 'see git'}", err)
    return state.local
