"""The structured previews of git.commit and git.push: the exact argv first, then what it does."""

from __future__ import annotations

import json
import shutil

from jupyter_approvals.core.structured import checked_structured
from jupyter_approvals.ops.git import git_commit, git_push
from jupyter_approvals.ops.git.patch import changed_words
from jupyter_approvals.previews.structured import STRUCTURED_BUDGET

from ..conftest import ask, request_of
from .conftest import clean_head, commit, git, many_commits, stage

GIT = shutil.which("git")
PREFIX = ["--no-pager", "-C"]
OPTIONS = ["-c", "color.ui=never", "-c", "core.quotePath=off"]


def _blocks(document: dict, kind: str) -> list[dict]:
    return [block for block in document["blocks"] if block["type"] == kind]


def _facts(document: dict) -> dict[str, str]:
    [block] = [b for b in _blocks(document, "facts") if b["title"] is None]
    return {item["label"]: item["value"] for item in block["items"]}


def _compact(document: dict) -> int:
    return len(json.dumps(document, ensure_ascii=False, separators=(",", ":")))


def test_the_commit_shows_its_argv_counts_files_and_hunks_with_changed_words(session, repo):
    # Given a staged edit of one word, a staged new file and a staged deletion
    commit(repo, "notes.txt", "one\ntwo three four\nfive\n", "Add notes")
    stage(repo, "notes.txt", "one\ntwo THREE four\nfive\nsix\n")
    stage(repo, "data.csv", "a,b\n")
    git(repo, "rm", "-q", "README")
    # When the commit is asked for
    info = request_of(session, ask(lambda: git_commit("Edit notes\n\nBody", repo=repo)))
    document = info.structured
    # Then the headline counts files and lines
    assert document["headline"] == [
        {"label": "files to commit", "count": 3, "tone": "changed"},
        {"label": "lines to add", "count": 3, "tone": "added"},
        {"label": "lines to remove", "count": 2, "tone": "removed"},
    ]
    # And the first block is the exact argv git_commit runs
    first = document["blocks"][0]
    assert first["type"] == "argv"
    assert first["items"] == [
        GIT,
        *PREFIX,
        str(repo),
        *OPTIONS,
        "commit",
        "--quiet",
        "--cleanup=verbatim",
        "-m",
        "Edit notes\n\nBody",
    ]
    # And the facts name the repository, branch, HEAD and author
    facts = _facts(document)
    assert facts["repository"] == str(repo)
    assert facts["branch"] == "main"
    assert facts["HEAD"] == clean_head(repo)
    assert facts["author"] == "Ada Lovelace <ada@example.org>"
    assert facts["hooks that will run"] == "none"
    # And the message is a block, the files are paths with their status and line counts
    [message] = [b for b in _blocks(document, "code") if b["title"] == "message"]
    assert message["text"] == "Edit notes\n\nBody"
    [files] = _blocks(document, "paths")
    assert files["items"] == [
        {"path": "README", "detail": "deleted, +0 -1"},
        {"path": "data.csv", "detail": "added, +1 -0"},
        {"path": "notes.txt", "detail": "modified, +2 -1"},
    ]
    # And the edit is a hunk with line numbers, the changed word marked on both sides
    [notes] = [b for b in _blocks(document, "diff") if b["new_path"] == "notes.txt"]
    [hunk] = notes["hunks"]
    assert (hunk["old_start"], hunk["new_start"]) == (1, 1)
    ops = [(line["op"], line["old"], line["new"]) for line in hunk["lines"]]
    assert ops == [
        ("context", 1, 1),
        ("removed", 2, None),
        ("added", None, 2),
        ("context", 3, 3),
        ("added", None, 4),
    ]
    assert hunk["lines"][1]["parts"] == [
        {"text": "two ", "changed": False},
        {"text": "three", "changed": True},
        {"text": " four", "changed": False},
    ]
    assert [p for p in hunk["lines"][2]["parts"] if p["changed"]] == [
        {"text": "THREE", "changed": True}
    ]
    [deleted] = [b for b in _blocks(document, "diff") if b["old_path"] == "README"]
    assert deleted["new_path"] == "/dev/null"
    assert deleted["hunks"][0]["lines"] == [
        {"op": "removed", "old": 1, "new": None, "parts": [{"text": "hello", "changed": False}]}
    ]
    assert checked_structured(document, 64_000) == document


def test_the_commit_text_preview_is_rendered_from_its_blocks(session, repo):
    # Given one staged new file
    stage(repo, "a.txt", "x\n")
    head = clean_head(repo)
    # When the commit is asked for
    preview = request_of(session, ask(lambda: git_commit("Add a", repo=repo))).preview
    # Then the text says, block by block, the counts, the plumbing (the argv, git's settings:
    # folded away in the card), the message, the files and the patch, then where and by
    # whom, then the note on hooks
    lines = preview.splitlines()
    assert lines[:2] == ["1 file to commit, 1 line to add, 0 lines to remove", "runs (argv):"]
    settings = lines.index("git settings:")
    assert lines[settings + 1].startswith("  hooks directory: ")
    start = lines.index("message:")
    assert settings < start
    assert lines[start:] == [
        "message:",
        "  Add a",
        "files (1):",
        "  a.txt  added, +1 -0",
        "--- /dev/null",
        "+++ a.txt",
        "@@ -0,0 +1 @@",
        "+x",
        f"repository: {repo}",
        "branch: main",
        f"HEAD: {head}",
        "author: Ada Lovelace <ada@example.org>",
        "hooks that will run: none",
        "staged: 1 file changed, 1 insertion(+)",
        "The repository's commit hooks run as usual; they may change the commit.",
    ]


