"""A card never shows other data than the function receives, for ordinary objects: the
fingerprint reads values by their data, never through methods a class of theirs defines, and
refuses (APPROVAL_UNSUPPORTED_ARGUMENT) what it cannot read itself."""

from __future__ import annotations

import datetime as dt
import enum
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jupyter_approvals.core.errors import ApprovalUnfingerprintable, ApprovalUnsupportedArgument
from jupyter_approvals.core.fingerprint import fingerprint
from jupyter_approvals.kernel.preview import render

np = pytest.importorskip("numpy")
pd = pytest.importorskip("pandas")


def liar_enum(base: type, shown: object, real: object) -> enum.Enum:
    """An enum member that is the ``base`` data ``real`` but whose value is ``shown``."""

    def new(cls, shown_value, real_value):
        member = base.__new__(cls, real_value)
        member._value_ = shown_value
        return member

    namespace = enum.EnumMeta.__prepare__("Liar", (base, enum.Enum))
    namespace["__new__"] = new
    namespace["A"] = (shown, real)
    return enum.EnumMeta("Liar", (base, enum.Enum), namespace).A


class Plain(enum.Enum):
    A = "scratch.txt"


class Text(str, enum.Enum):
    A = "scratch.txt"


class Number(enum.IntEnum):
    A = 1


class Access(enum.IntFlag):
    READ = 1
    WRITE = 2


class Ratio(float, enum.Enum):
    MISSING = math.nan


class Shadowed(enum.Enum):
    A = 1

    @property
    def value(self):  # the class shows another value than it stores
        return 1000


class Day(dt.date, enum.Enum):
    FIRST = (2026, 1, 1)


@pytest.mark.parametrize(
    "member",
    [Plain.A, Text.A, Number.A, Access.READ | Access.WRITE, Ratio.MISSING, Shadowed.A],
    ids=["plain", "str-mixin", "int-enum", "int-flag", "float-nan", "value-property"],
)
def test_an_enum_member_is_fingerprinted_by_what_it_stores(member):
    # Given an ordinary enum member; when it is fingerprinted
    # Then it is accepted, and another member of other data has another fingerprint
    assert fingerprint({"m": member}) != fingerprint({"m": 12345})


def test_a_value_property_is_not_what_the_card_shows():
    # Given a member whose class shows 1000 as its value but stores 1
    assert Shadowed.A.value == 1000
    # When its preview is rendered
    shown = render(Shadowed.A, 100)
    # Then the card shows what is stored (and fingerprinted), not the property
    assert shown.endswith("(1)")
    assert "1000" not in shown


@pytest.mark.parametrize(
    ("base", "shown", "real"),
    [
        (str, "scratch.txt", "precious.txt"),
        (int, 1, 1000),
        (float, 1.0, -1000000.0),
        (bytes, b"safe", b"rm -rf"),
    ],
    ids=["str", "int", "float", "bytes"],
)
def test_an_enum_member_whose_data_differs_from_its_value_is_refused(base, shown, real):
    # Given a member that is one thing (what a function receives) and stores another
    member = liar_enum(base, shown, real)
    assert member._value_ == shown
    # When it is fingerprinted
    with pytest.raises(ApprovalUnsupportedArgument) as refused:
        fingerprint({"path": member})
    # Then it is refused with the code, naming both, and saying what to pass
    assert refused.value.code == "APPROVAL_UNSUPPORTED_ARGUMENT"
    assert repr(real)[:20] in refused.value.message
    assert "plain data" in refused.value.message


def test_an_enum_mixing_in_a_type_without_a_reader_is_refused():
    # Given an enum whose members are also dates; when it is fingerprinted
    with pytest.raises(ApprovalUnsupportedArgument):
        fingerprint(Day.FIRST)


@given(
    base=st.sampled_from([int, str, bytes, float]),
    shown=st.integers(min_value=-5, max_value=5),
    real=st.integers(min_value=-5, max_value=5),
)
def test_a_mixin_member_is_accepted_exactly_when_its_data_is_its_value(base, shown, real):
    # Given a member of base data made from ``real`` whose stored value is made from ``shown``
    def make(number: int) -> object:
        return base(str(number).encode()) if base is bytes else base(number)

    member = liar_enum(base, make(shown), make(real))
    # When it is fingerprinted
    try:
        fingerprint(member)
    except ApprovalUnsupportedArgument:
        accepted = False
    else:
        accepted = True
    # Then it is accepted only where nothing differs between card and function
    assert accepted == (make(shown) == make(real))


