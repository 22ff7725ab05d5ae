"""Text a person reads on a card shows every character that matters, and nothing that hides.

A file name, a diff line, a header value or an SQL statement can carry characters that change
how the text around them looks: a carriage return that overwrites the start of a line,
terminal escapes, Unicode line separators that split one line into two, bidirectional
overrides that reverse what follows, zero-width and other invisible characters, tag
characters that carry hidden text, lone surrogates that no frontend can receive. Every
preview and summary passes through :func:`make_visible` before a card or the journal shows
it: each such character is written as a marker naming its code point (``⟦U+202E⟧``), and the
marker's own opening bracket is written the same way, so a marker in the text is never
mistaken for a character that was escaped. Beyond the listed ranges, every other character of
Unicode's "other" categories (controls, format characters, surrogates, private use and code
points not assigned yet) and every line or paragraph separator is marked too, as is each mark
of a run of more than :data:`MAX_COMBINING_RUN` combining marks: a character a font may draw
as nothing, or a stack that covers other lines, is never shown raw. Categories come from the
running Python's ``unicodedata``: a code point assigned in a newer Unicode version than it
knows counts as unassigned, and is marked. This is the one escaping scheme of the project:
cards, the sidebar's texts, the journal and the terminal output of the CLI all use it.
"""

from __future__ import annotations

import re
import unicodedata

# Ranges of characters that are invisible, reorder or split text, or cannot be sent as UTF-8.
_HIDING_RANGES = (
    "\x00-\x08\x0b-\x1f"  # C0 controls except tab and newline (those two: see _LINE_BREAKS)
    "\x7f-\x9f"  # DEL and the C1 controls (NEL among them)
    "\xad"  # soft hyphen
    "\u034f"  # combining grapheme joiner
    "\u061c"  # Arabic letter mark (a bidirectional control)
    "\u115f\u1160\u3164\uffa0"  # Hangul fillers, which render as blank space
    "\u17b4\u17b5"  # Khmer inherent vowels, invisible
    "\u180b-\u180f"  # Mongolian variation selectors and vowel separator
    "\u200b-\u200f"  # zero-width space, joiners, left-to-right and right-to-left marks
    "\u2028-\u202e"  # line and paragraph separators, bidirectional embeddings and overrides
    "\u2060-\u206f"  # word joiner, invisible operators, bidirectional isolates
    "\ufe00-\ufe0f"  # variation selectors
    "\ufeff"  # zero-width no-break space (byte order mark)
    "\ufff0-\ufffb"  # interlinear annotation and other specials
    "\ud800-\udfff"  # lone surrogates (a file name that is not UTF-8)
    "\ue000-\uf8ff"  # private use
    "\U000e0000-\U000e0fff"  # tag characters and the variation selectors supplement
    "\U000f0000-\U0010ffff"  # supplementary private use
    "\u2800"  # braille pattern blank, drawn as empty space
)
#: The marker's own opening bracket, marked too where text is escaped the first time.
_BRACKET = "\u27e6"
#: A run of more combining marks than this on one character is written as markers: a tall
#: stack of marks ("zalgo" text) can cover the lines around it.
MAX_COMBINING_RUN = 4
_LINE_BREAKS = "\t\n"
_PATTERNS = {
    (keep_lines, mark_bracket): re.compile(
        f"[{_HIDING_RANGES}{_BRACKET if mark_bracket else ''}{'' if keep_lines else _LINE_BREAKS}]"
    )
    for keep_lines in (True, False)
    for mark_bracket in (True, False)
}


def _marker(match: re.Match[str]) -> str:
    return f"⟦U+{ord(match.group()):04X}⟧"


def make_visible(text: str, keep_lines: bool = True, mark_bracket: bool = True) -> str:
    """``text`` with every hiding character shown as a ``⟦U+XXXX⟧`` marker.

    Tab and newline stay as they are when ``keep_lines`` (a preview); a summary is one line.
    ``mark_bracket=False`` leaves the marker's bracket as it is: for text escaped once already
    (what a kernel published), which escaping again must not garble; every hiding character is
    still marked.
    """
    marked = _PATTERNS[keep_lines, mark_bracket].sub(_marker, text)
    if marked.isascii():
        return marked
    # The ranges above catch the common cases at regex speed; this catches the rest by
    # category: other (controls, format, surrogates, private use, unassigned), line and
    # paragraph separators, and long runs of combining marks.
    out: list[str] = []
    run: list[str] = []
    for ch in marked:
        category = unicodedata.category(ch) if ch > "\x9f" else ""
        if category.startswith("M"):
            run.append(ch)
            continue
        _flush(run, out)
        out.append(f"⟦U+{ord(ch):04X}⟧" if category[:1] == "C" or category in ("Zl", "Zp") else ch)
    _flush(run, out)
    return "".join(out)


def _flush(run: list[str], out: list[str]) -> None:
    if len(run) > MAX_COMBINING_RUN:
        out.extend(f"⟦U+{ord(mark):04X}⟧" for mark in run)
    else:
        out.extend(run)
    run.clear()
