"""run_command (shell.run): real commands run only as approved, with an honest preview."""

from __future__ import annotations

import locale
import os
import shlex
import sys
from pathlib import Path

import pytest

import jupyter_approvals as ja
from jupyter_approvals.core import errors
from jupyter_approvals.ops import run_command
from jupyter_approvals.previews.text import PREVIEW_BUDGET

from ..conftest import approve, ask, decide, request_of

PY = sys.executable


def write_script(path: Path, marker: str) -> Path:
    """An executable script that appends ``marker`` to ran.txt next to it."""
    path.write_text(
        f"#!{PY}\nimport pathlib\n"
        f"pathlib.Path(__file__).with_name('ran.txt').open('a').write({marker!r} + '\\n')\n"
        f"print({marker!r})\n"
    )
    path.chmod(0o755)
    return path


def test_approved_command_runs_once_and_returns_its_result(session, tmp_path):
    # Given an approved real command
    argv = [PY, "-c", "import sys; print('hello'); sys.exit(3)"]
    info = approve(session, lambda: run_command(argv))
    assert info.action == "shell.run"
    # When it is called again
    result = run_command(argv)
    # Then it ran: output captured as text, a non-zero exit returned, not raised
    assert result.stdout == "hello\n"
    assert result.returncode == 3
    assert session.store.recent(1)[0].status.value == "executed"
    # And a second run needs a new approval
    ask(lambda: run_command(argv))


def test_preview_shows_argv_program_cwd_input_and_timeout(session, tmp_path):
    # Given a command with input, a timeout and a working directory
    argv = [PY, "-c", "import sys; print(sys.stdin.read().upper())"]
    # When it is asked for
    info = request_of(session, ask(lambda: run_command(argv, cwd=tmp_path, input="abc", timeout=5)))
    # Then the preview shows exactly what runs, where, and with what
    assert f"  {shlex.join(argv)}" in info.preview.splitlines()
    assert f"program: {PY}" in info.preview
    assert f"directory: {tmp_path}" in info.preview
    assert "standard input: 3 bytes, 1 line\n" in info.preview
    assert info.preview.endswith("standard input:\n  abc")
    assert "timeout: 5 s" in info.preview
    assert "environment: the kernel's, unchanged" in info.preview
    assert info.summary.startswith(f"Run {shlex.join(argv)[:20]}")
    # And what was approved runs with the input
    decide(session, ask(lambda: run_command(argv, cwd=tmp_path, input="abc", timeout=5)))
    assert run_command(argv, cwd=tmp_path, input="abc", timeout=5).stdout == "ABC\n"


def test_a_program_found_on_path_is_shown_resolved(session, tmp_path):
    # Given a program named by its bare name, found on the PATH the command gets
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    write_script(bin_dir / "mytool", "tool")
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    # When it is asked for
    info = request_of(session, ask(lambda: run_command(["mytool"], env=env, cwd=tmp_path)))
    # Then the card names the file that will run
    assert f"program: {bin_dir / 'mytool'}" in info.preview
    assert "  ~ PATH: " in info.preview or "  + PATH: " in info.preview


def test_swapped_executable_after_the_preview_refuses_and_nothing_runs(session, tmp_path):
    # Given an approved run of a script by its path
    script = write_script(tmp_path / "tool.py", "original")
    approve(session, lambda: run_command([str(script)], cwd=tmp_path))
    # When the script is rewritten before the run
    write_script(script, "swapped")
    # Then the run refuses with a mismatch and neither version ran
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        run_command([str(script)], cwd=tmp_path)
    assert not (tmp_path / "ran.txt").exists()


def test_swapped_script_named_in_argv_refuses(session, tmp_path):
    # Given an approved `python script.py`, the script named by a relative path
    script = tmp_path / "job.py"
    script.write_text("open('ran.txt', 'w').write('original')\n")
    info = approve(session, lambda: run_command([PY, "job.py"], cwd=tmp_path))
    assert "content of 1 named file is part of the approval:" in info.preview
    assert f"  {script}  " in info.preview
    # When the script changes before the run
    script.write_text("open('ran.txt', 'w').write('swapped')\n")
    # Then the run refuses and nothing ran
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        run_command([PY, "job.py"], cwd=tmp_path)
    assert not (tmp_path / "ran.txt").exists()


