"""Run an upstream project's own test suite plain and with jupyter_approvals in every server.

For each distribution named (``jupyter_server`` by default; ``jupyter-server-ydoc`` too), this
finds the version installed in the virtualenv of ``--python``, downloads that version's sdist
with pip (once: it is kept under ``<build dir>/sdists``), extracts it, and runs the tests the
sdist ships with that virtualenv's pytest twice:

* plain, as upstream runs them;
* with ``enable_extension.py`` (this folder), which makes every ``ServerApp`` of the suite load
  the ``jupyter_approvals`` server extension.

Both runs load ``approvals_outcomes.py``, which records each test's outcome and how many of
the servers it started had the extension loaded (checked afterwards: none in the plain run,
all in the other), and ``upstream_probe.py`` is copied into the suite as one more test file
that lists the extensions its servers loaded.

A hang becomes a failure: pytest-timeout (``--timeout``, signal method) fails a test that runs
too long and the run goes on; a hang it cannot break (``--hang-timeout``) has its stacks dumped
and pytest stopped, that test recorded as ``timeout``, and pytest started again on the tests
left. A whole run that outlives ``--run-timeout`` is killed (its unfinished tests: not run).

The script then prints the tests that passed plain but not with the extension, re-runs just
those once more in both modes (``--no-confirm`` skips that) and exits with 1 if any of them
still passes plain and fails with the extension; 2 if the runs could not be made or the
extension was not (or not only) where it should be; 0 otherwise.

The virtualenv needs the upstream distribution with its ``test`` extra (which has
pytest-timeout) and jupyter-approvals itself; see the ``upstream`` target of the Makefile. Only
the standard library and pip are used here. Example::

    python tests/upstream/run_upstream.py --python /tmp/upstream-venv/bin/python \\
        --dist jupyter_server --build-dir build/upstream
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
PROBE = HERE / "upstream_probe.py"
PROBE_NAME = "test_zz_approvals_probe.py"
EXPECTED = HERE / "expected_differences.txt"
PASSING = {"passed", "skipped", "xfailed", "xpassed"}
BAD = ("failed", "error", "timeout")
MODES = ("plain", "extension")
#: Warnings that upstream's ``filterwarnings = error`` turns into failures of both runs because
#: of a newer dependency, not of anything under test (tornado 6.6 deprecates the way upstream's
#: handler tests build requests: some 40 tests, kernel websocket ones among them); ignored so
#: that those tests count.
IGNORED_WARNINGS = [
    "The method, uri, and version arguments to HTTPServerRequest are deprecated:DeprecationWarning",
    "The start_line argument to HTTPServerRequest will be required:DeprecationWarning",
]


@dataclass
class Limits:
    """Time limits and pacing of the runs (seconds)."""

    timeout: float = 60
    hang_timeout: float = 90
    run_timeout: float = 3600
    progress: float = 60
    max_restarts: int = 25


@dataclass
class Run:
    """What the pytest runs of a suite in one mode left: outcomes by node id, timings."""

    mode: str
    log: Path
    outcomes: dict[str, dict[str, Any]] = field(default_factory=dict)
    collected: list[str] = field(default_factory=list)
    started: list[str] = field(default_factory=list)
    elapsed: float = 0.0
    returncode: int | None = None
    killed: bool = False
    restarts: int = 0

    def outcome(self, test: str) -> str:
        record = self.outcomes.get(test)
        return record["outcome"] if record else "not run"

    def unfinished(self) -> str | None:
        """The test that was started last and has no outcome (the one a stop interrupted)."""
        if self.started and self.started[-1] not in self.outcomes:
            return self.started[-1]
        return None

    def left(self) -> list[str]:
        return [test for test in self.collected if test not in self.outcomes]

    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        tests = self.collected + [t for t in self.outcomes if t not in set(self.collected)]
        for test in tests:  # collection errors are recorded, never collected
            name = self.outcome(test)
            counts[name] = counts.get(name, 0) + 1
        return counts


def log(message: str) -> None:
    """A progress line, flushed at once (runs are long)."""
    print(f"[upstream {time.strftime('%H:%M:%S')}] {message}", flush=True)


def _minutes(seconds: float) -> str:
    return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"


# -- finding, downloading and extracting the sdist -------------------------------------------


def installed_version(python: str, dist: str) -> str:
    """The version of ``dist`` installed for ``python``."""
    code = "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))"
    result = subprocess.run([python, "-c", code, dist], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"{dist} is not installed for {python}:\n{result.stderr.strip()}")
    return result.stdout.strip()


def enabling_config(python: str) -> Path | None:
    """The venv's own config file that enables jupyter_approvals, if there is one.

    The servers of the runs are built in-process with pytest-jupyter's empty config paths, but
    a test that starts ``jupyter server`` in a subprocess reads the venv's config, where an
    install of jupyter-approvals enables the extension: such servers then have it in both runs.
    """
    code = "import sys; print(sys.prefix)"
    prefix = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    path = Path(prefix.stdout.strip(), "etc/jupyter/jupyter_server_config.d/jupyter_approvals.json")
    return path if path.exists() else None


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def find_sdist(cache: Path, dist: str, version: str) -> Path | None:
    """The cached sdist of ``dist`` ``version`` in ``cache``, if any."""
    wanted = f"{_normalized(dist)}-{version}"
    for path in sorted(cache.glob("*.tar.gz")):
        name, _, found_version = path.name[: -len(".tar.gz")].rpartition("-")
        if f"{_normalized(name)}-{found_version}" == wanted:
            return path
    return None


def download_sdist(python: str, dist: str, version: str, cache: Path) -> Path:
    """The sdist of ``dist`` ``version``: from ``cache``, or downloaded there with pip."""
    cache.mkdir(parents=True, exist_ok=True)
    cached = find_sdist(cache, dist, version)
    if cached is not None:
        log(f"{dist} {version}: sdist cached at {cached}")
        return cached
    log(f"{dist} {version}: downloading its sdist with pip (pip builds its metadata: ~1 min)")
    command = [python, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:"]
    command += ["--quiet", f"{dist}=={version}", "-d", str(cache)]
    subprocess.run(command, check=True)
    found = find_sdist(cache, dist, version)
    if found is None:
        raise SystemExit(f"pip download left no sdist of {dist} {version} in {cache}")
    return found


def extract(sdist: Path, into: Path) -> Path:
    """The sdist's top folder, extracted under ``into`` (again only if it is not there)."""
    top = into / sdist.name[: -len(".tar.gz")]
    if (top / ".extracted").exists():
        return top
    shutil.rmtree(top, ignore_errors=True)
    into.mkdir(parents=True, exist_ok=True)
    with tarfile.open(sdist) as archive:
        if hasattr(tarfile, "data_filter"):
            archive.extractall(into, filter="data")
        else:  # Python < 3.10.12 / 3.11.4: no filters; the archive comes from PyPI via pip
            archive.extractall(into)
    if not top.is_dir():
        raise SystemExit(f"{sdist} has no top folder {top.name}")
    (top / ".extracted").touch()
    return top


