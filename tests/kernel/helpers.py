"""Cells and steps shared by the kernel tests."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from jupyter_approvals.core.protocol import SHOWN_FIELDS
from jupyter_approvals.testing import Execution, KernelFrontend, Widget

# The kernel's approvals clock, for the tests: real time plus the seconds a test skipped
# (let_a_person_read), kept in a file beside the kernel's connection file. A test then need not
# sleep through the reading floor; the tests of the floor itself click without skipping.
TEST_CLOCK = """
import time as _time
from ipykernel.connect import get_connection_file as _connection_file
from jupyter_approvals.kernel.session import KernelSession as _Session

class _SkippingClock:
    def __init__(self, path):
        self.path = path

    def _skipped(self):
        try:
            return float(open(self.path).read() or 0)
        except (OSError, ValueError):
            return 0.0

    def wall(self):
        return _time.time() + self._skipped()

    def monotonic(self):
        return _time.monotonic() + self._skipped()

# Only in a kernel whose approvals have not started: a session already there (a test's own
# clock, or the one a server's comm woke) is left as it is, and the test then sleeps.
_clock_file = _connection_file() + ".skipped"
if _Session._current is None:
    _Session.install(_Session(get_ipython(), clock=_SkippingClock(_clock_file)))
    open(_clock_file, "w").write("0")
"""

# A protected writer whose subject includes the target file's current content.
SETUP = (
    TEST_CLOCK
    + """
import jupyter_approvals as ja
from pathlib import Path
runs = []

@ja.protected("table.write", summary="Overwrite {path}",
              subject=lambda text, path: ja.FileContent(path), target="path")
def save(text, path):
    runs.append(path)
    Path(path).write_text(text)
    return f"wrote {len(text)} chars"
"""
)

#: How long a person takes at least; answers sooner are auto-answered.
HUMAN_PAUSE_S = 1.2


def run(fe: KernelFrontend, code: str) -> Execution:
    """Execute a cell and fail loudly on an unexpected kernel-side problem."""
    result = fe.execute(code)
    assert result.status in ("ok", "error"), result
    return result


def pending_call(fe: KernelFrontend, code: str) -> Widget:
    """Run a protected call that must end pending, and return the card it displayed."""
    result = run(fe, code)
    assert result.ename == "ApprovalPending", (result.ename, result.evalue)
    return fe.cards()[-1]


def let_a_person_read(fe: KernelFrontend, seconds: float = HUMAN_PAUSE_S) -> None:
    """Let ``seconds`` pass on the kernel's approvals clock: skipped at once when the kernel
    runs the test clock of :data:`SETUP`, slept otherwise."""
    skipped = Path(fe.manager.connection_file + ".skipped")
    if not skipped.exists():
        time.sleep(seconds)
        return
    skipped.write_text(str(float(skipped.read_text() or 0) + seconds))


def approve_as_person(
    fe: KernelFrontend, card: Widget, decision: str = "approve", reason: str = ""
) -> Widget:
    """Wait like a person, press the button, and return the card's new state."""
    let_a_person_read(fe)
    fe.click(card, decision, reason=reason)
    return wait_for_state(fe, card, lambda s: s["state"] != "pending" or s.get("notice"))


def card_decision(
    fe: KernelFrontend,
    card: Widget,
    *,
    state: dict[str, Any] | None = None,
    decision: str = "approve",
    **shown: Any,
) -> None:
    """Send to ``card``'s comm the decision its view sends for the request in ``state`` (the
    card's own synced state by default), reporting that state as shown, with ``shown``'s
    fields in place of the state's (a rewritten text, another structured preview)."""
    state = fe.card(card.model_id).state if state is None else state
    fe.send_widget_message(
        card.model_id,
        {
            "op": "decide",
            "id": state["request_id"],
            "decision": decision,
            "fingerprint": state["fingerprint"],
            "reason": "",
            "shown": {**{name: state.get(name) for name in SHOWN_FIELDS}, **shown},
        },
    )


def wait_for_state(fe: KernelFrontend, card: Widget, predicate, timeout: float = 10) -> Widget:
    """Pump iopub until the card's synced state satisfies ``predicate``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        current = fe.card(card.model_id)
        if predicate(current.state):
            return current
    raise AssertionError(f"card never reached the state; last: {fe.card(card.model_id).state}")


def value(fe: KernelFrontend, expression: str) -> str:
    """The text/plain of an expression evaluated in the kernel."""
    result = run(fe, expression)
    assert result.status == "ok", result.evalue
    return result.data()[-1]


def record_iopub(fe: KernelFrontend) -> list[dict]:
    """Keep every iopub message ``fe`` reads from now on (it reads them all: a kernel
    broadcasts iopub, so this includes updates sent while other clients' messages ran)."""
    seen: list[dict] = []
    absorb = fe._absorb

    def keep(msg: dict) -> None:
        seen.append(msg)
        absorb(msg)

    fe._absorb = keep
    return seen


def display_updates(seen: list[dict], display_id: str) -> list[str]:
    """The text/plain of each ``update_display_data`` for ``display_id``, in order."""
    return [
        msg["content"]["data"]["text/plain"]
        for msg in seen
        if msg["msg_type"] == "update_display_data"
        and msg["content"].get("transient", {}).get("display_id") == display_id
    ]