def test_rejected_command_does_not_run(session, tmp_path):
    # Given a command a person rejects
    script = write_script(tmp_path / "tool.py", "ran")
    pending = ask(lambda: run_command([str(script)]))
    decide(session, pending, "reject", reason="not now")
    # When it is called again
    with pytest.raises(ja.ApprovalRejected) as rejected:
        run_command([str(script)])
    # Then the reason comes back and nothing ran
    assert rejected.value.details["reason"] == "not now"
    assert not (tmp_path / "ran.txt").exists()


def test_shell_true_is_shown_as_a_shell_command_line(session, tmp_path):
    # Given a command line for /bin/sh
    line = "echo one && echo two | tr a-z A-Z"
    # When it is asked for
    info = request_of(session, ask(lambda: run_command(line, shell=True, cwd=tmp_path)))
    # Then the card says it runs through /bin/sh -c, with the line as given
    lines = info.preview.splitlines()
    assert lines[:2] == ["runs through /bin/sh -c:", f"  {line}"]
    assert "program: /bin/sh" in info.preview
    assert info.summary.startswith("Run through /bin/sh: echo one")
    # And once approved it runs through the shell
    decide(session, ask(lambda: run_command(line, shell=True, cwd=tmp_path)))
    assert run_command(line, shell=True, cwd=tmp_path).stdout == "one\nTWO\n"


def test_env_changes_are_listed_with_secrets_redacted_and_applied(session, tmp_path, monkeypatch):
    # Given environment changes: a secret, a plain value and a removal
    monkeypatch.setenv("REMOVE_ME", "x")
    token = "s3cr3t-value-123"
    env = {"MY_API_TOKEN": token, "GREETING": "hi", "REMOVE_ME": None}
    argv = [PY, "-c", "import os; print(os.environ['MY_API_TOKEN'], 'REMOVE_ME' in os.environ)"]
    # When it is asked for
    info = request_of(session, ask(lambda: run_command(argv, env=env)))
    # Then the preview lists every change, sorted, and never shows the secret
    assert token not in info.preview
    assert token not in info.summary
    assert "environment changes (3):" in info.preview
    assert "  + GREETING: hi" in info.preview
    assert f"  + MY_API_TOKEN: [redacted: {len(token)} characters]" in info.preview
    assert "  - REMOVE_ME: removed" in info.preview
    # And the size of the environment the command receives, bound by the fingerprint
    size = len(os.environ) + 1  # two added, one removed
    assert f"with 3 changes ({size} variables, bound by the fingerprint)" in info.preview
    # And the command receives the real value, without the removed variable
    decide(session, ask(lambda: run_command(argv, env=env)))
    assert run_command(argv, env=env).stdout == f"{token} False\n"


def test_changing_a_secret_value_needs_a_new_approval(session):
    # Given an approved command with a secret in its environment
    argv = [PY, "-c", "pass"]
    approve(session, lambda: run_command(argv, env={"PASSWORD": "one"}))
    # When the same command is called with another secret value
    # Then the approval does not cover it: same command and directory compete, so it refuses
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        run_command(argv, env={"PASSWORD": "two"})


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"command": "ls -l"}, "pass shell=True"),
        ({"command": ["ls"], "shell": True}, "must be one str"),
        ({"command": []}, "argv is empty"),
        ({"command": [PY, 3]}, "command[1] must be a str"),
        ({"command": [b"ls"]}, "command[0] must be a str"),
        ({"command": "  ", "shell": True}, "non-empty"),
        ({"command": [PY], "cwd": "/no/such/dir"}, "not an existing directory"),
        ({"command": [PY], "env": {"A": 1}}, "env['A'] must be a str"),
        ({"command": [PY], "env": ["A=1"]}, "env must be a mapping"),
        ({"command": [PY], "env": {"A=B": "1"}}, "env name"),
        ({"command": [PY], "timeout": 0}, "timeout must be a positive number"),
        ({"command": [PY], "input": b"x"}, "input must be a str"),
        ({"command": [PY], "shell": "yes"}, "shell must be True or False"),
        ({"command": ["no-such-program-xyz"]}, "was not found"),
        ({"command": ["./missing.sh"]}, "not an executable file"),
    ],
)
def test_invalid_arguments_are_refused_before_anything_is_asked(session, kwargs, fragment):
    # Given arguments the command cannot run with
    command = kwargs.pop("command")
    # When it is called
    with pytest.raises(errors.ApprovalInvalidArgument) as invalid:
        run_command(command, **kwargs)
    # Then it is refused with a clear message and nothing was asked
    assert invalid.value.code == "APPROVAL_INVALID_ARGUMENT"
    assert fragment in invalid.value.message
    assert session.store.pending() == []


