"""How an approval error shows in a cell's output.

A call that stopped to ask for approval is the normal path, not a failure: where its card
shows, the card registry puts one quiet line under it (a ``display_data``, never a red error
output) with the machine-readable error beside it (:meth:`.card.registry.CardRegistry.stopped`).
The cell still ends in error (its ``execute_reply`` names ``ApprovalPending``), so "Run all"
stops there and nothing after the call runs. Every other approval error shows as its one-line
message, without the gate's internal frames: the message is what a person and an agent act on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core import errors


def show_approval_errors_briefly(
    shell: Any, stopped: Callable[[errors.ApprovalPending], bool] = lambda _error: False
) -> None:
    """Make ``shell`` show approval errors as described above. ``stopped(error)`` shows a
    stopped call where its card is, and says whether it did. Left alone when the shell already
    has a custom exception handler (there is one slot)."""
    if getattr(shell, "custom_exceptions", ()) or not hasattr(shell, "set_custom_exc"):
        return

    def brief(
        shell: Any, etype: type[BaseException], value: BaseException, tb: Any, tb_offset: Any = None
    ) -> list[str]:
        # IPython leaves the display of custom exceptions to the handler.
        stb = list(shell.InteractiveTB.get_exception_only(etype, value))
        if isinstance(value, errors.ApprovalPending) and stopped(value):
            # No error output; the execute_reply's traceback (ipykernel reads it from here).
            shell._last_traceback = stb
            return stb
        shell._showtraceback(etype, value, stb)
        return stb

    shell.set_custom_exc((errors.ApprovalError,), brief)
