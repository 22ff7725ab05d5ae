"""The default preview of a protected call: every argument, cut only where it says so.

A person must be able to trust that what the preview does not show, it says it does not
show. Long text and long containers are cut at a budget with "… N more characters/items";
numpy and pandas objects show their own shortened view under a line giving their shape.
The fingerprint always covers every value in full.
"""

from __future__ import annotations

import enum
import sys
from collections.abc import Mapping
from typing import Any

from ..core.fingerprint.encoding import type_name
from ..core.fixed_format import fixed_formatting
from .preview_tables import table_text

#: Characters given to one argument before it is cut.
ARGUMENT_BUDGET = 4_000


def default_preview(arguments: Mapping[str, Any], budget: int = ARGUMENT_BUDGET) -> str:
    """One block per argument: ``name = value``, cut with a note where it is too long."""
    return "\n".join(f"{name} = {render(value, budget)}" for name, value in arguments.items())


def render(value: Any, budget: int) -> str:
    """``value`` as Python-like text of at most about ``budget`` characters, cuts announced.

    Rendered from what the fingerprint covers, never from a ``__repr__`` the value's own class
    may define: values the fingerprint accepts are of exact builtin, numpy, pandas or path
    types, whose text their library fixes (numpy and pandas render with fixed, exact options,
    not the notebook's; text cells of tables quoted), or enum members, shown as class and
    stored value.
    """
    if isinstance(value, enum.Enum):
        return f"{type_name(type(value))}({render(value._value_, budget)})"
    if isinstance(value, str | bytes | bytearray):
        return _render_text(value, budget)
    if isinstance(value, list | tuple | set | frozenset | dict):
        return _render_container(value, budget)
    module = type(value).__module__.split(".")[0]
    if module in ("numpy", "pandas"):
        shape = getattr(value, "shape", None)
        dtype = getattr(value, "dtype", None) or getattr(value, "dtypes", None)
        head = f"<{type(value).__name__}"
        head += f" shape={shape}" if shape is not None else ""
        head += (
            f" dtype={dtype}"
            if dtype is not None and shape is not None and not hasattr(dtype, "items")
            else ""
        )
        head += "> (its own shortened view; the fingerprint covers every value)\n"
        with fixed_formatting():  # not the display options the notebook set
            text = table_text(value, sys.modules["pandas"]) if module == "pandas" else None
            return head + _cut(repr(value) if text is None else text, budget)
    return _cut(repr(value), budget)


def _render_text(value: str | bytes | bytearray, budget: int) -> str:
    if len(value) <= budget:
        return repr(value)
    kind = "characters" if isinstance(value, str) else "bytes"
    return f"{value[:budget]!r} … {len(value) - budget:,} more {kind} not shown"


def _render_container(value: Any, budget: int) -> str:
    total = len(value)
    if total == 0 and isinstance(value, set | frozenset):
        return f"{type(value).__name__}()"  # "{}" would be an empty dict
    items = iter(value.items()) if isinstance(value, dict) else iter(value)
    brackets: dict[type, tuple[str, str]] = {
        dict: ("{", "}"),
        list: ("[", "]"),
        tuple: ("(", ")"),
        set: ("{", "}"),
        frozenset: ("frozenset({", "})"),
    }
    opening, closing = brackets[type(value)]
    parts: list[str] = []
    used = len(opening) + len(closing)
    for index, item in enumerate(items):
        remaining = budget - used
        if remaining <= 0:
            parts.append(f"… {total - index:,} more items not shown")
            break
        if isinstance(value, dict):
            key, val = item
            text = f"{render(key, remaining)}: {render(val, remaining)}"
        else:
            text = render(item, remaining)
        parts.append(text)
        used += len(text) + 2
    if isinstance(value, tuple) and total == 1:
        return f"({parts[0]},)"
    return opening + ", ".join(parts) + closing


def _cut(text: str, budget: int) -> str:
    if len(text) <= budget:
        return text
    return f"{text[:budget]} … {len(text) - budget:,} more characters not shown"


#: Types a summary's format string gets as they are (their formatting is Python's own).
_PLAIN = frozenset({str, int, float, bool, complex, bytes, type(None)})


class _Shown:
    """What a summary's format string gets for any other value: the preview's text of it."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __format__(self, spec: str) -> str:
        return format(self.text, spec)

    def __str__(self) -> str:
        return self.text

    __repr__ = __str__


def summary_arguments(arguments: Mapping[str, Any], budget: int = 200) -> dict[str, Any]:
    """The arguments a ``summary=`` format string is filled with: values of plain types as
    they are, every other value as its rendered text (never its own ``__format__``)."""
    return {
        name: value if type(value) in _PLAIN else _Shown(render(value, budget))
        for name, value in arguments.items()
    }
