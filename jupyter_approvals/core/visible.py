"""Text a person reads on a card shows every character that matters, and nothing that hides.

A file name, a diff line, a header value or an SQL statement can carry characters that change
how the text around them looks: a carriage return that overwrites the start of a line,
terminal escapes, Unicode line separators that split one line into two, bidirectional
overrides that reverse what follows, zero-width characters. Every preview and summary passes
through :func:`make_visible` before a card or the journal shows it: such characters are
written as escapes (``\\x1b``, ``\\u202e``), so what a person reads is what the text holds.
"""

from __future__ import annotations

_HIDING = [
    *range(0x00, 0x20),  # C0 controls (tab and newline may be kept, see make_visible)
    0x7F,  # DEL
    *range(0x80, 0xA0),  # C1 controls, NEL (U+0085) among them
    0x00AD,  # soft hyphen
    *range(0x200B, 0x2010),  # zero-width spaces and joiners, LRM, RLM
    0x2028,  # line separator
    0x2029,  # paragraph separator
    *range(0x202A, 0x202F),  # bidirectional embeddings and overrides
    *range(0x2066, 0x206A),  # bidirectional isolates
    0xFEFF,  # zero-width no-break space (byte order mark)
]


def _escape(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_TABLE: dict[int, str] = {code: _escape(code) for code in _HIDING}
_TABLE_KEEPING_LINES: dict[int, str] = {
    code: text for code, text in _TABLE.items() if code not in (0x09, 0x0A)
}


def make_visible(text: str, keep_lines: bool = True) -> str:
    """``text`` with every hiding character escaped; tab and newline kept if ``keep_lines``."""
    return text.translate(_TABLE_KEEPING_LINES if keep_lines else _TABLE)
