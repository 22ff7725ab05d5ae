"""Path arguments, read exactly once.

``os.fspath`` calls an object's ``__fspath__``, which an object of the caller's can make answer
differently each time: one path for the check, another for the card, a third for the run.
Every path argument of the ready operations is turned into text here, once, in ``prepare``;
everything after (fingerprint, preview, run) sees only that text.
"""

from __future__ import annotations

import os

from .refusal import invalid_argument


def path_text(value: object, argument: str) -> str:
    """The text of path argument ``value`` (a str or path-like), read once; non-empty."""
    if not isinstance(value, (str, os.PathLike)):
        raise invalid_argument(
            f"{argument} must be a str or path-like, not {type(value).__name__}.",
            argument=argument,
            type=type(value).__name__,
        )
    text = os.fspath(value)
    if not isinstance(text, str) or not text:
        raise invalid_argument(f"{argument} must be a non-empty text path.", argument=argument)
    return text
