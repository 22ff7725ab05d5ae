"""Protected coroutine functions: the check happens when awaited, right before the body runs."""

from __future__ import annotations

import pytest

from tests.kernel.helpers import SETUP, approve_as_person, pending_call, run, value

pytestmark = pytest.mark.kernel

ASYNC_SETUP = (
    SETUP
    + """
@ja.protected("table.write", subject=lambda rows, path: ja.FileContent(path), target="path")
async def awrite(rows, path):
    Path(path).write_text(",".join(rows))
    runs.append(path)
    return "ok"
"""
)


def test_content_changed_between_creating_and_awaiting_is_refused(frontend, project):
    # Given an approved async call
    run(frontend, ASYNC_SETUP)
    card = pending_call(frontend, "await awrite(['a', 'b'], 't.csv')")
    approve_as_person(frontend, card)
    # When the coroutine is created, the rows change, and only then it is awaited
    result = run(
        frontend,
        "rows = ['a', 'b']\ncoro = awrite(rows, 't.csv')\nrows[:] = ['DROP']\nawait coro",
    )
    # Then what runs would differ from what was approved: refused, nothing written
    assert result.ename == "ApprovalFingerprintMismatch"
    assert not (project / "t.csv").exists()


def test_a_coroutine_never_awaited_does_not_use_the_approval(frontend, project):
    # Given an approved async call
    run(frontend, ASYNC_SETUP)
    card = pending_call(frontend, "await awrite(['a'], 't.csv')")
    approve_as_person(frontend, card)
    # When a coroutine for it is created and dropped without being awaited
    run(
        frontend,
        "import warnings\nwarnings.simplefilter('ignore')\nc = awrite(['a'], 't.csv')\nc.close()",
    )
    # Then the approval is still there for the real call, which runs once
    assert run(frontend, "await awrite(['a'], 't.csv')").data() == ["'ok'"]
    assert (project / "t.csv").read_text() == "a"
    assert value(frontend, "runs") == "['t.csv']"
