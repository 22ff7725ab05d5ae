"""hypothesis strategies read from the JSON Schemas of jupyter_approvals/core/schemas/.

:func:`from_schema` turns the subset of draft 2020-12 those schemas use (``$ref``,
``const``, ``enum``, ``type`` or none, ``anyOf``/``oneOf``, objects with ``required`` and
``properties``, arrays, integer bounds, string patterns) into a strategy of instances that
validate. The tests then need no third hand-written copy of the shapes: what is generated
follows the schema files.

Open objects (no ``additionalProperties: false``) get only their declared properties; strings
come from ``alphabet`` so a test can choose text that escaping leaves as it is.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from jupyter_approvals.core import schemas

#: Printable ASCII, a tab and a newline: text that make_visible leaves unchanged.
PLAIN_TEXT = "".join(chr(code) for code in range(0x20, 0x7F)) + "\t\n"


def from_schema(
    name: str, definition: str | None = None, alphabet: str | st.SearchStrategy[str] = PLAIN_TEXT
) -> st.SearchStrategy[Any]:
    """Instances of the schema file ``name`` (or of its ``$defs`` entry ``definition``)."""
    root = schemas.load(name)
    node = root if definition is None else root["$defs"][definition]
    return _Builder(alphabet).build(node, name)


class _Builder:
    def __init__(self, alphabet: str | st.SearchStrategy[str]) -> None:
        self.alphabet = alphabet

    def build(self, node: dict[str, Any], file: str) -> st.SearchStrategy[Any]:
        if "$ref" in node:
            return self._ref(node["$ref"], file)
        if "const" in node:
            return st.just(node["const"])
        if "enum" in node:
            return st.sampled_from(node["enum"])
        for key in ("anyOf", "oneOf"):
            if key in node:
                return st.one_of([self.build(each, file) for each in node[key]])
        kinds = node.get("type")
        if kinds is None and "allOf" not in node:  # no constraint: any JSON scalar will do
            return st.one_of(st.none(), st.booleans(), st.integers(), st.text(self.alphabet))
        if isinstance(kinds, list):
            return st.one_of([self.build({**node, "type": kind}, file) for kind in kinds])
        if kinds == "object":
            return self._object(node, file)
        if kinds == "array":
            return st.lists(self.build(node["items"], file), max_size=3)
        if kinds == "string":
            if "pattern" in node:
                return st.from_regex(node["pattern"].strip("^$"), fullmatch=True)
            return st.text(self.alphabet, max_size=12)
        if kinds == "integer":
            return st.integers(node.get("minimum"), node.get("maximum"))
        if kinds == "boolean":
            return st.booleans()
        if kinds == "null":
            return st.none()
        raise NotImplementedError(f"no strategy for {node}")

    def _ref(self, ref: str, file: str) -> st.SearchStrategy[Any]:
        target, _, pointer = ref.partition("#")
        target = target or file
        node: dict[str, Any] = schemas.load(target)
        for part in pointer.strip("/").split("/") if pointer else []:
            node = node[part]
        return st.deferred(lambda: self.build(node, target))

    def _object(self, node: dict[str, Any], file: str) -> st.SearchStrategy[dict[str, Any]]:
        properties = node.get("properties", {})
        required = set(node.get("required", ()))
        return st.fixed_dictionaries(
            {key: self.build(value, file) for key, value in properties.items() if key in required},
            optional={
                key: self.build(value, file)
                for key, value in properties.items()
                if key not in required
            },
        )
