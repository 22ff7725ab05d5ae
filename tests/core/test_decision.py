"""The shape check every decision passes first, wherever it comes from (core/decision.py)."""

from __future__ import annotations

import pytest

from jupyter_approvals.core import errors
from jupyter_approvals.core.decision import check_decision

FINGERPRINT = "sha256:" + "a" * 64


def test_a_well_formed_decision_passes_unchanged():
    assert check_decision("reject", FINGERPRINT, "too big", 100) == (
        "reject",
        FINGERPRINT,
        "too big",
    )


@pytest.mark.parametrize("reason", ["\ud800", "ok \udfff"])
def test_a_reason_with_a_lone_surrogate_is_malformed(reason):
    # Given a reason JSON can carry as an escape but no person typed (a lone surrogate)
    # When it is checked
    with pytest.raises(errors.ApprovalMalformedDecision) as refused:
        check_decision("approve", FINGERPRINT, reason, 100)
    # Then it is refused as malformed, naming the field
    assert refused.value.details["field"] == "reason"


def test_a_reason_with_real_characters_beyond_the_basic_plane_passes():
    assert check_decision("approve", FINGERPRINT, "ok \U0001f44d", 100)[2] == "ok \U0001f44d"
