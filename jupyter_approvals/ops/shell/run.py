"""``run_command`` (action ``shell.run``): run one command after a person approved it.

The approval covers the command (argv, or a ``/bin/sh`` command line with ``shell=True``),
the working directory, the environment changes, the standard input and the timeout, plus the
current content of the program that will run (the resolved executable, or ``/bin/sh``) and of
the files named in the argv, and a sha256 of the complete environment the command receives
(the kernel's ``os.environ`` with the changes applied). A program or a named script swapped,
or any environment variable set, changed or removed in the kernel after the preview, refuses
with APPROVAL_FINGERPRINT_MISMATCH and nothing runs.

The card hides values that look secret (see :mod:`.preview`); the fingerprint covers
the real command, input and environment.

The command runs with :func:`subprocess.run`; it returns the ``CompletedProcess`` with its
output as text. The standard input is sent as exactly the UTF-8 encoding of the approved str
(a str that has none, say with a lone surrogate, is refused before anything is asked); the
output is decoded as UTF-8, undecodable bytes replaced. A non-zero exit status is returned,
not raised: check ``returncode``. A timeout kills the command and raises
``subprocess.TimeoutExpired`` (the run is journaled as failed).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from typing import Any

from ...core.fingerprint import FileContent
from ...core.lease import require_lease
from ...kernel.gate import protected
from ...previews.command import MAX_NAMED_FILES, SHELL, shell_preview, shell_summary
from ...previews.structured import Preview
from ..common.environment import child_environment, environment_digest
from ..common.refusal import invalid_argument

__all__ = ["SHELL", "run_command"]


_invalid = invalid_argument


def _prepare(
    command: Any,
    cwd: Any = None,
    env: Any = None,
    shell: Any = False,
    timeout: Any = None,
    input: Any = None,
) -> dict[str, Any]:
    """Check the arguments and normalize them: argv list, absolute cwd, sorted env changes."""
    if not isinstance(shell, bool):
        raise _invalid(
            f"shell must be True or False, got {type(shell).__name__}.", argument="shell"
        )
    command = _check_command(command, shell)
    cwd = _check_cwd(cwd)
    changes = _check_env(env)
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            raise _invalid(
                f"timeout must be a positive number of seconds or None, got {timeout!r}.",
                argument="timeout",
            )
        timeout = float(timeout)
    if input is not None and not isinstance(input, str):
        raise _invalid(
            f"input must be a str (the command's standard input, as text) or None, got "
            f"{type(input).__name__}.",
            argument="input",
        )
    if input is not None:
        _input_bytes(input)  # refused here, before anything is asked, if it has no UTF-8 form
    arguments = {
        "command": command,
        "cwd": cwd,
        "env": changes,
        "shell": shell,
        "timeout": timeout,
        "input": input,
    }
    _executable(**arguments)  # a command that cannot be found is refused before anything is asked
    return arguments


def _input_bytes(text: str) -> bytes:
    """The bytes the command reads: ``text`` in UTF-8, strictly (nothing replaced)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        # Replacing it (say with '?') would send the command something nobody approved.
        raise _invalid(
            f"input cannot be sent as UTF-8: the character {text[exc.start]!r} at index "
            f"{exc.start} ({exc.reason}) has no UTF-8 form. Pass text without lone surrogates.",
            argument="input",
            index=exc.start,
        ) from None


def _check_command(command: Any, shell: bool) -> str | list[str]:
    if isinstance(command, str):
        if not shell:
            raise _invalid(
                "command is a str but shell=False. Pass the argv as a list, e.g. "
                "['ls', '-l'], or pass shell=True to run the str through /bin/sh -c "
                "(the card then shows it as a shell command line).",
                argument="command",
            )
        if not command.strip() or "\x00" in command:
            raise _invalid("command must be a non-empty command line without NUL characters.")
        return command
    if shell:
        raise _invalid(
            "with shell=True, command must be one str (the command line for /bin/sh -c), "
            f"got {type(command).__name__}.",
            argument="command",
        )
    if not isinstance(command, Sequence) or isinstance(command, (bytes, bytearray)):
        raise _invalid(
            f"command must be a list of str (argv), got {type(command).__name__}.",
            argument="command",
        )
    argv: list[str] = []
    for index, item in enumerate(command):
        if isinstance(item, os.PathLike):
            item = os.fspath(item)
        if not isinstance(item, str):
            raise _invalid(
                f"command[{index}] must be a str, got {type(item).__name__}.",
                argument="command",
                index=index,
            )
        if "\x00" in item:
            raise _invalid(f"command[{index}] contains a NUL character.", index=index)
        argv.append(item)
    if not argv or not argv[0]:
        raise _invalid("command must name a program to run (argv is empty).", argument="command")
    return argv


def _check_cwd(cwd: Any) -> str:
    if cwd is None:
        return os.getcwd()
    if not isinstance(cwd, (str, os.PathLike)):
        raise _invalid(f"cwd must be a path, got {type(cwd).__name__}.", argument="cwd")
    path = os.path.abspath(os.fspath(cwd))
    if not os.path.isdir(path):
        raise _invalid(f"cwd {path!r} is not an existing directory.", argument="cwd", cwd=path)
    return path


