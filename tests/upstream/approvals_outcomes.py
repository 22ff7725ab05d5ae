"""Pytest plugin: write each test's outcome, and the Jupyter servers it started, as JSON lines.

Loaded with ``-p approvals_outcomes`` (this folder on ``PYTHONPATH``) by ``run_upstream.py``, in
both runs of an upstream suite. The file named by ``$APPROVALS_OUTCOMES`` gets (appended) one
line when collection ends (``{"collected": [node ids]}``), one when a test starts
(``{"started": node id}``) and one per test as soon as the test is done, so a run that is killed
still leaves the outcomes of every test it finished, and names the test it was in:

    {"test": node id, "outcome": passed|failed|error|timeout|skipped|xfailed|xpassed,
     "duration": seconds, "crash": short message, "excerpt": end of the failure report,
     "servers": ServerApps that loaded their extensions during the test,
     "servers_with_extension": how many of them had jupyter_approvals loaded}

The server count is how ``run_upstream.py`` checks that the extension was (or was not) there:
``ServerApp.load_server_extensions`` is wrapped to look, afterwards, for the ExtensionApp that
jupyter_server puts in the web app's settings under the extension's name.

A hang that pytest-timeout cannot break (its SIGALRM lands in another thread while the main
thread waits on a lock, as when a blocking kernel client stalls the server's event loop): with
``$APPROVALS_HANG_SECONDS`` set, faulthandler's watchdog writes every thread's stack to
``<outcomes>.hang`` and ends the process once a test has run that long; ``run_upstream.py``
records that test as timed out and starts pytest again on the tests left, which it names in the
file ``$APPROVALS_DESELECT`` (node ids to leave out, one a line).
"""

from __future__ import annotations

import faulthandler
import functools
import json
import os
import re
from collections.abc import Callable
from typing import IO, Any

import pytest

OUTCOMES_ENV = "APPROVALS_OUTCOMES"
HANG_ENV = "APPROVALS_HANG_SECONDS"
DESELECT_ENV = "APPROVALS_DESELECT"
EXTENSION = "jupyter_approvals"
EXCERPT_CHARS = 2000
_ANSI = re.compile(r"\x1b\[[0-9;]*m")

_servers: list[bool] = []
_reports: dict[str, list[pytest.TestReport]] = {}
_state: dict[str, Any] = {}


def _counting(original: Callable[[Any], None]) -> Callable[[Any], None]:
    @functools.wraps(original)
    def load_server_extensions(self: Any) -> None:
        original(self)
        settings = getattr(getattr(self, "web_app", None), "settings", {}) or {}
        _servers.append(settings.get(EXTENSION) is not None)

    return load_server_extensions


def _out() -> IO[str] | None:
    return _state.get("out")


def _write(record: dict[str, Any]) -> None:
    out = _out()
    if out is not None:
        out.write(json.dumps(record) + "\n")
        out.flush()


def pytest_configure(config: pytest.Config) -> None:
    path = os.environ.get(OUTCOMES_ENV)
    if not path or "out" in _state:
        return
    _state["out"] = open(path, "a", encoding="utf-8")  # noqa: SIM115 (closed at unconfigure)
    hang = float(os.environ.get(HANG_ENV) or 0)
    if hang > 0:
        _state["hang"] = hang
        _state["hang_file"] = open(path + ".hang", "a", encoding="utf-8")  # noqa: SIM115
    from jupyter_server.serverapp import ServerApp

    _state["original"] = ServerApp.load_server_extensions
    ServerApp.load_server_extensions = _counting(ServerApp.load_server_extensions)  # type: ignore[method-assign, assignment]


def pytest_unconfigure(config: pytest.Config) -> None:
    if "original" in _state:
        from jupyter_server.serverapp import ServerApp

        ServerApp.load_server_extensions = _state.pop("original")  # type: ignore[method-assign]
    if _state.pop("hang", None):
        faulthandler.cancel_dump_traceback_later()
    for name in ("out", "hang_file"):
        stream = _state.pop(name, None)
        if stream is not None:
            stream.close()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    path = os.environ.get(DESELECT_ENV)
    if not path or not os.path.exists(path):
        return
    with open(path, encoding="utf-8") as listing:
        leave_out = {line.rstrip("\n") for line in listing if line.strip()}
    kept = [item for item in items if item.nodeid not in leave_out]
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[i for i in items if i.nodeid in leave_out])
        items[:] = kept


def pytest_collection_finish(session: pytest.Session) -> None:
    _write({"collected": [item.nodeid for item in session.items]})


def pytest_runtest_logstart(nodeid: str, location: object) -> None:
    _servers.clear()
    _reports[nodeid] = []
    _write({"started": nodeid})
    if "hang" in _state:
        hang_file = _state["hang_file"]
        hang_file.write(f"\n== {nodeid}\n")
        hang_file.flush()
        faulthandler.dump_traceback_later(_state["hang"], file=hang_file, exit=True)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _reports.setdefault(report.nodeid, []).append(report)


def pytest_runtest_logfinish(nodeid: str, location: object) -> None:
    if "hang" in _state:
        faulthandler.cancel_dump_traceback_later()
    reports = _reports.pop(nodeid, [])
    outcome, bad = _outcome(reports)
    record: dict[str, Any] = {
        "test": nodeid,
        "outcome": outcome,
        "duration": round(sum(r.duration for r in reports), 3),
        "servers": len(_servers),
        "servers_with_extension": sum(_servers),
    }
    if bad is not None:
        record["crash"] = _crash(bad)
        record["excerpt"] = _ANSI.sub("", bad.longreprtext)[-EXCERPT_CHARS:]
    _write(record)
    _servers.clear()


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        _write(
            {
                "test": report.nodeid,
                "outcome": "error",
                "duration": 0,
                "servers": 0,
                "servers_with_extension": 0,
                "crash": "collection failed",
                "excerpt": _ANSI.sub("", report.longreprtext)[-EXCERPT_CHARS:],
            }
        )


def _outcome(reports: list[pytest.TestReport]) -> tuple[str, pytest.TestReport | None]:
    """One outcome for a test from its setup, call and teardown reports, and the bad report."""
    by_phase = {r.when: r for r in reports}
    for when in ("setup", "call", "teardown"):
        report = by_phase.get(when)
        if report is None or not report.failed:
            continue
        if _is_timeout(report):
            return "timeout", report
        return ("failed" if when == "call" else "error"), report
    for report in reports:
        if report.skipped:
            return ("xfailed" if hasattr(report, "wasxfail") else "skipped"), None
    call = by_phase.get("call")
    if call is not None and hasattr(call, "wasxfail"):
        return "xpassed", None
    if call is None:
        return "error", None
    return "passed", None


def _is_timeout(report: pytest.TestReport) -> bool:
    text = report.longreprtext
    return "Timeout (>" in text or "from pytest-timeout" in text


def _crash(report: pytest.TestReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        return _ANSI.sub("", f"{crash.path}:{crash.lineno}: {crash.message}")[:500]
    lines = _ANSI.sub("", report.longreprtext).strip().splitlines()
    return lines[-1][:500] if lines else ""
