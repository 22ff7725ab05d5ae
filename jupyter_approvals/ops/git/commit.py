"""git.commit: commit exactly what is staged, with exactly the approved message.

A commit is approved for the index's tree (``git write-tree``), HEAD, the branch, the author
and committer identity, and the git setting (program, environment, the config that starts
hooks or signs, the content of the commit hooks that will run; see :mod:`.setting`).
Anything else staged or committed meanwhile, or a changed setting or hook, refuses the run with
APPROVAL_FINGERPRINT_MISMATCH. Hooks run as usual; a commit they changed is named by
GitCommitDiffers.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from ...core.lease import require_lease
from ...kernel.gate import protected
from ...kernel.handoff import recall, remember
from ...previews.render_text import preview_of
from ...previews.secrets import secret_looking_lines, secret_looking_path
from ...previews.structured import Preview, StructuredPreview, fitting
from ...previews.text import PREVIEW_SECONDS, Deadline
from .command import (
    GitCommandFailed,
    GitCommitDiffers,
    current_branch,
    git_argv,
    git_output,
    git_prefix,
    invalid,
    nothing_kept,
    rev_sha,
    run_git,
    toplevel,
)
from .patch import add_patch
from .setting import COMMIT_HOOKS, GitSetting, commit_config, git_setting

#: Seconds ``git commit`` may take, hooks included.
COMMIT_SECONDS = 600.0

# Bytes of `git diff` output read for a preview; the rest is never read into memory.
_STAT_BYTES = 128 * 1024
_PATCH_BYTES = 32 * 1024
_NO_COMMITS = "no commits yet"
# What git_commit runs, before the message (the card shows the same argv).
_COMMIT_ARGS = ("commit", "--quiet", "--cleanup=verbatim", "-m")


@dataclass(frozen=True)
class _CommitState:
    tree: str
    head: str | None
    branch: str | None
    author: str
    committer: str
    setting: GitSetting


def _ident(repo: str, which: str) -> str:
    ident = git_output(
        repo, "var", f"GIT_{which}_IDENT", what=f"git has no {which.lower()} identity configured"
    )
    return ident.rsplit(" ", 2)[0]  # drop the timestamp and zone: they change every second


def _commit_state(repo: str) -> _CommitState:
    setting = git_setting(repo, commit_config, COMMIT_HOOKS)
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
        setting=setting,
    )


def _prepare_commit(message: object, repo: object) -> dict[str, Any]:
    if not isinstance(message, str) or not message.strip():
        raise invalid("git_commit needs a non-empty commit message (str).", argument="message")
    if "\x00" in message:
        raise invalid("A commit message cannot contain NUL characters.", argument="message")
    return {"message": message, "repo": toplevel(repo)}


def _commit_subject(message: str, repo: str) -> dict[str, Any]:
    state = remember(("commit", repo), _commit_state(repo))
    return {
        "repository": repo,
        "tree": state.tree,
        "head": state.head or _NO_COMMITS,
        "branch": state.branch or "detached HEAD",
        "author": state.author,
        "committer": state.committer,
        "git": state.setting.subject(),
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


def _commit_preview(message: str, repo: str) -> Preview:
    state: _CommitState = recall(("commit", repo)) or _commit_state(repo)
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
    structured = StructuredPreview()
    files = int(shortstat.split()[0])
    structured.count("files to commit", files, "changed")
    structured.count("lines to add", _stat_number(shortstat, "insertion"), "added")
    structured.count("lines to remove", _stat_number(shortstat, "deletion"), "removed")
    argv = git_argv(repo, state.setting.run, *_COMMIT_ARGS, message)
    structured.argv(argv, title="runs (argv)", fold=True)
    facts = [
        ("path:repository", repo),
        ("branch", state.branch or "detached HEAD"),
        ("HEAD", state.head or _NO_COMMITS),
        ("author", state.author),
    ]
    if state.committer != state.author:
        facts.append(("committer", state.committer))
    settings = state.setting.card_facts()
    facts.extend(settings[:1])  # the hooks that will run: code that runs, not plumbing
    facts.append(("staged", shortstat))
    # What is committed leads (the files, a secret-looking one flagged, the patch); where
    # and by whom follow it.
    structured.facts(facts, last=True)
    structured.facts(settings[1:], title="git settings", fold=True)
    structured.note("The repository's commit hooks run as usual; they may change the commit.")
    # The message may use a quarter of the budget; the files and the patch need the rest.
    message_lines = message.splitlines()
    kept = fitting(message_lines, structured.budget // 4)
    structured.code("\n".join(message_lines[:kept]), "text", title="message")
    structured.left_out(len(message_lines) - kept, "message lines")
    secret_files = 0
    if not deadline.passed():
        secret_files = _file_paths(
            structured, repo, (*diff, "--raw", "--numstat", "-z", *trees), files
        )
    else:
        structured.left_out(files, "files")
    if not deadline.passed() and not structured.full:
        patch, complete = git_prefix(
            repo, *diff, "-p", *trees, limit=_PATCH_BYTES, timeout=PREVIEW_SECONDS
        )
        lines = patch.splitlines()
        if not complete and lines:
            lines.pop()  # a cut last line
        add_patch(structured, lines)
        added = (line[1:] for line in lines if line.startswith("+") and not line.startswith("+++"))
        secret_lines = secret_looking_lines(added)
        if secret_lines:
            structured.count("secret-looking lines", secret_lines, "removed", first=True)
        if not complete:
            structured.note(f"The patch is longer than the {_PATCH_BYTES // 1024} KiB previewed.")
    else:
        structured.note(
            "The patch is not previewed (time or space used up); the list of files is complete."
        )
    if secret_files:
        structured.count("files that may hold secrets", secret_files, "removed", first=True)
    return preview_of(structured)


_STATUS = {"A": "added", "D": "deleted", "M": "modified", "T": "type changed"}


def _stat_number(shortstat: str, word: str) -> int:
    match = re.search(rf"(\d+) {word}", shortstat)
    return int(match.group(1)) if match else 0


def _file_paths(structured: StructuredPreview, repo: str, args: tuple[str, ...], files: int) -> int:
    """The files of the commit, as many as fit, each with its status (added, modified...),
    its lines added and removed (or "binary"), a change of its mode, and what secret it may
    hold (an .env file, a private key); how many of the files read may hold one."""
    listing, complete = git_prefix(repo, *args, limit=_STAT_BYTES, timeout=PREVIEW_SECONDS)
    fields = listing.split("\0")
    if not complete:
        fields = fields[:-1]  # a cut last path
    details = _file_details(fields)
    secret = 0
    for path in details:
        what = secret_looking_path(path)
        if what is not None and not details[path].startswith("deleted"):
            details[path] += f"; may hold secrets: {what}"
            secret += 1
    block = structured.paths(f"files ({files:,})")
    shown = counted = 0  # counted: refused by the builder, which counts it itself
    if block is not None:
        for path, detail in details.items():
            if structured.full:
                break
            if not block.add(path, detail, "files"):
                counted = 1
                break
            shown += 1
    structured.left_out(files - shown - counted, "files")
    return secret


def _file_details(fields: list[str]) -> dict[str, str]:
    """``git diff --raw --numstat -z`` read as ``{path: "modified, +1 -0, mode 100644 ->
    100755"}``: every raw record (``:modes shas status``, then the path) comes first, then one
    ``added<TAB>removed<TAB>path`` per file (``-`` for binary content)."""
    raw: dict[str, tuple[str, str, str]] = {}
    at = 0
    while at + 1 < len(fields) and fields[at].startswith(":"):
        old_mode, new_mode, _, _, status = fields[at][1:].split(" ", 4)
        raw[fields[at + 1]] = (status, old_mode, new_mode)
        at += 2
    counts: dict[str, str] = {}
    for field in fields[at:]:
        added, _, rest = field.partition("\t")
        removed, _, path = rest.partition("\t")
        counts[path] = "binary" if added == "-" else f"+{added} -{removed}"
    details = {}
    for path, (status, old_mode, new_mode) in raw.items():
        detail = [_STATUS.get(status[:1], status)]
        if path in counts:
            detail.append(counts[path])
        if old_mode != new_mode and old_mode != "000000" and new_mode != "000000":
            detail.append(f"mode {old_mode} -> {new_mode}")
        elif old_mode == "000000" and new_mode != "100644":
            detail.append(f"mode {new_mode}")
        details[path] = ", ".join(detail)
    return details


def _stored_message(message: str) -> str:
    # --cleanup=verbatim keeps the message byte for byte; git only ends it with a newline.
    return message if message.endswith("\n") else message + "\n"


def _check_commit(repo: str, sha: str, message: str, state: _CommitState) -> None:
    """GitCommitDiffers unless commit ``sha`` has the approved tree, parent and message."""
    code, raw, err = run_git(repo, "cat-file", "commit", sha, via=state.setting.run)
    if code != 0:
        raise GitCommandFailed(f"Commit {sha} was made in {repo} but cannot be read: {err}", err)
    # The raw object, unstripped: headers, one empty line, then the message exactly as stored.
    headers, _, body = raw.partition("\n\n")
    fields = [line.partition(" ") for line in headers.split("\n")]
    tree = next((value for name, _, value in fields if name == "tree"), "")
    parents = [value for name, _, value in fields if name == "parent"]
    problems = []
    if tree != state.tree:
        problems.append(f"its tree {tree[:12]} is not the approved tree {state.tree[:12]}")
    if parents != ([state.head] if state.head else []):
        shown = " ".join(parent[:12] for parent in parents) or "none"
        problems.append(f"its parent {shown} is not the approved HEAD")
    if body != _stored_message(message):
        problems.append("its message is not the approved message")
    if problems:
        raise GitCommitDiffers(
            f"Commit {sha} was made in {repo} but differs from what was approved: "
            f"{'; '.join(problems)}. A hook changed it; inspect it with `git show {sha[:12]}` "
            "and undo it with `git reset --soft HEAD~1` if it is not wanted.",
            sha,
        )


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

    Not ``git commit -a``: unstaged changes stay out. The message is kept verbatim (no
    whitespace or comment clean-up). Hooks run as usual; if one changes what is committed,
    GitCommitDiffers names the commit that was made.
    """
    require_lease("git.commit")
    repo = os.fspath(repo)
    state: _CommitState | None = recall(("commit", repo))
    if state is None:
        raise nothing_kept("git.commit", repo)
    code, _, err = run_git(
        repo,
        *_COMMIT_ARGS,
        message,
        timeout=COMMIT_SECONDS,
        via=state.setting.run,
    )
    sha = rev_sha(repo, "HEAD")
    if code != 0 or sha is None or sha == state.head:
        raise GitCommandFailed(f"git commit failed in {repo}: {err or 'no commit was made'}", err)
    _check_commit(repo, sha, message, state)
    return sha
