"""How an approval error shows in a cell's output: its one-line message, without the gate's
internal frames.

The message is what a person and an agent act on; the frames are ours, not theirs.
"""

from __future__ import annotations

from typing import Any

from ..core import errors


def show_approval_errors_briefly(shell: Any) -> None:
    """Make ``shell`` show an approval error as its one-line message. Left alone when the
    shell already has a custom exception handler (there is a single slot)."""
    if getattr(shell, "custom_exceptions", ()) or not hasattr(shell, "set_custom_exc"):
        return

    def one_line(
        shell: Any, etype: type[BaseException], value: BaseException, tb: Any, tb_offset: Any = None
    ) -> list[str]:
        # IPython leaves the display of custom exceptions to the handler.
        stb = list(shell.InteractiveTB.get_exception_only(etype, value))
        shell._showtraceback(etype, value, stb)
        return stb

    shell.set_custom_exc((errors.ApprovalError,), one_line)
