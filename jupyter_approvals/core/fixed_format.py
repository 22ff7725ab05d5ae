"""Previews rendered with fixed formatting, whatever the notebook set.

A person sets ``pd.set_option("display.float_format", ...)`` or ``np.set_printoptions(...)``
to read their own output more easily, and a card rendered under those settings can then show
``1,000,000.00`` for ``-1000000.0``, or round away the digits that differ. Every preview text
that comes from numpy's or pandas' own rendering is therefore made inside
:func:`fixed_formatting`, which puts every pandas ``display.*`` option and numpy's print options
back to their defaults for the moment of rendering, then restores the person's. Two defaults
are replaced by exact ones: numbers are printed with as many digits as tell them apart from
every other number (numpy's ``floatmode="unique"``, Python's shortest ``repr`` for pandas), so
two values a card shows alike are the same value.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

#: numpy's default print options (``numpy.get_printoptions()`` of a fresh interpreter).
_NUMPY_DEFAULTS: dict[str, Any] = {
    "precision": 8,
    "threshold": 1000,
    "edgeitems": 3,
    "linewidth": 75,
    "suppress": False,
    "nanstr": "nan",
    "infstr": "inf",
    "sign": "-",
    "formatter": None,
    "floatmode": "unique",  # numpy's default is "maxprec": rounded to 8 digits
    "legacy": False,
}


def _pandas_display_defaults(pd: Any) -> list[object]:
    """Every registered ``display.*`` option of pandas and its default, as arguments for
    ``pandas.option_context``."""
    registered = getattr(getattr(pd, "_config", None), "config", None)
    options = getattr(registered, "_registered_options", {})
    pairs: list[object] = []
    for key, option in sorted(options.items()):
        if key.startswith("display.") and hasattr(option, "defval"):
            pairs += [key, option.defval]
    return pairs


@contextlib.contextmanager
def fixed_formatting() -> Iterator[None]:
    """numpy's and pandas' default formatting while the block renders (only for the
    libraries already imported: a preview never imports one)."""
    with contextlib.ExitStack() as stack:
        numpy = sys.modules.get("numpy")
        if numpy is not None:
            stack.enter_context(numpy.printoptions(**_NUMPY_DEFAULTS))
        pandas = sys.modules.get("pandas")
        if pandas is not None:
            pairs = _pandas_display_defaults(pandas)
            if pairs:
                stack.enter_context(pandas.option_context(*pairs))
                # pandas' default rounds to 6 digits; str gives each float's shortest exact text.
                # Its default column count depends on whether a terminal is attached: fixed at
                # the notebook's 20.
                stack.enter_context(
                    pandas.option_context("display.float_format", str, "display.max_columns", 20)
                )
        yield