def test_preview_stays_bounded_for_a_huge_command(session, tmp_path):
    # Given a command with a huge argv, environment and input
    argv = [PY, "-c", "pass", *[f"arg{i}" for i in range(50_000)]]
    env = {f"VAR_{i}": "v" * 50 for i in range(5_000)}
    # When it is asked for
    info = request_of(session, ask(lambda: run_command(argv, env=env, input="x" * 10_000_000)))
    # Then the preview fits its budget and says what it left out
    assert len(info.preview) <= PREVIEW_BUDGET
    assert info.preview.startswith("1 standard input line, 5,000 environment")
    assert "more arguments not shown" in info.preview
    # And the short facts get their room beside the long lists, so they are never the ones cut
    assert "standard input: 10,000,000 bytes (9.5 MiB), 1 line" in info.preview
    assert "timeout: none" in info.preview


def test_writer_refuses_outside_a_lease(session):
    # When the function body is called directly, skipping the gate
    with pytest.raises(errors.ApprovalRequired):
        run_command.fn([PY, "-c", "pass"], cwd=os.getcwd(), env={})


def test_standard_input_is_shown_like_a_command_line(session, tmp_path):
    # Given a shell fed its script on standard input
    script = 'rm -rf "$HOME/important"\n'
    # When it is asked for
    info = request_of(session, ask(lambda: run_command(["sh"], input=script, cwd=tmp_path)))
    # Then the card shows what the shell will read, not just its size
    assert "standard input: 25 bytes, 1 line\n" in info.preview
    assert info.preview.endswith('standard input:\n  rm -rf "$HOME/important"')
    assert info.summary.endswith("; standard input: 25 bytes)")


def test_multi_line_input_is_listed_after_the_facts_with_control_characters_escaped(session):
    # Given an input of several lines, one hiding text behind a carriage return and an escape
    stdin = "echo one\necho safe\rrm -rf /\n\x1b[2Kecho two\n"
    # When it is asked for
    info = request_of(session, ask(lambda: run_command(["sh"], input=stdin)))
    lines = info.preview.splitlines()
    # Then the facts announce it and every line is listed, control characters made visible
    assert "standard input: 41 bytes, 3 lines" in lines
    start = lines.index("standard input:")
    assert lines[start + 1 : start + 4] == [
        "  echo one",
        "  echo safe⟦U+000D⟧rm -rf /",
        "  ⟦U+001B⟧[2Kecho two",
    ]
    assert lines.index("timeout: none") < start


def test_a_huge_input_is_bounded_and_every_cut_announced(session):
    # Given an input of 200,000 lines
    stdin = "".join(f"echo line {i}\n" for i in range(200_000))
    # When it is asked for
    info = request_of(session, ask(lambda: run_command(["sh"], input=stdin)))
    # Then the preview fits, shows the first lines and says what it left out
    assert len(info.preview) <= PREVIEW_BUDGET
    assert "standard input: 3,288,890 bytes (3.1 MiB), 200,000 lines" in info.preview
    assert "  echo line 0\n  echo line 1\n" in info.preview
    assert "more code lines not shown" in info.preview
    assert "more are sent and covered by the fingerprint" in info.preview


def test_secret_values_in_argv_are_hidden_in_card_and_journal_but_passed(session, tmp_path):
    # Given an argv carrying a password option, a token option and a URL with credentials
    secrets = ("hunter2-pw", "tok-9876", "urlpass-1", "bearer-xyz")
    argv = [
        PY,
        "-c",
        "import sys; print(sys.argv[1:])",
        "--password=hunter2-pw",
        "--token",
        "tok-9876",
        "https://me:urlpass-1@example.com/repo.git",
        "Authorization: Bearer bearer-xyz",
    ]
    # When it is asked for
    info = request_of(session, ask(lambda: run_command(argv, cwd=tmp_path)))
    # Then neither the preview, the summary nor the journal holds a secret
    journal = session.journal.path.read_text()
    for secret in secrets:
        assert secret not in info.preview
        assert secret not in info.summary
        assert secret not in journal
    assert "'--password=[redacted: 10 characters]'" in info.preview
    assert "https://***@example.com/repo.git" in info.preview
    assert "Values that look secret" in info.preview
    # And once approved the command receives the real values
    decide(session, ask(lambda: run_command(argv, cwd=tmp_path)))
    output = run_command(argv, cwd=tmp_path).stdout
    assert all(secret in output for secret in secrets)