def install_probe(tree: Path) -> None:
    """Copy the probe test file into the suite's tests folder."""
    tests = tree / "tests"
    if not tests.is_dir():
        raise SystemExit(f"the sdist {tree.name} ships no tests/ folder")
    shutil.copyfile(PROBE, tests / PROBE_NAME)


def has_pytest_config(tree: Path) -> bool:
    """Whether the sdist carries its own pytest configuration at its top."""
    if (tree / "pytest.ini").is_file():
        return True
    for name, section in (
        ("pyproject.toml", "[tool.pytest.ini_options]"),
        ("tox.ini", "[pytest]"),
        ("setup.cfg", "[tool:pytest]"),
    ):
        path = tree / name
        if path.is_file() and section in path.read_text(encoding="utf-8", errors="replace"):
            return True
    return False


def anchor_rootdir(tree: Path) -> None:
    """Make the sdist's top pytest's root, with its own configuration or none.

    An sdist without a pytest configuration (jupyter_server_ydoc's: its project keeps it at
    the top of a monorepo) would otherwise have pytest look up the folders and take the
    first configuration above it: this repository's, with its ``filterwarnings = error``,
    its markers and node ids relative to here (which the re-run of differing tests then
    could not find). An empty ``pytest.ini`` keeps the suite as upstream runs it.
    """
    if not has_pytest_config(tree):
        (tree / "pytest.ini").write_text(
            "# Written by jupyter-approvals' run_upstream.py: this sdist has no pytest\n"
            "# configuration, and none from the folders above may apply.\n[pytest]\n",
            encoding="utf-8",
        )


