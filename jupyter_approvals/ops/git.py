"""Git: commit exactly what is staged (git.commit), push exactly the approved commit (git.push).

Both run the ``git`` program (no Python git library: the user's own git, config, hooks and
credential helpers behave as they do in a terminal). Every call runs ``git --no-pager -C <repo>``
with ``LC_ALL=C``, ``GIT_TERMINAL_PROMPT=0``, no stdin, its own session (no terminal to prompt
on) and a timeout, so nothing waits for a password. Variables that would point git at another
repository than the one named (``GIT_DIR``, ``GIT_WORK_TREE``, ``GIT_INDEX_FILE``...) are
dropped: the approved repository is the one that changes.

A commit is approved for the index's tree, HEAD and branch; a push for the local commit, the
remote's tip as ``git ls-remote`` sees it now, and the push URL. Anything else staged,
committed or pushed meanwhile refuses the run with APPROVAL_FINGERPRINT_MISMATCH.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Any

from ..core.lease import require_lease
from ..kernel.gate import protected
from ._preview import PREVIEW_BUDGET, PREVIEW_SECONDS, Deadline, PreviewText, plural
from .git_command import (
    REMOTE_SECONDS,
    GitCommandFailed,
    GitCommitDiffers,
    current_branch,
    git_output,
    git_prefix,
    invalid,
    redact_url,
    rev_sha,
    run_git,
    toplevel,
)

#: Seconds ``git commit`` may take, hooks included.
COMMIT_SECONDS = 600.0
#: Seconds ``git push`` may take, pre-push hook and transfer included.
PUSH_SECONDS = 600.0
#: Commits a push preview lists by name; the rest are counted.
MAX_COMMITS_LISTED = 200

# Bytes of `git diff` output read for a preview; the rest is never read into memory.
_STAT_BYTES = 128 * 1024
_PATCH_BYTES = 32 * 1024
_NO_COMMITS = "no commits yet"
# PreviewText counts kept lines only; its closing "… more not shown" lines and notes need room.
_BUDGET = PREVIEW_BUDGET - 400

# Subject -> preview and run of the same call: the gate computes the subject right before it
# renders the preview (a new request) or runs the body (an approval matched), in one thread.
# Handing that state over makes the preview show, and the run use, exactly what was
# fingerprinted, not a second reading of a repository that may have moved in between.
_seen = threading.local()


def _remember(key: tuple[str, ...], state: Any) -> Any:
    _seen.value = (key, state)
    return state


def _recall(key: tuple[str, ...]) -> Any:
    held = getattr(_seen, "value", None)
    _seen.value = None
    return held[1] if held is not None and held[0] == key else None


# -- git.commit ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _CommitState:
    tree: str
    head: str | None
    branch: str | None
    author: str
    committer: str


def _ident(repo: str, which: str) -> str:
    ident = git_output(
        repo, "var", f"GIT_{which}_IDENT", what=f"git has no {which.lower()} identity configured"
    )
    return ident.rsplit(" ", 2)[0]  # drop the timestamp and zone: they change every second


def _commit_state(repo: str) -> _CommitState:
    git_dir = git_output(repo, "rev-parse", "--absolute-git-dir", what="cannot read the repository")
    for marker, doing in (("MERGE_HEAD", "merge"), ("CHERRY_PICK_HEAD", "cherry-pick"),
                          ("REVERT_HEAD", "revert")):  # fmt: skip
        if os.path.exists(os.path.join(git_dir, marker)):
            raise invalid(
                f"A {doing} is in progress in {repo}; git_commit commits plain staged changes "
                f"only. Finish or abort the {doing} with git first.",
                repository=repo,
            )
    tree = git_output(repo, "write-tree", what="the index cannot be written as a tree (conflicts?)")
    return _CommitState(
        tree=tree,
        head=rev_sha(repo, "HEAD"),
        branch=current_branch(repo),
        author=_ident(repo, "AUTHOR"),
        committer=_ident(repo, "COMMITTER"),
    )


def _prepare_commit(message: object, repo: object) -> dict[str, Any]:
    if not isinstance(message, str) or not message.strip():
        raise invalid("git_commit needs a non-empty commit message (str).", argument="message")
    if "\x00" in message:
        raise invalid("A commit message cannot contain NUL characters.", argument="message")
    return {"message": message, "repo": toplevel(repo)}


def _commit_subject(message: str, repo: str) -> dict[str, Any]:
    state = _remember(("commit", repo), _commit_state(repo))
    return {
        "repository": repo,
        "tree": state.tree,
        "head": state.head or _NO_COMMITS,
        "branch": state.branch or "detached HEAD",
        "author": state.author,
        "committer": state.committer,
    }


def _commit_summary(message: str, repo: str) -> str:
    subject = message.strip().splitlines()[0]
    return f"git commit in {os.path.basename(repo)}: {subject[:120]}"


def _base_tree(repo: str, head: str | None) -> str:
    if head is not None:
        return head
    return git_output(
        repo, "hash-object", "-t", "tree", "/dev/null", what="cannot name the empty tree"
    )


def _commit_preview(message: str, repo: str) -> str:
    state: _CommitState = _recall(("commit", repo)) or _commit_state(repo)
    deadline = Deadline()
    base = _base_tree(repo, state.head)
    diff = ("diff", "--no-ext-diff", "--no-color", "--no-renames")
    trees = (base, state.tree)
    shortstat = git_output(
        repo, *diff, "--shortstat", *trees, what="cannot diff the staged changes"
    )
    if not shortstat:
        # Refused here, not in prepare: at run time a changed index must report a mismatch.
        raise invalid(f"Nothing is staged in {repo}; stage changes with git add first.")
    text = PreviewText(_BUDGET)
    text.add(f"Commit the staged changes of {repo}")
    head = state.head[:12] if state.head else _NO_COMMITS
    text.add(f"  branch: {state.branch or 'detached HEAD'}   HEAD: {head}")
    text.add(f"  author: {state.author}")
    if state.committer != state.author:
        text.add(f"  committer: {state.committer}")
    text.add("  hooks: the repository's commit hooks run as usual (they may change the commit)")
    text.add(f"staged: {shortstat}")
    text.add("message:")
    # The message may use a quarter of the budget; the files and the patch need the rest.
    shown = PreviewText(PREVIEW_BUDGET // 4)
    shown.extend((f"  {line}" for line in message.splitlines()), kind="message lines")
    text.extend(shown.render().splitlines(), kind="message lines")
    stat, complete = git_prefix(
        repo, *diff, "--stat=200,160", *trees, limit=_STAT_BYTES, timeout=PREVIEW_SECONDS
    )
    stat_lines = stat.splitlines()[:-1]  # the summary line, or a line cut short
    text.add("files:")
    text.extend((f"  {line}" for line in stat_lines), kind="files")
    files = int(shortstat.split()[0])
    text.left_out(files - len(stat_lines), "files")
    if not deadline.passed() and not text.full:
        patch, complete = git_prefix(
            repo, *diff, "-p", *trees, limit=_PATCH_BYTES, timeout=PREVIEW_SECONDS
        )
        text.add("patch (start):")
        lines = patch.splitlines()
        if not complete and lines:
            lines.pop()  # a cut last line
        text.extend((f"  {line}" for line in lines), kind="patch lines")
        if not complete:
            text.note(f"The patch is longer than the {_PATCH_BYTES // 1024} KiB previewed.")
    else:
        text.note("The patch is not previewed (time or space used up); the stat above is complete.")
    return text.render()


@protected(
    "git.commit",
    summary=_commit_summary,
    preview=_commit_preview,
    subject=_commit_subject,
    target="repo",
    prepare=_prepare_commit,
)
def git_commit(message: str, *, repo: str | os.PathLike[str] = ".") -> str:
    """Commit exactly what is staged in ``repo`` with ``message``; return the new commit's sha.

    Not ``git commit -a``: unstaged changes stay out. Hooks run as usual; if one changes what
    is committed, GitCommitDiffers names the commit that was made.
    """
    require_lease("git.commit")
    repo = os.fspath(repo)
    state: _CommitState = _recall(("commit", repo)) or _commit_state(repo)
    code, _, err = run_git(
        repo, "commit", "--quiet", "--cleanup=verbatim", "-m", message, timeout=COMMIT_SECONDS
    )
    sha = rev_sha(repo, "HEAD")
    if code != 0 or sha is None or sha == state.head:
        raise GitCommandFailed(f"git commit failed in {repo}: {err or 'no commit was made'}", err)
    made = git_output(
        repo, "log", "-1", "--format=%T%n%P%n%B", sha, what="cannot read the new commit"
    )
    tree, parents, *body = made.split("\n")
    problems = []
    if tree != state.tree:
        problems.append(f"its tree {tree[:12]} is not the approved tree {state.tree[:12]}")
    if parents != (state.head or ""):
        problems.append(f"its parent {parents[:12] or 'none'} is not the approved HEAD")
    if "\n".join(body).rstrip("\n") != message.rstrip("\n"):
        problems.append("its message is not the approved message")
    if problems:
        raise GitCommitDiffers(
            f"Commit {sha} was made in {repo} but differs from what was approved: "
            f"{'; '.join(problems)}. A hook changed it; inspect it with `git show {sha[:12]}` "
            "and undo it with `git reset --soft HEAD~1` if it is not wanted.",
            sha,
        )
    return sha


# -- git.push ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _PushState:
    url: str
    local: str
    remote_tip: str | None


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
    )
    tips = [line.split("\t")[0] for line in listing.splitlines() if line.endswith(f"\t{ref}")]
    return _PushState(url=url, local=local, remote_tip=tips[0] if tips else None)


def _push_subject(remote: str, branch: str, repo: str) -> dict[str, Any]:
    state = _remember(("push", repo, remote, branch), _push_state(remote, branch, repo))
    return {
        "repository": repo,
        "remote": remote,
        "url": state.url,
        "branch": branch,
        "local": state.local,
        "remote_tip": state.remote_tip or "absent",
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


def _push_preview(remote: str, branch: str, repo: str) -> str:
    state: _PushState = _recall(("push", repo, remote, branch)) or _push_state(remote, branch, repo)
    revisions = _push_range(repo, remote, branch, state)
    count = int(
        git_output(repo, "rev-list", "--count", *revisions, what="cannot count the commits")
    )
    text = PreviewText(_BUDGET)
    text.add(f"Push {branch} from {repo}")
    text.add(f"  remote: {remote}  {redact_url(state.url)}")
    text.add(f"  {branch} ({state.local[:12]}) -> {remote} refs/heads/{branch}")
    if state.remote_tip is None:
        text.add(f"  new branch on the remote: {remote} has no branch {branch} now")
        text.add(f"{plural(count, 'commit')} not on any known branch of {remote}:")
    else:
        text.add(f"  fast-forward from {state.remote_tip[:12]} (the remote's tip as read now)")
        text.add(f"{plural(count, 'commit')} to push:")
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
    text.extend((f"  {line}" for line in lines), kind="commits")
    text.left_out(count - len(lines), "commits")
    text.note("The pre-push hook, if any, runs as usual. Tags are not pushed.")
    return text.render()


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
    state: _PushState = _recall(key) or _push_state(remote, branch, repo)
    refspec = f"{state.local}:refs/heads/{branch}"
    code, _, err = run_git(
        repo,
        "push",
        "--porcelain",
        "--no-follow-tags",
        "--recurse-submodules=no",
        "--",
        remote,
        refspec,
        timeout=PUSH_SECONDS,
    )
    if code != 0:
        raise GitCommandFailed(f"git push to {remote} failed: {err or 'see git'}", err)
    return state.local
