"""Every error code is stable, documented, and provoked by some test."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jupyter_approvals.core.errors import ERROR_CODES, ApprovalError

ROOT = Path(__file__).resolve().parents[2]
TESTS = [p for p in (ROOT / "tests").rglob("test_*.py") if p.name != "test_error_codes.py"]


def test_codes_are_unique_and_well_formed():
    # Given every error class
    # Then each has its own APPROVAL_* code
    assert len(ERROR_CODES) == len(set(ERROR_CODES))
    for code, cls in ERROR_CODES.items():
        assert re.fullmatch(r"APPROVAL_[A-Z_]+", code)
        assert issubclass(cls, ApprovalError)
        assert cls.__doc__


@pytest.mark.parametrize("code", sorted(ERROR_CODES))
def test_code_is_documented_in_the_readme_and_protocol_or_security(code):
    readme = (ROOT / "README.md").read_text()
    assert f"`{code}`" in readme


@pytest.mark.parametrize("code", sorted(ERROR_CODES))
def test_code_is_provoked_by_a_test(code):
    # Given the test sources, when we look for the code or its class name in an assertion
    # Then some test expects exactly this failure
    name = ERROR_CODES[code].__name__
    hits = [p for p in TESTS if code in p.read_text() or name in p.read_text()]
    assert hits, f"no test provokes {code}"


def test_errors_carry_code_message_and_details():
    # When an error is built for a code
    error = ERROR_CODES["APPROVAL_REJECTED"]("no", reason="wrong table")
    # Then it renders the code first and serialises for agents
    assert str(error) == "[APPROVAL_REJECTED] no"
    assert error.to_dict() == {
        "code": "APPROVAL_REJECTED",
        "message": "no",
        "details": {"reason": "wrong table"},
    }


def test_every_code_sits_in_a_family_a_caller_can_catch_at_once():
    from jupyter_approvals.core import errors

    # Given the families and the codes that stand alone
    families = (
        errors.ApprovalEnded,
        errors.ApprovalRefused,
        errors.ApprovalProtocolError,
        errors.ApprovalUnavailable,
    )
    alone = {"APPROVAL_PENDING", "APPROVAL_REQUIRED", "APPROVAL_REDIRECTED"}
    # Then every other code belongs to exactly one family, and the families have no code
    for code, cls in ERROR_CODES.items():
        belongs = [family for family in families if issubclass(cls, family)]
        assert len(belongs) == (0 if code in alone else 1), code
    assert not set(ERROR_CODES.values()) & set(families)
    # And an ended request is caught as ended, whatever way it ended
    with pytest.raises(errors.ApprovalEnded):
        raise ERROR_CODES["APPROVAL_TIMED_OUT"]("nobody answered")
