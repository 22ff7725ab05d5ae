"""``register``: another package gives a type of its own a fingerprint encoding."""

from __future__ import annotations

import enum

import pytest

from jupyter_approvals.core import errors
from jupyter_approvals.core.fingerprint import FileContent, fingerprint, register


class Handle:
    """A type of another package: a connection handle known by its name."""

    def __init__(self, name: str) -> None:
        self.name = name


def handle_data(value: Handle) -> dict[str, str]:
    return {"handle": value.name}


class Loop:
    """A type whose registered function returns itself again."""


def test_a_registered_type_is_fingerprinted_as_the_data_it_stands_for():
    # Given a type registered with the data that stands for its values
    register(Handle, handle_data)
    # When a subject holds one, Then it fingerprints exactly as that data, also nested
    assert fingerprint(Handle("sales")) == fingerprint({"handle": "sales"})
    assert fingerprint([Handle("a"), 1]) == fingerprint([{"handle": "a"}, 1])
    assert fingerprint(Handle("a")) != fingerprint(Handle("b"))
    # And registering the same pair again changes nothing
    register(Handle, handle_data)
    assert fingerprint(Handle("sales")) == fingerprint({"handle": "sales"})


def test_a_second_function_for_a_registered_type_is_refused():
    # Given a registered type
    register(Handle, handle_data)
    # When another function is registered for it, Then that is refused with a code
    with pytest.raises(errors.ApprovalInvalidArgument) as refused:
        register(Handle, lambda value: {"other": value.name})
    assert refused.value.code == "APPROVAL_INVALID_ARGUMENT"
    assert "registered already" in refused.value.message
    assert fingerprint(Handle("sales")) == fingerprint({"handle": "sales"})


class Colour(enum.Enum):
    RED = 1


@pytest.mark.parametrize("value_type", [int, str, dict, FileContent, Colour])
def test_a_type_with_an_encoding_of_its_own_cannot_be_registered(value_type):
    # When a package tries to change how a type with an encoding is fingerprinted
    with pytest.raises(errors.ApprovalInvalidArgument) as refused:
        register(value_type, lambda value: "anything")
    # Then it is refused, naming the type
    assert "has a fingerprint encoding of its own" in refused.value.message


@pytest.mark.parametrize("arguments", [("Handle", handle_data), (Handle, "not callable")])
def test_register_needs_a_type_and_a_function(arguments):
    with pytest.raises(errors.ApprovalInvalidArgument):
        register(*arguments)


def test_a_registered_function_that_returns_its_own_type_is_refused():
    # Given a type whose registered function returns a value of that type again
    register(Loop, lambda value: Loop())
    # When one is fingerprinted, Then it is refused as unfingerprintable, naming the type
    with pytest.raises(errors.ApprovalUnfingerprintable) as refused:
        fingerprint({"x": Loop()})
    assert refused.value.details["type"].endswith("Loop")
    assert refused.value.details["path"] == "x"