@given(
    base=st.sampled_from([int, float, str, bytes, tuple, list, dict, frozenset]),
    overrides=st.sets(st.sampled_from(["__iter__", "__repr__", "__str__", "__eq__", "__len__"])),
)
def test_no_subclass_of_a_builtin_type_is_taken_for_its_base(base, overrides):
    # Given a subclass of a builtin type, with any of its methods replaced
    namespace = {}
    for name in overrides:
        namespace[name] = {
            "__iter__": lambda self: iter(()),
            "__repr__": lambda self: "nothing",
            "__str__": lambda self: "nothing",
            "__eq__": lambda self, other: True,
            "__len__": lambda self: 0,
        }[name]
    kind = type("Sub", (base,), {**namespace, "__hash__": base.__hash__})
    value = kind()
    # When it is fingerprinted, alone or inside a container; then it is refused
    for subject in (value, [value], {"k": value}):
        with pytest.raises(ApprovalUnfingerprintable):
            fingerprint(subject)


class UserInts(pd.arrays.IntegerArray):
    """An extension array of another package, which could read out other numbers."""


def user_index(values: list[int]) -> pd.Index:
    class UserIndex(pd.Index):
        pass

    return UserIndex._simple_new(np.array(values))


def user_array(values: list[int]) -> object:
    return UserInts(np.array(values), np.zeros(len(values), dtype=bool))


@pytest.mark.parametrize(
    ("make", "where"),
    [
        (lambda: pd.DataFrame({"a": user_array([1, 2])}), "a"),
        (lambda: pd.Series(user_array([1, 2])), None),
        (lambda: user_array([1, 2]), None),
        (lambda: user_index([1, 2]), None),
        (lambda: pd.DataFrame({"a": [1, 2]}, index=user_index([1, 2])), "index"),
        (lambda: pd.Series([1, 2], index=user_index([5, 6])), "index"),
        (lambda: np.arange(3).view(type("Sub", (np.ndarray,), {})), None),
        (lambda: type("Frame", (pd.DataFrame,), {})({"a": [1]}), None),
    ],
    ids=[
        "extension-column",
        "extension-series",
        "extension-array",
        "index-subclass",
        "index-subclass-of-frame",
        "index-subclass-of-series",
        "ndarray-subclass",
        "dataframe-subclass",
    ],
)
def test_pandas_and_numpy_objects_of_other_classes_are_refused(make, where):
    # Given a pandas or numpy object of a class defined outside them
    subject = {"df": make()}
    # When it is fingerprinted
    with pytest.raises(ApprovalUnsupportedArgument) as refused:
        fingerprint(subject)
    # Then it is refused with the code, saying where and what to pass instead
    assert "plain" in refused.value.message
    if where is not None:
        assert refused.value.details["path"].endswith(where)


@pytest.mark.parametrize(
    "make",
    [
        lambda: pd.array([1, None, 3], dtype="Int64"),
        lambda: pd.array(["a", None], dtype="string"),
        lambda: pd.Categorical(["x", "y", "x"]),
        lambda: pd.date_range("2026-01-01", periods=3, tz="UTC"),
        lambda: pd.MultiIndex.from_tuples([(1, "a"), (2, "b")]),
        lambda: pd.DataFrame({"a": pd.array([1.5, None], dtype="Float64")}),
    ],
    ids=["Int64", "string", "categorical", "tz-dates", "multi", "Float64"],
)
def test_pandas_own_types_are_accepted_and_cover_their_data(make):
    # Given a value of pandas' own public types; when it is fingerprinted
    value = make()
    # Then it is accepted
    assert fingerprint({"v": value}).startswith("sha256:")


@pytest.fixture
def readable_display_options():
    """The display options a person sets to read their own output more easily (restored)."""
    pd.set_option("display.float_format", lambda number: f"{abs(number):,.2f}")
    pd.set_option("display.precision", 1)
    saved = np.get_printoptions()
    np.set_printoptions(precision=1, suppress=True)
    yield
    np.set_printoptions(**saved)
    pd.reset_option("display.float_format")
    pd.reset_option("display.precision")


def test_a_card_shows_numbers_as_they_are_whatever_the_notebook_displays(
    readable_display_options,
):
    # Given a notebook whose display options print -1000000.0 as 1,000,000.00
    frame = pd.DataFrame({"amount": [-1000000.0, 0.125]})
    assert "1,000,000.00" in repr(frame)
    # When a card renders the frame and an array
    shown = render(frame, 4000)
    array = render(np.array([-1000000.0, 0.123456789]), 4000)
    # Then it shows the sign and the digits, as pandas' and numpy's defaults do
    assert "-1000000.0" in shown
    assert "1,000,000.00" not in shown
    assert "1.23456789e-01" in array
    # And the notebook keeps its own options
    assert "1,000,000.00" in repr(frame)
