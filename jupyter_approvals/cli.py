"""``jupyter approvals doctor``, ``jupyter approvals journal`` and ``jupyter approvals agent``.

The console script ``jupyter-approvals`` is found by ``jupyter``'s subcommand lookup, so both
spellings work. Exit codes: 0 success (for ``doctor``: every check passed), 1 a doctor check
failed, 2 a usage error, a bad path or an unreadable journal.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ._version import __version__
from .cli_agent import AgentCliError, add_agent_commands
from .core.errors import ApprovalJournalInsideProject, ApprovalJournalUnusable
from .core.journal.disagreements import DISAGREEMENT_WINDOW, find_disagreements
from .core.journal.line import EVENTS
from .core.journal.reader import read_entries
from .core.policy import MAX_APPROVAL_TTL_S
from .core.project import journal_location, project_root_for
from .core.visible import make_visible

PROG = "jupyter approvals"
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class CliError(Exception):
    """A stable, printable error; exits with :data:`EXIT_USAGE`."""


# -- helpers -------------------------------------------------------------------------------


def _clean(value: object) -> str:
    """Text safe for a terminal: control and format characters (escapes, bidi) marked, on one
    line, as on a card (core.visible)."""
    return make_visible("" if value is None else str(value), keep_lines=False)


def _clip(text: str, width: int) -> str:
    if width <= 0:
        return ""
    if len(text) <= width:
        return text
    return text[: width - 3] + "..." if width > 3 else text[:width]


def _number(value: object) -> str:
    """600.0 as "600", 0.5 as "0.5"; anything else as text."""
    if isinstance(value, float):
        return f"{value:g}"
    return _clean(value)


def _project_dir(path: str | None, command: str) -> Path:
    directory = Path(path) if path is not None else Path.cwd()
    if not directory.exists():
        raise CliError(f"{PROG} {command}: no such directory: {directory}")
    return directory


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


# -- doctor --------------------------------------------------------------------------------


def format_doctor(report_dict: dict[str, Any]) -> str:
    """The human form of a doctor report (``DoctorReport.to_dict()``)."""
    checks = report_dict["checks"]
    width = max((len(c["name"]) for c in checks), default=0)
    lines = [f"jupyter-approvals {report_dict['version']}, project {report_dict['project_root']}"]
    for check in checks:
        mark = "OK  " if check["ok"] else "FAIL"
        lines.append(f"{mark}  {check['name'].ljust(width)}  {_clean(check['detail'])}")
        if not check["ok"] and check.get("fix"):
            lines.append(f"{'':4}  {'':{width}}  fix: {_clean(check['fix'])}")
    lines.append("")
    lines.append("Limits in force:")
    for name, value in report_dict["limits"].items():
        lines.append(f"  {name:<20} {_number(value)}")
    ignored = report_dict["ignored_settings"]
    lines.append(f"Ignored settings: {len(ignored) or 'none'}")
    for item in ignored:
        requested = "" if item["requested"] is None else f" = {_number(item['requested'])}"
        source = f" ({_clean(item['source'])})" if item["source"] else ""
        applied = "" if item["applied"] is None else f"; in force: {_number(item['applied'])}"
        lines.append(f"  {_clean(item['name'])}{requested}{source}")
        lines.append(f"    {_clean(item['why'])}{applied}")
    lines.append("Not guaranteed:")
    lines.extend(f"  - {text}" for text in report_dict["not_guaranteed"])
    failed = sum(not c["ok"] for c in checks)
    lines.append("")
    lines.append(
        "All checks passed." if not failed else f"{failed} of {len(checks)} checks failed."
    )
    return "\n".join(lines)


def _doctor(args: argparse.Namespace) -> int:
    from .doctor import run_checks

    report = run_checks(_project_dir(args.path, "doctor"))
    data = report.to_dict()
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        print(format_doctor(data))
    return EXIT_OK if report.ok else EXIT_FAILED


# -- journal -------------------------------------------------------------------------------

_COLUMNS: tuple[tuple[str, int], ...] = (
    # (header, widest cell); SUMMARY takes what is left of the terminal.
    ("TIME (UTC)", 19),
    ("EVENT", 13),
    ("ACTION", 24),
    ("REQUEST", 16),
    ("CHANNEL", 8),
    ("LATENCY", 9),
    ("REASON/CODE", 32),
)


def _cells(entry: dict[str, Any]) -> list[str]:
    when = str(entry.get("time", "")).replace("T", " ")[:19]
    latency = entry.get("latency_ms")
    # A person's reason says more than the code it came with (a rejection carries both).
    why = entry.get("reason") or entry.get("code") or entry.get("error") or ""
    return [
        _clean(value)
        for value in (
            when,
            entry.get("event", ""),
            entry.get("action", ""),
            entry.get("request_id", ""),
            entry.get("channel", ""),
            f"{latency} ms" if isinstance(latency, (int, float)) else "",
            why,
            entry.get("summary", ""),
        )
    ]


def format_journal_table(entries: list[dict[str, Any]], width: int) -> list[str]:
    """One header line and one line per entry, each at most ``width`` characters."""
    rows = [_cells(entry) for entry in entries]
    widths = [
        min(cap, max([len(header)] + [len(row[i]) for row in rows]))
        for i, (header, cap) in enumerate(_COLUMNS)
    ]
    lines = []
    for row in [[h for h, _ in _COLUMNS] + ["SUMMARY"], *rows]:
        fixed = "  ".join(_clip(cell, w).ljust(w) for cell, w in zip(row, widths, strict=False))
        lines.append(_clip(f"{fixed}  {row[-1]}".rstrip(), width))
    return lines


def _journal(args: argparse.Namespace) -> int:
    root = project_root_for(_project_dir(args.path, "journal"))
    location = journal_location(root)
    if isinstance(location.problem, ApprovalJournalUnusable):
        raise CliError(f"{PROG} journal: {location.problem.message}")
    path = location.path
    if isinstance(location.problem, ApprovalJournalInsideProject):
        print(f"warning: the journal {path} is inside the project {root}", file=sys.stderr)
    exists = os.path.lexists(path)
    try:
        page = read_entries(
            path, limit=args.limit, offset=args.offset, event=args.outcome, action=args.action
        )
    except OSError as exc:
        raise CliError(
            f"{PROG} journal: cannot read the journal {path}: {exc.strerror or exc}"
        ) from None
    disagreements = find_disagreements(
        read_entries(path, limit=DISAGREEMENT_WINDOW).entries if exists else [],
        time.time(),
        MAX_APPROVAL_TTL_S,
    )
    if args.json:
        data = {
            "entries": page.entries,
            "disagreements": [d.as_dict() for d in disagreements],
            "has_more": page.has_more,
            "offset": args.offset,
            "limit": args.limit,
            "journal": str(path),
            "project_root": str(root),
            "corrupt_lines": page.corrupt_lines,
            "exists": exists,
        }
        print(json.dumps(data, indent=2))
        return EXIT_OK
    if not exists:
        print(f"no journal yet for {root} (it would be {path})")
        return EXIT_OK
    width = shutil.get_terminal_size().columns
    print(_clip(f"Journal of {root}: {path} (newest first)", width))
    if page.entries:
        print("\n".join(format_journal_table(page.entries, width)))
    else:
        print("no matching entries")
    if page.has_more:
        print(f"more entries: --offset {args.offset + len(page.entries)}")
    if page.corrupt_lines:
        print(f"{page.corrupt_lines} unreadable lines skipped")
    if disagreements:
        print(f"Where the kernels' record and the server's disagree ({len(disagreements)}):")
        for found in disagreements:
            print(_clip(f"  {found.request_id}  {found.kind}: {found.detail}", width))
    return EXIT_OK


# -- entry point ---------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``jupyter approvals``."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Check a jupyter-approvals installation, read the journal, manage agents.",
    )
    parser.add_argument("--version", action="version", version=f"jupyter-approvals {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    doctor = commands.add_parser("doctor", help="check the installation; exit 1 if a check fails")
    doctor.add_argument("--json", action="store_true", help="print the report as JSON")
    doctor.add_argument("--path", metavar="DIR", help="project directory (default: here)")
    doctor.set_defaults(run=_doctor)

    journal = commands.add_parser("journal", help="show the project's decision journal")
    journal.add_argument("--path", metavar="DIR", help="a directory in the project (default: here)")
    journal.add_argument("--json", action="store_true", help="print the page as JSON")
    journal.add_argument(
        "--outcome", metavar="EVENT", choices=sorted(EVENTS), help="only this event"
    )
    journal.add_argument("--action", help="only this action")
    journal.add_argument("--limit", type=_positive, default=50, help="entries (default 50)")
    journal.add_argument("--offset", type=_non_negative, default=0, help="skip this many")
    journal.set_defaults(run=_journal)
    add_agent_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``jupyter approvals``; returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors
        if exc.code is None:
            return EXIT_OK
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    with contextlib.suppress(AttributeError, ValueError):
        sys.stdout.reconfigure(errors="replace")  # type: ignore[union-attr]
    try:
        code: int = args.run(args)
    except (CliError, AgentCliError) as exc:
        print(exc, file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # The reader (``| head``) went away: nothing more to say, and nothing to flush.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    return code
