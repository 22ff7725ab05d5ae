"""Arguments whose text lies (T1/T2): the card, the summary and the journal must show what the
fingerprint covers, and what runs must be what was shown.

Each call here goes to a protected function that records every run in ``lying_runs``.
"""

from __future__ import annotations

import pytest

from jupyter_approvals.testing import KernelFrontend
from tests.kernel.helpers import run, value

from .conftest import Target, approve, journal_entries

pytestmark = pytest.mark.kernel

#: A protected function that takes anything and records what it got.
RECORDER = """
lying_runs = []
@ja.protected("table.drop", summary="Drop table {table}")
def drop(table):
    lying_runs.append(table)
"""

LIAR_ENUM = """
import enum
class Table(enum.Enum):
    SALES = "prod.sales"
    def __repr__(self): return "scratch.tmp"
    def __str__(self): return "scratch.tmp"
    def __format__(self, spec): return "scratch.tmp"
"""


def pending_summary(fe: KernelFrontend, call: str) -> tuple[str, str]:
    """(summary, preview) of the request a call left pending."""
    result = run(fe, call)
    assert result.ename == "ApprovalPending", (result.ename, result.evalue)
    card = fe.cards()[-1].state
    return card["summary"], card["preview"]


@pytest.fixture
def recorder(target: Target) -> KernelFrontend:
    run(target.fe, RECORDER)
    return target.fe


def test_an_enum_with_its_own_text_methods_is_shown_by_its_value(
    recorder: KernelFrontend, target: Target
) -> None:
    # Given an Enum member whose repr, str and format all say "scratch.tmp"
    run(recorder, LIAR_ENUM)
    # When it is passed to a protected function
    summary, preview = pending_summary(recorder, "drop(Table.SALES)")
    # Then the card shows its class and stored value, never the text it offers
    assert "prod.sales" in summary
    assert "prod.sales" in preview
    assert "scratch" not in summary + preview
    requested = [e for e in journal_entries(target.state_dir) if e["event"] == "requested"]
    assert "prod.sales" in requested[-1]["summary"]
    assert value(recorder, "lying_runs") == "[]"


def test_an_enum_whose_value_changes_after_approval_runs_nothing(
    recorder: KernelFrontend, target: Target
) -> None:
    # Given an Enum member whose stored value is a list, approved as it was
    run(
        recorder,
        """
import enum
class Tables(enum.Enum):
    SOME = ["scratch"]
""",
    )
    result = run(recorder, "drop(Tables.SOME)")
    assert result.ename == "ApprovalPending"
    target.card = recorder.cards()[-1]
    approve(recorder, target.card)
    # When the value is changed in place before the run
    result = run(recorder, "Tables.SOME.value.append('prod.sales'); drop(Tables.SOME)")
    # Then the fingerprint differs: refused, journaled, and nothing ran
    assert result.ename == "ApprovalFingerprintMismatch"
    assert value(recorder, "lying_runs") == "[]"
    assert "APPROVAL_FINGERPRINT_MISMATCH" in target.refusals()


@pytest.mark.parametrize(
    ("kind", "definition"),
    [
        ("numpy scalar", "import numpy as np\nclass Liar(np.float64):\n    __module__ = 'numpy'"),
        ("str", "class Liar(str): pass"),
        ("int", "class Liar(int): pass"),
        ("dict", "class Liar(dict): pass"),
        ("PurePosixPath", "import pathlib\nclass Liar(pathlib.PurePosixPath): pass"),
    ],
)
def test_a_subclass_of_a_plain_type_with_lying_text_is_refused(
    recorder: KernelFrontend, target: Target, kind: str, definition: str
) -> None:
    # Given a subclass of a type the fingerprint knows, whose text methods lie
    run(
        recorder,
        definition
        + """
Liar.__repr__ = Liar.__str__ = lambda self: "scratch"
Liar.__format__ = lambda self, spec: "scratch"
""",
    )
    arg = {"numpy scalar": "Liar(3.0)", "int": "Liar(5)", "dict": "Liar(a=1)"}.get(
        kind, "Liar('prod')"
    )
    # When it is passed to a protected function
    result = run(recorder, f"drop({arg})")
    # Then it is refused by name before anyone is asked, and nothing ran or waits
    assert result.ename == "ApprovalUnfingerprintable"
    assert "Liar" in result.evalue
    assert value(recorder, "lying_runs") == "[]"
    assert value(recorder, "len(ja.pending())") == "0"


def test_a_liar_nested_in_a_list_is_refused(recorder: KernelFrontend) -> None:
    run(recorder, "class Liar(str):\n    __str__ = __repr__ = lambda self: 'scratch'")
    result = run(recorder, "drop(['fine', {'inner': Liar('prod')}])")
    assert result.ename == "ApprovalUnfingerprintable"
    assert "Liar" in result.evalue
    assert value(recorder, "lying_runs") == "[]"


def test_a_dataframe_subclass_with_its_own_repr_is_refused(recorder: KernelFrontend) -> None:
    run(
        recorder,
        """
import pandas as pd
class Frame(pd.DataFrame):
    def __repr__(self): return "(empty)"
""",
    )
    result = run(recorder, "drop(Frame({'a': [1, 2]}))")
    assert result.ename == "ApprovalUnsupportedArgument"
    assert value(recorder, "lying_runs") == "[]"


