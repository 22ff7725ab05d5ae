"""What the server keeps of a kernel's listing: its documented shape, and a reading floor
within the promised bounds, whatever the kernel's code published."""

from __future__ import annotations

import pytest

from jupyter_approvals.server.kernel_link import _well_formed


@pytest.mark.parametrize(
    ("published", "kept"),
    [
        (3000, 3000),  # a stricter floor, configured in that kernel
        (0, 1000),  # never less than the promised second
        (10**9, 60_000),  # never past the ceiling
        ("5000", 1000),  # not a number
        (None, 1000),  # an older kernel that does not say
        (True, 1000),
    ],
)
def test_a_kernels_reading_floor_is_kept_within_its_bounds(published, kept):
    # When a kernel publishes a listing with this floor
    listing = _well_formed({"requests": [], "min_answer_ms": published})
    # Then the server keeps it only within one second and the ceiling
    assert listing["min_answer_ms"] == kept
