"""The card's text of an argument is the argument: for any plain data the fingerprint accepts,
the default preview, read back as Python, is exactly the value the function receives (same
types, same values). Property-tested over nested data."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_approvals.core.fingerprint import fingerprint
from jupyter_approvals.kernel.preview import render

BUDGET = 1_000_000  # nothing is cut: the whole value is shown

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(),
    st.binary(),
)
hashables = st.one_of(st.none(), st.booleans(), st.integers(), st.text(), st.binary())
values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children),
        st.lists(children).map(tuple),
        st.dictionaries(hashables, children),
        st.sets(hashables),
        st.frozensets(hashables),
    ),
    max_leaves=30,
)


def same(shown: object, received: object) -> bool:
    """Equal values of exactly the same types, all the way down (1 is not True, not 1.0)."""
    if type(shown) is not type(received):
        return False
    if isinstance(received, float):
        return math.copysign(1.0, shown) == math.copysign(1.0, received) and shown == received
    if isinstance(received, list | tuple):
        return len(shown) == len(received) and all(map(same, shown, received))
    if isinstance(received, dict):
        return shown.keys() == received.keys() and all(
            same(shown[key], received[key]) for key in received
        )
    return shown == received


def read_back(text: str) -> object:
    """The card's text as Python reads it: literals, and the ``set()`` and ``frozenset(...)``
    calls the text uses for sets (nothing else is callable)."""
    return eval(text, {"__builtins__": {}, "set": set, "frozenset": frozenset})


@settings(max_examples=400, deadline=None)
@given(values)
def test_the_cards_text_of_plain_data_reads_back_as_exactly_that_data(value):
    # Given any plain data the fingerprint accepts
    fingerprint(value)
    # When the card renders it, in full
    shown = render(value, BUDGET)
    # Then reading the text back gives the same value, of the same types
    assert same(read_back(shown), value), (value, shown)


def test_an_empty_set_is_not_shown_as_an_empty_dict():
    assert read_back(render(set(), BUDGET)) == set()
    assert type(read_back(render(set(), BUDGET))) is set
    assert read_back(render(frozenset(), BUDGET)) == frozenset()
