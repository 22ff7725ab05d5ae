"""Fixtures for the browser tests: a real JupyterLab server and a headless Debian Chromium.

Select these tests with ``pytest -m e2e`` (or leave them out with ``-m "not e2e"``). They need
the ``playwright`` package (its driver ships in the wheel; no ``playwright install``), the
system ``chromium`` (Debian package ``chromium``; ``CHROMIUM_PATH`` overrides the path) and
``jupyterlab``. A missing piece is an error, never a skip: ``make test`` installs them all.
"""

from __future__ import annotations

import importlib.util
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

    from tests.e2e.lab import LabServer

_REPORT = pytest.StashKey[pytest.TestReport]()


def _missing(what: str) -> None:
    pytest.fail(
        f"the browser tests need it, but {what} (run `make test`, which installs it)", pytrace=False
    )


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    # Keep the call's report, so the page fixture can screenshot a failing test.
    report = yield
    if report.when == "call":
        item.stash[_REPORT] = report
    return report


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Headless Debian Chromium with a fresh profile, driven by Playwright."""
    if importlib.util.find_spec("playwright") is None:
        _missing("the playwright package is not installed (pip install playwright)")
    from playwright.sync_api import sync_playwright

    from tests.e2e.lab import CHROMIUM_ARGS, chromium_path

    executable = chromium_path()
    if executable is None or not Path(executable).exists():
        _missing("no chromium executable (apt-get install chromium, or set CHROMIUM_PATH)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """A real ``jupyter lab`` on a free port, with its own config, runtime and state dirs."""
    if importlib.util.find_spec("jupyterlab") is None:
        _missing("jupyterlab is not installed (pip install -e '.[dev]')")
    from tests.e2e.lab import LabServer

    server = LabServer.start(tmp_path_factory.mktemp("e2e-lab"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def notebook(lab_server: LabServer) -> Path:
    """A fresh copy of the quickstart in a directory of its own (its own project, its own
    ``quickstart-output``), so each test starts from a clean notebook and kernel."""
    from tests.e2e.lab import fresh_quickstart

    return fresh_quickstart(Path(tempfile.mkdtemp(prefix="project-", dir=lab_server.root)))


def _page_of_width(browser: Browser, request: pytest.FixtureRequest, width: int) -> Iterator[Page]:
    """A new browser context and page ``width`` pixels wide and 900 high; a failing test
    leaves a screenshot in .ci/artifacts."""
    from tests.e2e.lab import save_screenshot

    context = browser.new_context(viewport={"width": width, "height": 900})
    context.set_default_timeout(30_000)
    page = context.new_page()
    try:
        yield page
    finally:
        report = request.node.stash.get(_REPORT, None)
        if report is not None and report.failed:
            save_screenshot(page, f"{request.node.name}-FAILED")
        context.close()


@pytest.fixture
def page(browser: Browser, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A new browser context and page at 1280x900."""
    yield from _page_of_width(browser, request, 1280)


@pytest.fixture
def wide_page(browser: Browser, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A page at 1400x900, the size people read cards and the sidebar at (issue 24)."""
    yield from _page_of_width(browser, request, 1400)


@pytest.fixture
def no_other_kernels(lab_server: LabServer) -> Iterator[None]:
    """Only this test's kernels run: the sidebar lists what every running kernel holds.
    (For a module's tests: ``pytestmark = pytest.mark.usefixtures("no_other_kernels")``.)"""
    lab_server.shutdown_kernels()
    yield
    lab_server.shutdown_kernels()
