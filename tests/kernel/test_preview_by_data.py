"""The card's text of an argument is the argument: for any plain data the fingerprint accepts,
the default preview, read back as Python, is exactly the value the function receives (same
types, same values); a numpy array's text reads back as the same array; two pandas tables that
hold different values are never shown alike. Property-tested."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as numpy_st

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


# numpy and pandas: the card's text tells every value apart -----------------------------------

NUMPY_DTYPES = [np.int64, np.int8, np.uint16, np.float64, np.float32, np.bool_]
NUMPY_NAMES = {"array": np.array, "nan": np.nan, "inf": np.inf} | {
    np.dtype(kind).name: kind for kind in NUMPY_DTYPES
}


def array_part(shown: str) -> str:
    """The text after the card's first line (the shape and dtype line)."""
    return shown.split("\n", 1)[1]


@settings(max_examples=200, deadline=None)
@given(
    numpy_st.arrays(st.sampled_from(NUMPY_DTYPES), numpy_st.array_shapes(max_dims=2, max_side=6))
)
def test_the_cards_text_of_a_numpy_array_reads_back_as_exactly_that_array(array):
    # Given a small numpy array of a common dtype, any values (nan, inf, -0.0 included)
    fingerprint(array)
    # When the card renders it
    shown = render(array, BUDGET)
    # Then reading the text back gives the same dtype and the same values, signs of zero too
    back = eval(array_part(shown), {"__builtins__": {}, **NUMPY_NAMES})
    assert back.dtype == array.dtype, shown
    assert back.shape == array.shape, shown
    assert np.array_equal(back, array, equal_nan=True), shown
    if array.dtype.kind == "f":  # -0.0 is not 0.0 (a NaN's sign is no value)
        numbers = ~np.isnan(array)
        assert np.array_equal(np.signbit(back[numbers]), np.signbit(array[numbers])), shown


def test_a_numpy_array_is_shown_exactly_under_the_notebooks_print_options():
    # Given print options a person set to read numbers easily
    with np.printoptions(precision=2, suppress=True):
        # When a card renders two arrays that differ past the second digit
        first = render(np.array([0.123456789]), BUDGET)
        second = render(np.array([0.123456788]), BUDGET)
    # Then the two cards differ
    assert first != second


cells = {
    "int": st.integers(-(2**62), 2**62),
    "float": st.floats(allow_nan=True, allow_infinity=True),
    "text": st.one_of(st.none(), st.text(max_size=8)),
}


def look_alikes(value: object) -> st.SearchStrategy:
    """Values a rounded or bare rendering would show as ``value``."""
    if isinstance(value, float):
        return st.sampled_from(
            [math.nextafter(value, math.inf), value * (1 + 1e-9) + 1e-12, round(value, 6)]
        )
    if isinstance(value, str):
        return st.sampled_from([value + " ", " " + value, "None", "nan", "NaN", value.strip()])
    if value is None:
        return st.sampled_from(["None", "NaN", "nan", ""])
    return st.just(value)


@st.composite
def frames_and_one_changed_cell(draw):
    """A small DataFrame (or Series) and a copy in which one cell holds another value."""
    kinds = draw(st.lists(st.sampled_from(sorted(cells)), min_size=1, max_size=3))
    rows = draw(st.integers(1, 8))
    data = {
        f"c{i}": draw(st.lists(cells[kind], min_size=rows, max_size=rows))
        for i, kind in enumerate(kinds)
    }
    frame = pd.DataFrame(data)
    column = draw(st.integers(0, len(kinds) - 1))
    row = draw(st.integers(0, rows - 1))
    changed_data = {name: list(values) for name, values in data.items()}
    before = changed_data[f"c{column}"][row]
    changed_data[f"c{column}"][row] = draw(st.one_of(cells[kinds[column]], look_alikes(before)))
    changed = pd.DataFrame(changed_data)
    if draw(st.booleans()):
        return frame[f"c{column}"], changed[f"c{column}"]
    return frame, changed


@settings(max_examples=300, deadline=None)
@given(frames_and_one_changed_cell())
def test_tables_holding_different_values_never_show_the_same_text(pair):
    # Given two small tables that differ in one cell (not only in 0.0 against -0.0)
    table, changed = pair
    assume(not table.equals(changed))
    # When cards render both
    # Then they differ: the card tells '1' from 1, 'a ' from 'a', 1/3 from 0.333333
    assert render(table, BUDGET) != render(changed, BUDGET)


def test_a_tables_text_cells_are_shown_quoted_with_what_they_hold():
    # Given a table whose text cells look like a number, hide a trailing space, or are None
    frame = pd.DataFrame({"s": pd.Series(["1", "a ", None], dtype=object), "n": [1, 2, 3]})
    # When a card renders it
    shown = render(frame, BUDGET)
    # Then each text cell is shown as the value it is
    assert "'1'" in shown
    assert "'a '" in shown
    assert "None" in shown
