"""How Python would decode a text it may run, against how a preview decodes it.

A preview shows text as UTF-8. Python reads a source file under the encoding its PEP 263
cookie names (``# -*- coding: utf-7 -*-`` in one of the first two lines), so the same bytes
can read as a harmless comment in the preview and as other code on import. Any file can be
run as Python (``python notes.txt``, ``%run``, ``runpy``), so the check does not go by name.
"""

from __future__ import annotations

import io
import tokenize

from ..core import errors

#: Encodings under which Python reads exactly what a UTF-8 preview shows.
_AS_SHOWN = frozenset({"utf-8", "utf-8-sig"})


def misread_encoding(data: bytes) -> str | None:
    """The encoding Python would read ``data`` under when that reads otherwise than UTF-8.

    None when the text has no cookie, names UTF-8, names an encoding that reads these bytes
    the same, or names one Python refuses (then it would not run at all).
    """
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:
        return None  # an unknown or inconsistent cookie: Python refuses to run the file
    if encoding in _AS_SHOWN:
        return None
    shown = data.decode("utf-8", errors="replace")
    try:
        read = data.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        return None  # Python cannot decode it either: it would not run
    return None if read == shown else encoding


def refuse_misread_source(api_path: str, data: bytes, shown_in: str = "the preview") -> None:
    """Refuse (``APPROVAL_SOURCE_ENCODING``) to write ``data`` at ``api_path`` when Python
    would read it otherwise than ``shown_in`` shows it to a person (:func:`misread_encoding`)."""
    encoding = misread_encoding(data)
    if encoding is not None:
        raise errors.ApprovalSourceEncoding(
            f"{api_path} declares the source encoding {encoding!r}: Python would read other "
            f"text than {shown_in} shows a person. Nothing was written. Save it as UTF-8 "
            "(without a coding line, or with '# coding: utf-8').",
            path=api_path,
            encoding=encoding,
        )
