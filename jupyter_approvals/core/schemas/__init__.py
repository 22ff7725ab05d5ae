"""JSON Schemas (draft 2020-12) of what crosses into the card's and the sidebar's JavaScript.

One file per contract, beside this module and shipped in the wheel:

- ``structured-preview.schema.json``: a request's structured preview (docs/protocol.md 4.1),
  what :func:`~jupyter_approvals.core.structured.checked_structured` keeps;
- ``comm.schema.json``: the messages of the ``jupyter_approvals`` comm (section 3) and the
  card's widget messages (section 4), with the request as a kernel lists it;
- ``pending.schema.json``: the answer of ``GET pending`` (section 6.1) and its rows.

They are the normative shape: the sidebar's TypeScript types are generated from them
(``npm run schema:types`` in ``labextension/``), and the tests check that what the Python side
builds validates. The hand-written checks stay the runtime gate (docs/decisions/0007): a
kernel checks every structured preview on a protected call, and importing jsonschema there
would cost seconds. :func:`validator` is for tests and for processes that have jsonschema
loaded already (the server).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import resources
from typing import Any, Final, Protocol

STRUCTURED_PREVIEW: Final = "structured-preview.schema.json"
COMM: Final = "comm.schema.json"
PENDING: Final = "pending.schema.json"
#: Every schema file, each registered under its own name so that references between them
#: (``"$ref": "comm.schema.json#/$defs/ListedRequest"``) resolve here and in the TypeScript
#: generator alike.
NAMES: Final = (STRUCTURED_PREVIEW, COMM, PENDING)


class SchemaValidator(Protocol):
    """The part of a jsonschema validator the callers use."""

    def validate(self, instance: object) -> None:
        """Raise ``jsonschema.ValidationError`` for the first error of ``instance``."""

    def iter_errors(self, instance: object) -> Iterator[Any]:
        """Every error of ``instance`` (none when it validates)."""

    def is_valid(self, instance: object) -> bool:
        """Whether ``instance`` validates."""


def load(name: str) -> dict[str, Any]:
    """A fresh copy of the schema in the file ``name`` (one of :data:`NAMES`)."""
    if name not in NAMES:
        raise KeyError(f"no schema {name!r}; the schemas are {list(NAMES)}")
    text = resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def validator(name: str, definition: str | None = None) -> SchemaValidator:
    """A validator for the schema ``name``, or for its ``$defs`` entry ``definition``.

    Imports jsonschema, which takes seconds where it is not loaded yet (its format checkers
    build a grammar at import): never call this on the path of a protected call.
    """
    from jsonschema import Draft202012Validator
    from referencing import Registry
    from referencing.jsonschema import DRAFT202012

    load(name)  # an unknown name raises here, not as an unresolvable reference
    registry: Any = Registry().with_resources(
        (each, DRAFT202012.create_resource(load(each))) for each in NAMES
    )
    target = name if definition is None else f"{name}#/$defs/{definition}"
    checker: SchemaValidator = Draft202012Validator({"$ref": target}, registry=registry)
    return checker
