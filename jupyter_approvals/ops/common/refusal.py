"""The one way a ready operation refuses its arguments: APPROVAL_INVALID_ARGUMENT, nothing done."""

from __future__ import annotations

from typing import Any

from ...core.errors import ApprovalInvalidArgument


def invalid_argument(message: str, **details: Any) -> ApprovalInvalidArgument:
    """The error for arguments an operation cannot run with: ``message``, then what happened.

    Raised from ``prepare`` (or a preview check) before any request exists, so the sentence
    it ends with is always true: nothing was asked and nothing ran.
    """
    text = message.rstrip()
    if not text.endswith((".", "!", "?")):
        text += "."
    return ApprovalInvalidArgument(f"{text} Nothing was asked or run.", **details)