def _check_env(env: Any) -> dict[str, str | None]:
    if env is None:
        return {}
    if not isinstance(env, Mapping):
        raise _invalid(
            "env must be a mapping of variable name to str (or None to remove the variable), "
            f"got {type(env).__name__}.",
            argument="env",
        )
    changes: dict[str, str | None] = {}
    for name, value in env.items():
        if not isinstance(name, str) or not name or "=" in name or "\x00" in name:
            raise _invalid(
                f"env name {name!r} must be a non-empty str without '=' or NUL.", argument="env"
            )
        if value is not None and (not isinstance(value, str) or "\x00" in value):
            raise _invalid(
                f"env[{name!r}] must be a str without NUL, or None to remove the variable; got "
                f"{type(value).__name__}.",
                argument="env",
                name=name,
            )
        changes[name] = value
    return dict(sorted(changes.items()))


def _executable(
    command: str | list[str], cwd: str, env: Mapping[str, str | None], shell: bool, **_: Any
) -> str:
    """The absolute path of the program that will run, resolved as the child resolves it."""
    if shell:
        return SHELL
    program = command[0]
    if os.sep in program or (os.altsep and os.altsep in program):
        # subprocess resolves a relative program path against cwd.
        path = os.path.normpath(os.path.join(cwd, program))
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise _invalid(
                f"{program!r} is not an executable file (looked at {path!r}).",
                argument="command",
                executable=path,
            )
        return path
    search = child_environment(env).get("PATH", os.defpath)
    found = shutil.which(program, path=search)
    if found is None:
        raise _invalid(
            f"program {program!r} was not found on the command's PATH.",
            argument="command",
            program=program,
            path=search,
        )
    return os.path.abspath(found)


def _named_files(command: str | list[str], cwd: str, shell: bool) -> list[str]:
    """Existing regular files named by argv items after the program (scripts, inputs)."""
    if shell or isinstance(command, str):
        return []  # a shell command line cannot be parsed reliably; nothing is guessed
    found: list[str] = []
    for item in command[1:]:
        path = os.path.normpath(os.path.join(cwd, item)) if item else ""
        if path and os.path.isfile(path) and path not in found:
            found.append(path)
    return found


def _subject(
    command: str | list[str],
    cwd: str,
    env: Mapping[str, str | None],
    shell: bool,
    **_: Any,
) -> dict[str, Any]:
    """What runs, what it reads by name and the whole environment it receives.

    A swapped program or script, or any change of the kernel's environment (PATH,
    LD_PRELOAD, PYTHONPATH, ...) after the preview, changes this.
    """
    executable = _executable(command, cwd, env, shell)
    named = _named_files(command, cwd, shell)[:MAX_NAMED_FILES]
    return {
        "executable": executable,
        "content": FileContent(executable),
        "named_files": [{"path": path, "content": FileContent(path)} for path in named],
        "environment_sha256": environment_digest(child_environment(env)),
    }


def _target(command: str | list[str], cwd: str, **_: Any) -> dict[str, Any]:
    # The same command in the same directory competes: an approval for it is spent, without
    # running, by a call that changes its environment, input or timeout. Another command is
    # another request.
    return {"command": command, "cwd": cwd}


def _summary(command: str | list[str], cwd: str, shell: bool, input: str | None, **_: Any) -> str:
    return shell_summary(command, cwd, shell, input)


def _preview(
    command: str | list[str],
    cwd: str,
    env: Mapping[str, str | None],
    shell: bool,
    timeout: float | None,
    input: str | None,
) -> Preview:
    """The command exactly as it runs (secrets hidden), where, with which input and changes."""
    return shell_preview(
        command=command,
        cwd=cwd,
        env=env,
        shell=shell,
        timeout=timeout,
        input=input,
        executable=_executable(command, cwd, env, shell),
        named=_named_files(command, cwd, shell),
        environment_size=len(child_environment(env)),
    )


@protected(
    "shell.run",
    summary=_summary,
    preview=_preview,
    subject=_subject,
    target=_target,
    prepare=_prepare,
)
def run_command(
    command: str | Sequence[str | os.PathLike[str]],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str | None] | None = None,
    shell: bool = False,
    timeout: float | None = None,
    input: str | None = None,  # the name subprocess.run uses
) -> subprocess.CompletedProcess[str]:
    """Run a command once a person approved it; return its ``CompletedProcess``.

    ``command`` is the argv as a list (``["git", "status"]``), or with ``shell=True`` one
    command line for ``/bin/sh -c``. ``cwd`` defaults to the current directory; ``env`` holds
    changes to the kernel's environment (``None`` removes a variable). ``input`` is sent as
    UTF-8; output is captured and decoded as UTF-8 (undecodable bytes replaced). A non-zero
    exit status is returned, not raised.
    """
    require_lease("shell.run")
    # _prepare made cwd absolute, env a dict and command a list (or a str with shell=True).
    cwd_text = os.fspath(cwd) if cwd is not None else os.getcwd()
    changes = dict(env or {})
    argv = command if isinstance(command, str) else [os.fspath(item) for item in command]
    # Run exactly the program that was fingerprinted, not whatever PATH finds a moment later.
    executable = _executable(argv, cwd_text, changes, shell)
    # Bytes, not text=True: the locale's encoding could differ from the approved UTF-8 and
    # would silently replace what it cannot encode.
    done = subprocess.run(
        argv,
        cwd=cwd_text,
        env=child_environment(changes),
        shell=shell,
        executable=executable,
        timeout=timeout,
        input=None if input is None else _input_bytes(input),
        capture_output=True,
        check=False,
    )
    return subprocess.CompletedProcess(
        done.args, done.returncode, _text(done.stdout), _text(done.stderr)
    )


def _text(output: bytes) -> str:
    return output.decode("utf-8", "replace")