def test_secret_values_in_a_shell_line_are_hidden(session, tmp_path):
    # Given a shell command line with a credential in a URL, an option and an assignment
    line = "API_TOKEN=t0k3n git clone https://ghp_SECRET123@github.com/o/r.git --password 'p w'"
    # When it is asked for
    info = request_of(session, ask(lambda: run_command(line, shell=True, cwd=tmp_path)))
    # Then none of them is shown
    for secret in ("t0k3n", "ghp_SECRET123", "p w"):
        assert secret not in info.preview + info.summary
    assert "https://***@github.com/o/r.git" in info.preview
    assert "API_TOKEN=[redacted: 5 characters]" in info.preview


def test_a_changed_kernel_environment_after_the_approval_refuses(session, tmp_path, monkeypatch):
    # Given an approved command that inherits the kernel's environment
    script = write_script(tmp_path / "tool.py", "ran")
    approve(session, lambda: run_command([str(script)], cwd=tmp_path))
    # When a variable the command inherits is set in the kernel before the run
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "elsewhere"))
    # Then the run refuses and nothing ran
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        run_command([str(script)], cwd=tmp_path)
    assert not (tmp_path / "ran.txt").exists()


def test_a_removed_inherited_variable_after_the_approval_refuses(session, tmp_path, monkeypatch):
    # Given an approved command, while the kernel has a variable set
    monkeypatch.setenv("SOME_SETTING", "1")
    script = write_script(tmp_path / "tool.py", "ran")
    info = approve(session, lambda: run_command([str(script)], cwd=tmp_path))
    assert f"unchanged ({len(os.environ)} variables, bound by the fingerprint)" in info.preview
    # When the variable is removed before the run
    monkeypatch.delenv("SOME_SETTING")
    # Then the run refuses and nothing ran
    with pytest.raises(errors.ApprovalFingerprintMismatch):
        run_command([str(script)], cwd=tmp_path)
    assert not (tmp_path / "ran.txt").exists()


def test_input_without_a_utf8_form_is_refused_before_anything_is_asked(session):
    # Given standard input holding a lone surrogate, which has no UTF-8 form
    stdin = "abc\udcff def"
    # When the command is called with it
    with pytest.raises(errors.ApprovalInvalidArgument) as invalid:
        run_command([PY, "-c", "pass"], input=stdin)
    # Then it is refused, naming the character, and nothing was asked
    assert invalid.value.code == "APPROVAL_INVALID_ARGUMENT"
    assert "'\\udcff' at index 3" in invalid.value.message
    assert invalid.value.details == {"argument": "input", "index": 3}
    assert session.store.pending() == []


def test_non_ascii_input_is_sent_as_exactly_its_utf8_bytes(session, monkeypatch):
    # Given a command that reports the bytes it read and writes non-ASCII and invalid UTF-8
    stdin = "héllo ✓ 𝄞\n"
    argv = [
        PY,
        "-c",
        "import sys; data = sys.stdin.buffer.read(); "
        "sys.stdout.buffer.write(data.hex().encode() + ' ü✓'.encode() + b'\\xff')",
    ]
    approve(session, lambda: run_command(argv, input=stdin))
    # When it runs in a kernel whose locale encoding is not UTF-8
    monkeypatch.setattr(locale, "getencoding", lambda: "latin-1")
    done = run_command(argv, input=stdin)
    # Then the command read the UTF-8 encoding of the approved text, byte for byte
    sent, _, rest = done.stdout.partition(" ")
    assert bytes.fromhex(sent) == stdin.encode("utf-8")
    # And its output is decoded as UTF-8, the undecodable byte replaced
    assert rest == "ü✓\ufffd"
    assert isinstance(done.stderr, str)
