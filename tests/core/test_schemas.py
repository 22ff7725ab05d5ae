"""The JSON Schemas and the hand-written checks say the same (docs/decisions/0007).

The kernel keeps checking structured previews with core/structured.py, not with jsonschema;
these tests hold the two together: the schemas name exactly the checker's constants, every
document the schema allows passes the checker unchanged, and whatever the checker lets through,
from any input, validates.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from jupyter_approvals.core import schemas, structured
from jupyter_approvals.core.decision import DECISIONS
from jupyter_approvals.core.model import Status
from jupyter_approvals.core.protocol import COMM_PROTOCOL_VERSION, SHOWN_FIELDS
from jupyter_approvals.core.structured import StructuredRefused, checked_structured
from jupyter_approvals.kernel import comm

from .schema_strategies import from_schema

SCHEMA_DIR = Path(schemas.__file__).parent
RENDERER = Path(structured.__file__).parents[1] / "views" / "preview.js"
#: As decision 0006 asks: fixed examples, nothing written into the tree.
FUZZ = settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
NO_LIMIT = 10**9


@pytest.fixture(scope="module")
def preview_schema() -> Any:
    return schemas.validator(schemas.STRUCTURED_PREVIEW)


def defs(name: str) -> dict[str, Any]:
    return schemas.load(name)["$defs"]


def refs(node: object) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from refs(value)


def test_the_package_ships_exactly_the_schemas_it_names():
    # Given the schema files beside the loader
    found = sorted(path.name for path in SCHEMA_DIR.glob("*.schema.json"))
    # Then each is named, and so registered for references between them
    assert found == sorted(schemas.NAMES)


@pytest.mark.parametrize("name", schemas.NAMES)
def test_each_schema_is_a_draft_2020_12_schema_whose_references_resolve(name):
    # Given a schema file
    schema = schemas.load(name)
    # Then it is a valid draft 2020-12 schema
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)
    # And every reference names a file of the package and a definition that exists
    for ref in refs(schema):
        target, _, pointer = ref.partition("#")
        node: Any = schemas.load(target or name)
        for part in pointer.strip("/").split("/") if pointer else []:
            assert part in node, f"{name}: {ref} does not resolve"
            node = node[part]


def test_an_unknown_schema_name_is_refused():
    with pytest.raises(KeyError):
        schemas.validator("nope.schema.json")


def test_the_structured_schema_names_the_checkers_constants():
    # Given the structured preview's schema
    schema = schemas.load(schemas.STRUCTURED_PREVIEW)
    found = schema["$defs"]
    blocks = [found[ref.rsplit("/", 1)[1]] for ref in refs(found["Block"])]
    code = found["CodeBlock"]["properties"]
    # Then its version, enums and block types are the checker's, no more and no fewer
    assert schema["properties"]["version"]["const"] == structured.STRUCTURED_VERSION
    assert set(found["Tone"]["enum"]) == structured.TONES
    assert set(found["DiffLine"]["properties"]["op"]["enum"]) == structured.LINE_OPS
    assert set(found["TableRow"]["properties"]["change"]["enum"]) == structured.ROW_CHANGES
    assert set(code["language"]["enum"]) == structured.LANGUAGES
    assert {block["properties"]["type"]["const"] for block in blocks} == set(structured._BLOCKS)
    # And its integers are the ones the checker lets through: below 2^53 in magnitude
    assert found["Count"]["maximum"] == 2**53 - 1 == -found["Count"]["minimum"]


def test_the_comm_schema_names_the_kernels_constants():
    # Given the comm schema
    found = defs(schemas.COMM)
    # Then decisions, statuses, channels, the protocol version and the shown fields are the
    # kernel's
    assert tuple(found["Decision"]["enum"]) == DECISIONS
    assert set(found["RequestStatus"]["enum"]) == {status.value for status in Status}
    assert tuple(found["DecideMessage"]["properties"]["channel"]["enum"]) == comm._CHANNELS
    assert found["ListingMessage"]["properties"]["protocol"]["const"] == COMM_PROTOCOL_VERSION
    assert tuple(found["Shown"]["required"]) == SHOWN_FIELDS
    assert tuple(found["Shown"]["properties"]) == SHOWN_FIELDS


def test_the_renderer_knows_the_schemas_values_and_block_types():
    # Given the renderer the card and the sidebar share, and the structured preview's schema
    source = RENDERER.read_text(encoding="utf-8")
    found = defs(schemas.STRUCTURED_PREVIEW)

    def js_set(name: str) -> set[str]:
        match = re.search(rf"const {name} = new Set\(\[([^\]]*)\]\)", source)
        assert match is not None, f"no {name} in preview.js"
        return set(re.findall(r"""['"]([a-z_]+)['"]""", match.group(1)))

    blocks = re.search(r"const BLOCKS = \{([^}]*)\}", source)
    assert blocks is not None
    # Then the values it makes class names of, and the blocks it draws, are the schema's
    assert js_set("TONES") == set(found["Tone"]["enum"])
    assert js_set("LINE_OPS") == set(found["DiffLine"]["properties"]["op"]["enum"])
    assert js_set("ROW_CHANGES") == set(found["TableRow"]["properties"]["change"]["enum"])
    drawn = {entry.split(":")[0].strip() for entry in blocks.group(1).split(",")}
    assert drawn == {
        found[ref.rsplit("/", 1)[1]]["properties"]["type"]["const"] for ref in refs(found["Block"])
    }