# -- running a suite -----------------------------------------------------------------------


def pytest_command(python: str, mode: str, timeout: float, targets: list[str]) -> list[str]:
    """The pytest command line of one run (``targets``: paths, node ids and extra options)."""
    command = [python, "-m", "pytest", "-p", "no:cacheprovider", "-p", "approvals_outcomes"]
    if mode == "extension":
        command += ["-p", "enable_extension"]
    # The signal method fails the test that hangs and goes on; upstream's "thread" ends the run.
    command += ["--timeout", str(timeout), "-o", "timeout_method=signal", "--color=no"]
    for warning in IGNORED_WARNINGS:
        command += ["-W", f"ignore:{warning}"]
    return command + targets


def run_env(python: str, mode: str, outcomes: Path, hang_timeout: float) -> dict[str, str]:
    """The environment of one run: the plugins of this folder importable, where to record."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE), env.get("PYTHONPATH")) if p)
    # As in an activated virtualenv: some tests run its ``jupyter`` command.
    env["PATH"] = os.pathsep.join(p for p in (str(Path(python).parent), env.get("PATH")) if p)
    env["APPROVALS_OUTCOMES"] = str(outcomes)
    env["APPROVALS_HANG_SECONDS"] = str(hang_timeout)
    env["APPROVALS_DESELECT"] = str(outcomes.with_suffix(".done"))
    env["APPROVALS_EXPECT_EXTENSION"] = "1" if mode == "extension" else "0"
    env.pop("JUPYTER_APPROVALS_STATE_DIR", None)  # enable_extension makes one per run
    env.pop("PYTEST_ADDOPTS", None)
    return env


def read_outcomes(path: Path, run: Run) -> None:
    """Fill ``run`` from the JSON lines that approvals_outcomes wrote (a partial file is fine)."""
    if not path.exists():
        return
    run.started = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:  # the last line of a killed run
            continue
        if "collected" in record:  # a restart collects the tests left: keep the first order
            known = set(run.collected)
            run.collected += [test for test in record["collected"] if test not in known]
        elif "started" in record:
            run.started.append(record["started"])
        elif "test" in record:
            run.outcomes[record["test"]] = record


def hang_record(test: str, outcomes: Path, hang_timeout: float) -> dict[str, Any]:
    """The outcome of a test that hung past ``hang_timeout``: its stacks from the dump."""
    dump = outcomes.with_name(outcomes.name + ".hang")
    text = dump.read_text(encoding="utf-8", errors="replace") if dump.exists() else ""
    text = text.rpartition(f"\n== {test}\n")[2]
    # faulthandler lists each thread, most recent call first; the main one runs pytest.
    threads = re.split(r"\n(?=(?:Current thread|Thread) 0x)", text)
    main = next((t for t in threads if "_pytest" in t), text)
    return {
        "test": test,
        "outcome": "timeout",
        "hung": True,
        "duration": hang_timeout,
        "crash": f"hung: no end within {hang_timeout:g} s, not even by pytest-timeout; stopped",
        "excerpt": main.strip()[:4000],
    }


def _append(path: Path, lines: list[str]) -> None:
    with open(path, "a", encoding="utf-8") as out:
        out.writelines(line + "\n" for line in lines)


def _count_lines(path: Path) -> tuple[int, int]:
    done = bad = 0
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith('{"test":'):
                done += 1
                bad += any(f'"outcome": "{o}"' in line for o in BAD)
    return done, bad


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """End the run's process group: pytest and whatever it left (kernels, servers)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def _pytest_once(
    command: list[str], tree: Path, env: dict[str, str], output: Any, deadline: float, say: Any
) -> tuple[int | None, bool]:
    """Run pytest until it exits or ``deadline``; its exit code and whether it was killed."""
    process = subprocess.Popen(
        command,
        cwd=tree,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=output,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        while process.poll() is None:
            time.sleep(1)
            if time.monotonic() > deadline:
                _kill_group(process)
                process.wait()
                return process.returncode, True
            say()
        return process.returncode, False
    finally:
        _kill_group(process)


def run_suite(
    python: str,
    tree: Path,
    label: str,
    mode: str,
    targets: list[str],
    out_dir: Path,
    limits: Limits,
) -> Run:
    """Run pytest in ``tree`` in ``mode`` (again on what is left after a hang); return it."""
    out_dir.mkdir(parents=True, exist_ok=True)
    outcomes = out_dir / f"{label}-{mode}.jsonl"
    for stale in (outcomes, outcomes.with_suffix(".done"), Path(f"{outcomes}.hang")):
        stale.unlink(missing_ok=True)
    run = Run(mode, log=out_dir / f"{label}-{mode}.log")
    command = pytest_command(python, mode, limits.timeout, targets)
    env = run_env(python, mode, outcomes, limits.hang_timeout)
    log(f"{label} | {mode}: started (log {run.log})")
    started = time.monotonic()
    next_line = [started + limits.progress]

    def say() -> None:
        now = time.monotonic()
        if now >= next_line[0]:
            done, bad = _count_lines(outcomes)
            hangs = f", {run.restarts} hangs" if run.restarts else ""
            log(f"{label} | {mode}: {_minutes(now - started)}, tests done {done}, bad {bad}{hangs}")
            next_line[0] = now + limits.progress

    with open(run.log, "w", encoding="utf-8") as output:
        while True:
            deadline = started + limits.run_timeout
            run.returncode, run.killed = _pytest_once(command, tree, env, output, deadline, say)
            read_outcomes(outcomes, run)
            hung = run.unfinished()
            if run.killed:
                log(f"{label} | {mode}: still running after {limits.run_timeout:g} s, killed")
                break
            if hung is None:
                break
            _append(outcomes, [json.dumps(hang_record(hung, outcomes, limits.hang_timeout))])
            read_outcomes(outcomes, run)
            run.restarts += 1
            left = run.left()
            log(f"{label} | {mode}: {hung} hung; pytest stopped, {len(left)} tests left")
            if not left or run.restarts > limits.max_restarts:
                break
            _append(outcomes.with_suffix(".done"), list(run.outcomes))
            output.write(f"\n==== restarted after {hung} hung ====\n")
            output.flush()
    run.elapsed = time.monotonic() - started
    # "passed 3, failed 1", not pytest's "3 passed, 1 failed": CI reads the closing line of
    # the project's own test run, which this is not.
    summary = ", ".join(f"{name} {n}" for name, n in sorted(run.counts().items()))
    log(f"{label} | {mode}: done in {_minutes(run.elapsed)} (exit {run.returncode}): {summary}")
    return run


# -- comparing -----------------------------------------------------------------------------


def expected_differences(dist: str, path: Path = EXPECTED) -> dict[str, str]:
    """Node ids of ``dist``'s tests listed as failing with the extension by design, and why."""
    expected: dict[str, str] = {}
    if not path.exists():
        return expected
    for line in path.read_text(encoding="utf-8").splitlines():
        entry, _, why = line.partition("#")
        fields = entry.split()
        if len(fields) == 2 and _normalized(fields[0]) == _normalized(dist):
            expected[fields[1]] = why.strip()
    return expected


def regressions(plain: Run, extension: Run) -> list[str]:
    """Tests that passed (or were skipped) plain and did not with the extension."""
    tests = plain.collected or sorted(plain.outcomes)
    return [
        test
        for test in tests
        if plain.outcome(test) in PASSING and extension.outcome(test) not in PASSING
    ]


def placement_problems(run: Run) -> list[str]:
    """Tests whose servers had the extension where they should not, or lacked it."""
    problems = []
    for test, record in sorted(run.outcomes.items()):
        servers, with_ext = record.get("servers", 0), record.get("servers_with_extension", 0)
        expected = servers if run.mode == "extension" else 0
        if with_ext != expected:
            problems.append(f"{test}: {with_ext} of {servers} servers had jupyter_approvals")
    return problems


def describe(test: str, run: Run) -> str:
    """One test's outcome in ``run``, with the crash line and the end of its report."""
    record = run.outcomes.get(test, {})
    lines = [f"  {run.outcome(test).upper():8} {test}"]
    if record.get("crash"):
        lines.append(f"           {record['crash']}")
    excerpt = [line for line in record.get("excerpt", "").splitlines() if line.strip()]
    # A hang's excerpt is a stack, most recent call first; a failure's report ends with it.
    shown = excerpt[:12] if record.get("hung") else excerpt[-8:]
    lines += [f"           | {line[:160]}" for line in shown]
    return "\n".join(lines)


def servers_summary(run: Run) -> str:
    records = run.outcomes.values()
    tests = sum(1 for r in records if r.get("servers"))
    servers = sum(r.get("servers", 0) for r in records)
    with_ext = sum(r.get("servers_with_extension", 0) for r in records)
    return f"{tests} tests started {servers} servers, {with_ext} with jupyter_approvals"


# -- one suite, start to end ---------------------------------------------------------------


def check_suite(args: argparse.Namespace, dist: str, build: Path) -> int:
    """Download, run twice, compare and confirm one distribution's suite; its exit status."""
    version = installed_version(args.python, dist)
    label = f"{_normalized(dist)}-{version}"
    sdist = download_sdist(args.python, dist, version, build / "sdists")
    tree = extract(sdist, build / "src")
    install_probe(tree)
    anchor_rootdir(tree)
    enabling = enabling_config(args.python)
    if enabling is not None:
        log(f"note: {enabling} enables jupyter_approvals for servers started in a subprocess")
    out_dir = build / "runs"
    targets = args.tests + args.pytest_args
    runs = {
        mode: run_suite(args.python, tree, label, mode, targets, out_dir, args.limits)
        for mode in MODES
    }
    plain, extension = runs["plain"], runs["extension"]
    for run in runs.values():
        log(f"{label} | {run.mode}: {servers_summary(run)}")
    status = 0
    if not plain.outcomes:
        log(f"{label}: the plain run recorded no test; see {plain.log}")
        return 2
    for run in runs.values():
        problems = placement_problems(run)
        if problems:
            status = 2
            print(f"\n{label} | {run.mode}: the extension was not where expected:")
            print("\n".join(f"  {p}" for p in problems[:50]))
    expected = expected_differences(dist)
    differing = regressions(plain, extension)
    for test in [t for t in differing if t in expected]:
        print(f"  expected difference: {test} ({expected[test]})")
    differing = [test for test in differing if test not in expected]
    for test in expected:
        if plain.outcome(test) in PASSING and extension.outcome(test) in PASSING:
            print(f"  listed as an expected difference but passes in both runs: {test}")
    print(f"\n{label}: tests that pass plain but not with jupyter_approvals: {len(differing)}")
    for test in differing:
        print(describe(test, extension))
    for test in sorted(set(extension.outcomes) - set(plain.outcomes)):
        print(f"  (only in the extension run) {extension.outcome(test)} {test}")
    confirmed = differing
    if differing and args.confirm:
        confirmed = confirm(args, tree, label, out_dir, differing)
    _write_summary(out_dir / f"{label}-summary.json", runs, differing, confirmed)
    if confirmed:
        print(f"\n{label}: {len(confirmed)} {'confirmed ' if args.confirm else ''}differences:")
        print("\n".join(f"  {test}" for test in confirmed))
        return max(status, 1)
    return status


def confirm(
    args: argparse.Namespace, tree: Path, label: str, out_dir: Path, tests: list[str]
) -> list[str]:
    """Of ``tests``, those that again pass plain and fail with the extension, run alone."""
    log(f"{label}: re-running the {len(tests)} differing tests in both modes")
    reruns = {
        mode: run_suite(args.python, tree, f"{label}-confirm", mode, tests, out_dir, args.limits)
        for mode in MODES
    }
    confirmed = regressions(reruns["plain"], reruns["extension"])
    # A test the re-run did not run at all is not ruled out: it stays a difference.
    unrun = {t for t in tests if "not run" in (reruns[m].outcome(t) for m in MODES)}
    for test in sorted(unrun):
        print(
            f"  not re-run, so not ruled out: {test}: plain {reruns['plain'].outcome(test)}, "
            f"extension {reruns['extension'].outcome(test)}"
        )
    confirmed = [test for test in tests if test in confirmed or test in unrun]
    for test in tests:
        if test not in confirmed:
            print(
                f"  not confirmed (flaky?): {test}: plain {reruns['plain'].outcome(test)}, "
                f"extension {reruns['extension'].outcome(test)}"
            )
    return confirmed


def _write_summary(
    path: Path, runs: dict[str, Run], differing: list[str], confirmed: list[str]
) -> None:
    summary = {
        "runs": {
            mode: {
                "elapsed_s": round(run.elapsed, 1),
                "returncode": run.returncode,
                "killed": run.killed,
                "restarts_after_hangs": run.restarts,
                "counts": run.counts(),
            }
            for mode, run in runs.items()
        },
        "differing": {test: runs["extension"].outcomes.get(test) for test in differing},
        "confirmed": confirmed,
    }
    path.write_text(json.dumps(summary, indent=1), encoding="utf-8")
    log(f"summary written to {path}")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Arguments after -- go to both pytest runs (e.g. -- -k kernels).",
    )
    parser.add_argument(
        "--python",
        default=sys.executable,
        help="python of the virtualenv with the upstream package and its test extra",
    )
    parser.add_argument(
        "--dist",
        action="append",
        help="distribution whose suite to run; repeat for several (default: jupyter_server)",
    )
    parser.add_argument(
        "--build-dir",
        type=Path,
        default=REPO / "build" / "upstream",
        help="sdist cache, extracted sources and run logs (default: build/upstream)",
    )
    parser.add_argument(
        "--tests",
        nargs="+",
        default=["tests"],
        help="paths or node ids in the sdist to run (default: tests)",
    )
    defaults = Limits()
    parser.add_argument(
        "--timeout",
        type=float,
        default=defaults.timeout,
        help="seconds per test before pytest-timeout fails it (default: %(default)s)",
    )
    parser.add_argument(
        "--hang-timeout",
        type=float,
        default=defaults.hang_timeout,
        help="seconds per test before its stacks are dumped and pytest is stopped and started "
        "again on the tests left (default: %(default)s)",
    )
    parser.add_argument(
        "--run-timeout",
        type=float,
        default=defaults.run_timeout,
        help="seconds for all the pytest runs of one suite in one mode (default: %(default)s)",
    )
    parser.add_argument(
        "--progress",
        type=float,
        default=defaults.progress,
        help="seconds between progress lines (default: %(default)s)",
    )
    parser.add_argument(
        "--no-confirm",
        dest="confirm",
        action="store_false",
        help="do not re-run the differing tests to rule out flaky ones",
    )
    args, rest = parser.parse_known_args(argv)
    if rest and rest[0] == "--":
        rest = rest[1:]
    args.pytest_args = rest
    args.dist = args.dist or ["jupyter_server"]
    args.python = str(Path(args.python).absolute())  # not resolved: a venv's python is a link
    args.limits = Limits(args.timeout, args.hang_timeout, args.run_timeout, args.progress)
    return args


def _stop(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # so that the running pytest's process group is ended


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _stop)
    build = args.build_dir.resolve()
    started = time.monotonic()
    status = 0
    for dist in args.dist:
        status = max(status, check_suite(args, dist, build))
    log(f"all done in {_minutes(time.monotonic() - started)}; exit {status}")
    return status


if __name__ == "__main__":
    sys.exit(main())
