"""What a command will run, as a card shows it: summary and preview, bounded, with secrets hidden.

What a person reads is the command with the values that look secret hidden (see
:func:`~jupyter_approvals.previews.redact.redact_argv`), the program that runs, the directory,
the standard input (shown like command lines), the timeout and the environment, built as one
structured preview whose text is rendered from it. The fingerprint covers the real,
unredacted command and input.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping

from .redact import (
    is_secret_name,
    redact_argv,
    redact_command_line,
    redact_urls_in_text,
    redacted,
)
from .render_text import preview_of
from .structured import (
    SHARE_ITEM_COST,
    STRUCTURED_BUDGET,
    Preview,
    StructuredPreview,
    fitting,
)
from .text import plural, size_text

__all__ = ["INPUT_PREVIEW_CHARS", "MAX_NAMED_FILES", "SHELL", "shell_preview", "shell_summary"]

#: The shell that runs ``shell=True`` command lines (what :mod:`subprocess` uses on POSIX).
SHELL = "/bin/sh"

#: Files named in the argv whose content the approval covers; more are named, not covered.
MAX_NAMED_FILES = 20

#: Characters of the standard input looked at for the preview; the fingerprint covers all.
INPUT_PREVIEW_CHARS = 64 * 1024


_HIDDEN_NOTE = (
    "Values that look secret (passwords, tokens, credentials in URLs and headers) are hidden "
    "here; the approval covers the real {what}. Single-letter options such as -p or -u are "
    "not recognised as secret."
)


def shell_summary(command: str | list[str], cwd: str, shell: bool, input: str | None = None) -> str:
    """One line for the card and the journal: the command, secrets hidden, and where."""
    shown = redact_command_line(command) if isinstance(command, str) else _argv_line(command)
    line = " ".join(shown.split())
    if len(line) > 80:
        line = line[:79] + "…"
    where = os.path.basename(cwd) or cwd
    stdin = "" if input is None else f"; standard input: {_input_size(input)}"
    run = f"Run through {SHELL}: {line}" if shell else f"Run {line}"
    return f"{run} (in {where}{stdin})"


def _input_size(input: str) -> str:
    return size_text(len(input.encode("utf-8", "replace")))


def _argv_line(argv: list[str]) -> str:
    return shlex.join(redact_argv(argv))


def shell_preview(
    *,
    command: str | list[str],
    cwd: str,
    env: Mapping[str, str | None],
    shell: bool,
    timeout: float | None,
    input: str | None,
    executable: str,
    named: list[str],
    environment_size: int,
) -> Preview:
    """The command exactly as it runs (secrets hidden), where, with what input and environment.

    ``executable`` is the resolved program, ``named`` the files named in the argv and
    ``environment_size`` the number of variables the command receives. The preview is built
    structured from the redacted values; its text is rendered from it.
    """
    structured = StructuredPreview()
    if isinstance(command, str):
        shown_line = redact_command_line(command)
        hidden = shown_line != command
        raw_lines, total = _raw_lines(shown_line, _most_items(structured.budget // 2))
    else:
        shown_argv = redact_argv(command)
        hidden = shown_argv != command
    stdin = _input_state(input)
    if stdin is not None and stdin.count:
        structured.count("standard input lines", stdin.count)
    if env:
        structured.count("environment changes", len(env), "changed")
    if named:
        structured.count("files named", len(named))
    # The exact command first; a huge one may use half of the budget, so the facts after it
    # are never the ones left out (and the text gives each long block its share of room).
    if isinstance(command, str):
        kept = fitting(raw_lines, structured.budget // 2)
        structured.code("\n".join(raw_lines[:kept]), "shell", title=f"runs through {SHELL} -c")
        structured.left_out(total - kept, "code lines")
    else:
        kept = fitting(shown_argv, structured.budget // 2)
        structured.argv(shown_argv[:kept], title="runs (argv)")
        structured.left_out(len(shown_argv) - kept, "arguments")
    if hidden:
        structured.note(_HIDDEN_NOTE.format(what="command"))
    real = os.path.realpath(executable)
    facts = [("path:program", executable)]
    if real != executable:
        facts.append(("path:resolves to", real))
    facts.append(("path:directory", cwd))
    _input_notes(input, stdin, structured)
    facts.append(("standard input", _input_fact(input, stdin)))
    facts.append(("timeout", f"{timeout:g} s" if timeout is not None else "none"))
    facts.append(("environment", _environment_fact(env, environment_size)))
    structured.facts(facts)
    if len(named) > MAX_NAMED_FILES:
        structured.note(
            f"Only the first {MAX_NAMED_FILES} named files are covered by the fingerprint; "
            f"{len(named) - MAX_NAMED_FILES:,} more are not."
        )
    if stdin is not None and stdin.count:
        # At most a quarter of the budget: the environment changes and files come after it.
        raw, total = stdin.lines
        kept = fitting(raw, structured.budget // 4)
        structured.code("\n".join(raw[:kept]), "text", title="standard input")
        structured.left_out(total - kept, "code lines")
    _environment(env, structured)
    if named:
        covered = named[:MAX_NAMED_FILES]
        block = structured.paths(
            f"content of {plural(len(covered), 'named file')} is part of the approval"
        )
        for path in covered:
            if block is not None:
                block.add(path, size_text(os.path.getsize(path)), kind="named files")
    return preview_of(structured)


def _raw_lines(text: str, limit: int) -> tuple[list[str], int]:
    """The first ``limit`` lines of ``text`` split at line feeds only (as ``sh`` does; a final
    one ends the last line), characters left as they are, and the number of lines in all
    (only the lines that can be shown are made)."""
    total = text.count("\n") + 1
    if total > 1 and text.endswith("\n"):
        total -= 1  # a final newline ends the last line; it does not start another
    return text.split("\n", limit)[: min(limit, total)], total


def _most_items(share: int) -> int:
    """The most strings that can fit in ``share`` characters of the structured budget."""
    return share // SHARE_ITEM_COST + 1


class _Input:
    """The standard input as the preview reads it: size, line count, the redacted head."""

    __slots__ = ("count", "head", "hidden", "lines", "shown", "size")

    def __init__(self, input: str) -> None:
        self.size = _input_size(input)
        self.count = input.count("\n") + (not input.endswith("\n")) if input else 0
        self.head = input[:INPUT_PREVIEW_CHARS]
        self.shown = redact_command_line(self.head) if input else ""
        self.hidden = self.shown != self.head
        self.lines = _raw_lines(self.shown, _most_items(STRUCTURED_BUDGET // 4))


def _input_state(input: str | None) -> _Input | None:
    return None if input is None else _Input(input)


def _input_fact(input: str | None, stdin: _Input | None) -> str:
    if input is None or stdin is None:
        return "none"
    if not input:
        return "empty (0 bytes)"
    return f"{stdin.size}, {plural(stdin.count, 'line')}"


def _input_notes(input: str | None, stdin: _Input | None, structured: StructuredPreview) -> None:
    """Say when the standard input shown is redacted, or only its head was looked at."""
    if not input or stdin is None:
        return
    if stdin.hidden:
        structured.note(_HIDDEN_NOTE.format(what="standard input"))
    if len(stdin.head) < len(input):
        structured.note(
            f"Only the first {INPUT_PREVIEW_CHARS:,} characters of the standard input were "
            f"looked at; {len(input) - len(stdin.head):,} more are sent and covered by the "
            "fingerprint."
        )


def _environment_fact(env: Mapping[str, str | None], size: int) -> str:
    bound = f"{plural(size, 'variable')}, bound by the fingerprint"
    if not env:
        return f"the kernel's, unchanged ({bound})"
    return f"the kernel's with {plural(len(env), 'change')} ({bound})"


def _environment(env: Mapping[str, str | None], structured: StructuredPreview) -> None:
    """Each change to the kernel's environment, a secret-looking value redacted."""
    if not env:
        return
    current = os.environ
    changes: list[tuple[str, str]] = []
    for name, value in env.items():
        if value is None:
            changes.append((f"- {name}", "removed" if name in current else "removed (not set now)"))
            continue
        shown = redacted(value) if is_secret_name(name) else redact_urls_in_text(value)
        changes.append((f"{'~' if name in current else '+'} {name}", shown))
    structured.facts(changes, title=f"environment changes ({len(env)})")