def _one_cell_per_column(document: dict[str, Any]) -> dict[str, Any]:
    """The one rule of the shape the schema cannot say: a table row has a cell per column."""
    for block in document["blocks"]:
        if block["type"] == "table":
            width = len(block["columns"])
            for row in block["rows"]:
                row["cells"] = (row["cells"] + [{"text": ""}] * width)[:width]
    return document


@FUZZ
@given(from_schema(schemas.STRUCTURED_PREVIEW).map(_one_cell_per_column))
def test_every_document_the_schema_allows_passes_the_checker_unchanged(document):
    # Given a document of the schema's shape, in text escaping leaves alone
    # When the checker reads it
    kept = checked_structured(copy.deepcopy(document), NO_LIMIT)
    # Then it keeps all of it, as it was
    assert kept == document


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=6,
)


def _positions(node: object) -> Iterator[tuple[Any, Any]]:
    """Every (container, key or index) of a JSON value."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield node, key
            yield from _positions(value)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield node, index
            yield from _positions(value)


@st.composite
def near_documents(draw: st.DrawFn) -> object:
    """A document of the schema's shape in any text, then up to three things changed in it:
    a field dropped, a value replaced by any JSON, a field or an item added."""
    document = draw(from_schema(schemas.STRUCTURED_PREVIEW, alphabet=st.characters()))
    for _ in range(draw(st.integers(0, 3))):
        positions = list(_positions(document))
        if not positions:
            break
        parent, key = draw(st.sampled_from(positions))
        change = draw(st.sampled_from(["drop", "replace", "add"]))
        if change == "drop":
            del parent[key]
        elif change == "replace":
            parent[key] = draw(JSON)
        elif isinstance(parent, dict):
            parent[draw(st.text(max_size=6))] = draw(JSON)
        else:
            parent.insert(key, draw(JSON))
    return draw(st.one_of(st.just(document), JSON))


@settings(FUZZ, max_examples=200)
@given(near_documents(), st.sampled_from([NO_LIMIT, 200]), st.booleans())
def test_whatever_the_checker_lets_through_validates(preview_schema, document, limit, again):
    # Given any input, near the shape or not, under a limit or over it
    try:
        # When the checker reads it (as a store keeps a document, or as the server reads a
        # kernel's again)
        kept = checked_structured(document, limit, escaped_once=again)
    except StructuredRefused:
        event("refused")
        return
    event("kept")
    # Then what it kept has the schema's shape, as JSON crosses into JavaScript
    if kept is not None:
        preview_schema.validate(json.loads(json.dumps(kept)))