def test_a_huge_commit_stays_within_the_budget_with_the_cuts_announced(session, repo):
    # Given 3,000 staged files and a message of 3,000 lines
    for i in range(3_000):
        (repo / f"f{i}.txt").write_text("".join(f"line {j}\n" for j in range(20)))
    git(repo, "add", "-A")
    message = "\n".join(f"message line {i}" for i in range(3_000))
    # When the commit is asked for
    document = request_of(session, ask(lambda: git_commit(message, repo=repo))).structured
    # Then it fits the budget, the counts are exact and the cuts are counted
    assert _compact(document) <= STRUCTURED_BUDGET
    assert checked_structured(document, 64_000) == document
    assert document["headline"][0] == {
        "label": "files to commit",
        "count": 3_000,
        "tone": "changed",
    }
    left_out = {item["kind"]: item["count"] for item in document["left_out"]}
    [files] = _blocks(document, "paths")
    assert len(files["items"]) + left_out["files"] == 3_000
    [shown] = [b for b in _blocks(document, "code") if b["title"] == "message"]
    assert len(shown["text"].split("\n")) + left_out["message lines"] == 3_000


def test_the_push_shows_its_argv_the_remote_and_the_commits_as_a_table(session, repo, origin):
    # Given two local commits not on origin
    first = commit(repo, "a.txt", "a\n", "Add a")
    second = commit(repo, "b.txt", "b\n", "Add b")
    tip = git(origin, "rev-parse", "main")
    # When the push is asked for
    document = request_of(session, ask(lambda: git_push(repo=repo))).structured
    # Then the headline counts the commits, and the argv git_push runs comes first
    assert document["headline"] == [{"label": "commits to push", "count": 2, "tone": "added"}]
    assert document["blocks"][0]["items"] == [
        GIT,
        *PREFIX,
        str(repo),
        *OPTIONS,
        "push",
        "--porcelain",
        "--no-follow-tags",
        "--recurse-submodules=no",
        "--",
        "origin",
        f"{second}:refs/heads/main",
    ]
    # And the facts name the remote, its URL, the branch and the remote's tip
    facts = _facts(document)
    assert facts["remote"] == "origin"
    assert facts["URL"] == str(origin)
    assert facts["branch"] == f"main at {second}"
    assert facts["remote's tip"].startswith(tip)
    # And the commits are a table, newest first
    [table] = _blocks(document, "table")
    assert [c["name"] for c in table["columns"]] == ["commit", "subject"]
    rows = [[cell["text"] for cell in row["cells"]] for row in table["rows"]]
    assert rows == [[second[:7], "Add b"], [first[:7], "Add a"]]
    assert document["notes"] == ["The pre-push hook, if any, runs as usual. Tags are not pushed."]
    assert checked_structured(document, 64_000) == document


def test_many_commits_to_push_stay_within_the_budget_and_are_counted(session, repo):
    # Given 300 local commits with long subjects (made with fast-import, quickly)
    many_commits(repo, 300, subject_chars=300)
    # When the push is asked for
    document = request_of(session, ask(lambda: git_push(repo=repo))).structured
    # Then it fits, and every commit is either a row or counted
    assert _compact(document) <= STRUCTURED_BUDGET
    assert checked_structured(document, 64_000) == document
    [table] = _blocks(document, "table")
    left_out = {item["kind"]: item["count"] for item in document["left_out"]}
    assert 0 < len(table["rows"]) < 200
    assert len(table["rows"]) + left_out["commits"] == 300


def test_changed_words_marks_only_the_words_that_differ():
    # When two lines differing in one word are compared
    old, new = changed_words("total = price * 2", "total = price * 3")
    # Then only that word is marked on each side
    assert old == [("total = price * ", False), ("2", True)]
    assert new == [("total = price * ", False), ("3", True)]


def test_a_staged_secret_file_is_flagged_before_anything_else(session, repo):
    # Given a new notebook and an .env file holding an AWS key, both staged
    stage(repo, "analysis.py", "print('hello')\n")
    stage(
        repo,
        ".env",
        "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n"
        "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
    )
    # When the commit is asked for
    info = request_of(session, ask(lambda: git_commit("Add the analysis", repo=repo)))
    document = info.structured
    # Then the first counts say a file may hold secrets and two added lines look like them
    assert document["headline"][:2] == [
        {"label": "file that may hold secrets", "count": 1, "tone": "removed"},
        {"label": "secret-looking lines", "count": 2, "tone": "removed"},
    ]
    # And the file list says which file and why; the other file is not flagged
    [files] = [block for block in document["blocks"] if block["type"] == "paths"]
    details = {item["path"]: item["detail"] for item in files["items"]}
    assert details[".env"] == "added, +2 -0; may hold secrets: an environment file"
    assert "secret" not in details["analysis.py"]
    # And the text form says it first too
    assert info.preview.startswith(
        "1 file that may hold secrets, 2 secret-looking lines, 2 files to commit"
    )


def test_a_commit_without_secrets_has_no_secret_count(session, repo):
    # Given an ordinary staged file whose text mentions a key only in words
    stage(repo, "notes.md", "The API key lives in the vault.\ntoken: see the wiki\n")
    # When the commit is asked for
    document = request_of(session, ask(lambda: git_commit("Notes", repo=repo))).structured
    # Then no count speaks of secrets
    assert not [c for c in document["headline"] if "secret" in c["label"]]
