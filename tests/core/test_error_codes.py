"""Every error code is stable, documented, and provoked by some test."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jupyter_approvals.core.errors import ERROR_CODES, ApprovalError

ROOT = Path(__file__).resolve().parents[2]
TESTS = [p for p in (ROOT / "tests").rglob("test_*.py") if p.name != "test_error_codes.py"]


def _every_error_class() -> list[type[ApprovalError]]:
    found: list[type[ApprovalError]] = []
    pending = [ApprovalError]
    while pending:
        cls = pending.pop()
        found.append(cls)
        pending.extend(cls.__subclasses__())
    return found


def test_codes_are_unique_and_well_formed():
    # Given every error class that declares a code (ERROR_CODES, a dict, would hide a twin)
    declared = [vars(cls)["code"] for cls in _every_error_class() if "code" in vars(cls)]
    # Then no two declare the same one, and each is an APPROVAL_* code with a docstring
    assert len(declared) == len(set(declared))
    assert set(ERROR_CODES) == set(declared) - {ApprovalError.code}
    for code, cls in ERROR_CODES.items():
        assert re.fullmatch(r"APPROVAL_[A-Z_]+", code)
        assert issubclass(cls, ApprovalError)
        assert cls.__doc__


@pytest.mark.parametrize("code", sorted(ERROR_CODES))
def test_code_is_documented_in_the_readmes_table(code):
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


@pytest.mark.parametrize("code", sorted(ERROR_CODES))
def test_every_code_has_one_http_status_an_error_can_have(code):
    # Given the class of a code
    cls = ERROR_CODES[code]
    # Then its HTTP status is a client or server error status
    assert 400 <= cls.http_status <= 599


def test_a_server_answers_an_error_with_its_details_beside_code_and_message():
    from jupyter_approvals.core import errors

    # Given an error with details, one of which tries to pass for the code
    error = errors.ApprovalUnknownRequest("no such request", id="ab", code="APPROVAL_NONE")
    # When it becomes a server's answer
    body = error.to_response()
    # Then the details are there, and the code and message are the error's own
    assert body == {
        "ok": False,
        "code": "APPROVAL_UNKNOWN_REQUEST",
        "message": "no such request",
        "id": "ab",
    }
    assert errors.http_status_of("APPROVAL_UNKNOWN_REQUEST") == 404
    # And a code this version does not know (a kernel could send one) is a bad request
    assert errors.http_status_of("APPROVAL_FROM_THE_FUTURE") == 400


def test_an_agent_over_its_rate_gets_429_and_over_its_size_413():
    from jupyter_approvals.core import errors

    # Given the two ways past an agent's limits
    too_fast = errors.ApprovalAgentOverLimit("too fast", retry_after_s=2.0)
    too_big = errors.ApprovalAgentOverLimit("too big", limit=10)
    # Then each has its own status
    assert (too_fast.http_status, too_big.http_status) == (429, 413)
