"""Which kernel journals the server counts as elsewhere, and that the answer is kept."""

from __future__ import annotations

from pathlib import Path

from jupyter_approvals.server.mirror import kernels


def test_a_journal_outside_the_state_dir_is_elsewhere_and_resolved_once(tmp_path: Path) -> None:
    # Given the server's state directory and a journal a kernel keeps outside it
    state = (tmp_path / "state").resolve()
    outside = str(tmp_path / "moved" / "journal.jsonl")
    inside = str(state / "journals" / "journal.jsonl")
    kernels._outside_resolved.cache_clear()
    # When the pending list asks about both on two polls
    first = [kernels._outside(outside, state), kernels._outside(inside, state)]
    second = [kernels._outside(outside, state), kernels._outside(inside, state)]
    # Then only the outside one is elsewhere, and the second poll resolved no path again
    assert first == second == [outside, None]
    assert kernels._outside_resolved.cache_info().hits == 2


def test_a_journal_path_a_kernel_lists_in_another_shape_is_not_elsewhere(tmp_path: Path) -> None:
    # Given paths a hostile or broken kernel could list (not strings, or empty)
    # When the server asks whether each is elsewhere
    answers = [kernels._outside(path, tmp_path) for path in (["a"], {"p": 1}, None, "", 3)]
    # Then none is, and none raises
    assert answers == [None] * 5
