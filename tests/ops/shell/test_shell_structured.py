"""run_command's structured preview: the exact argv or command line first, then the facts."""

from __future__ import annotations

import json
import os
import sys

from jupyter_approvals.core.structured import checked_structured
from jupyter_approvals.ops import run_command
from jupyter_approvals.previews.structured import STRUCTURED_BUDGET

from ..conftest import ask, request_of

PY = sys.executable


def _blocks(document: dict, kind: str) -> list[dict]:
    return [block for block in document["blocks"] if block["type"] == kind]


def _facts(block: dict) -> dict[str, str]:
    return {item["label"]: item["value"] for item in block["items"]}


def test_the_argv_comes_first_then_program_directory_input_and_timeout(session, tmp_path):
    # Given a command with a secret option, input, a timeout and a named script
    script = tmp_path / "job.py"
    script.write_text("print(1)\n")
    argv = [PY, str(script), "--password", "hunter2", "two words"]
    # When it is asked for
    pending = ask(lambda: run_command(argv, cwd=tmp_path, input="abc\n", timeout=5))
    info = request_of(session, pending)
    document = info.structured
    # Then the headline counts the arguments and the input's lines
    # (no count of arguments: the argv itself is the first thing shown)
    assert document["headline"][:1] == [
        {"label": "standard input line", "count": 1, "tone": "neutral"},
    ]
    # And the first block is the exact argv, one item per argument, the secret hidden
    first = document["blocks"][0]
    assert first["type"] == "argv"
    hidden = "[redacted: 7 characters]"
    assert first["items"] == [PY, str(script), "--password", hidden, "two words"]
    # And the facts name the program, the directory (as paths), the input and the timeout
    facts = document["blocks"][1]
    assert facts["items"][0] == {"label": "program", "value": PY, "path": True}
    values = _facts(facts)
    assert values["directory"] == str(tmp_path)
    assert values["standard input"] == "4 bytes, 1 line"
    assert values["timeout"] == "5 s"
    assert values["environment"].startswith("the kernel's, unchanged (")
    # And the input is a text block, the named file a paths block with its size
    [stdin] = [b for b in _blocks(document, "code") if b["title"] == "standard input"]
    assert (stdin["language"], stdin["text"]) == ("text", "abc")
    [paths] = _blocks(document, "paths")
    assert paths["items"] == [{"path": str(script), "detail": "9 bytes"}]
    # And the note about hidden values is there too, and the store's check keeps it all
    assert any("Values that look secret" in note for note in document["notes"])
    assert checked_structured(document, 64_000) == document


def test_a_shell_line_is_a_shell_code_block_and_the_text_is_rendered_from_it(session, tmp_path):
    # Given a two-line command line for /bin/sh with a credential in a URL
    line = "curl https://me:pw-123@example.com/x\necho done"
    # When it is asked for
    info = request_of(session, ask(lambda: run_command(line, shell=True, cwd=tmp_path)))
    document = info.structured
    # Then the command line comes first as shell code, the credential hidden
    assert document["headline"] == []  # the line itself comes first; a count adds nothing
    first = document["blocks"][0]
    assert first["type"] == "code"
    assert first["language"] == "shell"
    assert first["text"] == "curl https://***@example.com/x\necho done"
    assert "pw-123" not in json.dumps(document)
    assert _facts(document["blocks"][1])["program"] == "/bin/sh"
    # And the text preview says the same, block by block
    size = len(os.environ)
    assert info.preview == "\n".join(
        [
            "runs through /bin/sh -c:",
            "  curl https://***@example.com/x",
            "  echo done",
            "program: /bin/sh",
            *_resolved("/bin/sh"),
            f"directory: {tmp_path}",
            "standard input: none",
            "timeout: none",
            f"environment: the kernel's, unchanged ({size} variables, bound by the fingerprint)",
            "Values that look secret (passwords, tokens, credentials in URLs and headers) are "
            "hidden here; the approval covers the real command. Single-letter options such as -p "
            "or -u are not recognised as secret.",
        ]
    )


def _resolved(path: str) -> list[str]:
    real = os.path.realpath(path)
    return [f"resolves to: {real}"] if real != path else []


def test_environment_changes_are_facts_marked_new_changed_or_removed(session, monkeypatch):
    # Given changes that add a secret, change PATH and remove a variable
    monkeypatch.setenv("OLD_ONE", "1")
    env = {"MY_API_TOKEN": "s3cr3t", "OLD_ONE": None, "PATH": os.environ["PATH"]}
    # When it is asked for
    document = request_of(session, ask(lambda: run_command([PY, "-V"], env=env))).structured
    # Then the headline counts them and a facts block lists each, the secret hidden
    assert {"label": "environment changes", "count": 3, "tone": "changed"} in document["headline"]
    [changes] = [b for b in _blocks(document, "facts") if b["title"] == "environment changes (3)"]
    assert _facts(changes) == {
        "+ MY_API_TOKEN": "[redacted: 6 characters]",
        "- OLD_ONE": "removed",
        "~ PATH": os.environ["PATH"],
    }


def test_control_characters_reach_the_check_raw_and_come_out_as_markers(session):
    # Given input that hides text behind a carriage return and an escape
    stdin = "echo safe\rrm -rf /\n\x1b[2Kecho two\n"
    # When it is asked for and the store's check reads the structured form
    info = request_of(session, ask(lambda: run_command(["sh"], input=stdin)))
    [block] = [b for b in _blocks(info.structured, "code") if b["title"] == "standard input"]
    # Then both are shown as markers, not interpreted
    assert block["text"] == "echo safe⟦U+000D⟧rm -rf /\n⟦U+001B⟧[2Kecho two"


def test_a_huge_command_stays_within_the_budget_with_the_cuts_announced(session):
    # Given a command with a huge argv, environment and input
    argv = [PY, "-c", "pass", *[f"arg{i}" for i in range(50_000)]]
    env = {f"VAR_{i}": "v" * 50 for i in range(5_000)}
    # When it is asked for
    info = request_of(session, ask(lambda: run_command(argv, env=env, input="x" * 10_000_000)))
    document = info.structured
    # Then it fits the budget, the argv still comes first and the facts after it are kept
    assert len(json.dumps(document, ensure_ascii=False, separators=(",", ":"))) <= STRUCTURED_BUDGET
    assert checked_structured(document, 64_000) == document
    argv_block = document["blocks"][0]
    assert argv_block["items"][:4] == [PY, "-c", "pass", "arg0"]
    assert _facts(document["blocks"][1])["standard input"] == "10,000,000 bytes (9.5 MiB), 1 line"
    # And what it left out is counted: every argument is either shown or announced
    left_out = {item["kind"]: item["count"] for item in document["left_out"]}
    assert len(argv_block["items"]) + left_out["arguments"] == len(argv)
    assert any("Only the first 65,536 characters" in note for note in document["notes"])