@pytest.mark.parametrize(
    ("mixin", "shown", "real"),
    [("str", "'scratch.txt'", "'precious.txt'"), ("int", "1", "1000")],
    ids=["str-names-another-file", "int-counts-other-rows"],
)
def test_a_mixin_enum_that_is_other_data_than_its_value_is_refused(
    recorder: KernelFrontend, mixin: str, shown: str, real: str
) -> None:
    # Given an innocent-looking enum member: no method patched, its data differs from its
    # stored value (a card would show the value, the function receives the data)
    run(
        recorder,
        f"""
import enum
class Target({mixin}, enum.Enum):
    def __new__(cls, shown, real):
        member = {mixin}.__new__(cls, real)
        member._value_ = shown
        return member
    ONE = ({shown}, {real})
""",
    )
    cards_before = len(recorder.cards())
    # When it is passed to a protected function
    result = run(recorder, "drop(Target.ONE)")
    # Then it is refused before anything is asked, and nothing ran
    assert result.ename == "ApprovalUnsupportedArgument"
    assert "APPROVAL_UNSUPPORTED_ARGUMENT" in result.evalue
    assert len(recorder.cards()) == cards_before
    assert value(recorder, "lying_runs") == "[]"


def test_a_frame_with_another_packages_extension_column_is_refused(target: Target) -> None:
    # Given a DataFrame whose column is an extension array of another package's class (its
    # data read through its own iterator, which could change after approval)
    fe = target.fe
    run(
        fe,
        """
import numpy as np, pandas as pd
from jupyter_approvals.ops import write_table
class Amounts(pd.arrays.IntegerArray):
    pass
frame = pd.DataFrame({"amount": Amounts(np.array([1, 2]), np.zeros(2, dtype=bool))})
""",
    )
    # When it is written with the ready table operation
    result = run(fe, "write_table(frame, 'sales.csv')")
    # Then it is refused with the code, saying where, and nothing was written
    assert result.ename == "ApprovalUnsupportedArgument"
    assert "amount" in result.evalue
    assert not (target.project / "sales.csv").exists()


def test_a_card_shows_numbers_as_they_are_under_the_notebooks_display_options(
    recorder: KernelFrontend,
) -> None:
    # Given a notebook that formats floats for reading: -1000000.0 prints as 1,000,000.00
    run(
        recorder,
        """
import numpy as np, pandas as pd
pd.set_option("display.float_format", lambda x: f"{abs(x):,.2f}")
np.set_printoptions(precision=1, suppress=True)
refund = pd.DataFrame({"amount": [-1000000.0]})
""",
    )
    # When the frame is passed to a protected function
    _summary, preview = pending_summary(recorder, "drop(refund)")
    # Then the card shows the sign and the number as they are
    assert "-1000000.0" in preview
    assert "1,000,000.00" not in preview


def test_a_path_whose_fspath_changes_cannot_write_where_it_was_not_shown(
    target: Target,
) -> None:
    # Given a path-like object that names a harmless file once and the precious one after
    fe = target.fe
    (target.project / "precious.csv").write_text("keep")
    run(
        fe,
        """
from jupyter_approvals.ops.files import write_file
class Shifty:
    calls = 0
    def __fspath__(self):
        Shifty.calls += 1
        return "harmless.txt" if Shifty.calls == 1 else "precious.csv"
shifty = Shifty()
""",
    )
    # When a write through it asks, is approved as shown, and is made again
    result = run(fe, "write_file(shifty, 'new')")
    assert result.ename == "ApprovalPending"
    target.card = fe.cards()[-1]
    assert "harmless.txt" in target.card.state["summary"]
    approve(fe, target.card)
    again = run(fe, "write_file(shifty, 'new')")
    # Then the second call read its path once, as precious.csv: a new request, nothing written
    assert again.ename == "ApprovalPending"
    assert "precious.csv" in fe.cards()[-1].state["summary"]
    assert (target.project / "precious.csv").read_text() == "keep"
    assert not (target.project / "harmless.txt").exists()


def test_an_argument_changed_after_approval_runs_nothing(target: Target) -> None:
    # Given a list argument approved as it was
    fe = target.fe
    run(fe, RECORDER + "tables = ['scratch']")
    assert run(fe, "drop(tables)").ename == "ApprovalPending"
    target.card = fe.cards()[-1]
    approve(fe, target.card)
    # When it is changed before the approved call runs
    result = run(fe, "tables.append('prod.sales'); drop(tables)")
    # Then the run is refused, journaled, the approval is spent, and nothing ran
    assert result.ename == "ApprovalFingerprintMismatch"
    assert value(fe, "lying_runs") == "[]"
    assert "APPROVAL_FINGERPRINT_MISMATCH" in target.refusals()
    assert run(fe, "tables.pop(); drop(tables)").ename == "ApprovalPending"


def test_a_target_file_changed_after_approval_is_not_overwritten(target: Target) -> None:
    # Given an approved overwrite of a file, shown with its current content
    fe = target.fe
    target.marker.write_text("old")
    card = target.ask_and_read()
    approve(fe, card, wait=False)
    # When someone changes the file before the approved call runs
    target.marker.write_text("changed by someone else")
    result = target.again()
    # Then the write is refused and the file keeps the other change
    assert result.ename == "ApprovalFingerprintMismatch"
    assert target.marker.read_text() == "changed by someone else"
    assert "APPROVAL_FINGERPRINT_MISMATCH" in target.refusals()
