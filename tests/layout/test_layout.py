"""The layout shows the architecture: layers that import only downwards, no import cycles,
modules small enough to read whole."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from .import_graph import PACKAGE, ROOT, cycles, external_imports, graph, module_files

#: Packages that make code a Jupyter integration: never imported by the pure layers.
JUPYTER = {
    "IPython",
    "anywidget",
    "comm",
    "ipykernel",
    "ipywidgets",
    "jupyter_client",
    "jupyter_core",
    "jupyter_server",
    "nbformat",
    "tornado",
    "traitlets",
}
#: Layer -> the layers of this package it may import (besides itself).
MAY_IMPORT = {
    "core": set(),
    "previews": {"core"},
    "doctor": {"core", "config", "_version"},
    "kernel": {"core", "config"},
    "ops": {"core", "previews", "kernel"},
    "server": {"core", "previews", "doctor", "config", "_version"},
}
#: The rooms of ``server/`` -> the rooms they may import (besides themselves): the handlers,
#: then the agent gate, then the server's mirror of the kernels and the sandbox of agents'
#: kernels (its provisioner, overlays and change sets); ``jupyter_ai`` (the bridge of Jupyter
#: AI's agents) stands beside the handlers; ``app`` wires them all with the
#: ``settings`` it is configured by, and ``api`` (where the REST API lives) is a fact every
#: room may name.
SERVER_ROOMS = {
    "app": {"settings", "rest", "gate", "mirror", "sandbox", "jupyter_ai", "api"},
    "jupyter_ai": {"rest", "gate", "mirror", "api"},
    "settings": {"gate", "api"},
    "rest": {"gate", "mirror", "sandbox", "api"},
    "gate": {"mirror", "sandbox", "api"},
    "mirror": {"api"},
    "sandbox": {"api"},
    "api": set(),
}
#: A module is one concept; past this many lines it is likely two.
MAX_LINES = 600


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_the_package_has_no_import_cycle():
    # Given every import of every module (lazy and TYPE_CHECKING ones too)
    # Then no module reaches itself again
    assert cycles(graph()) == []


def crossings(part_of: Callable[[str], str | None], part: str, allowed: set[str]) -> list[str]:
    """Imports from the modules in ``part`` to modules whose part is not ``allowed``
    (``part_of`` gives a module's part, or None for a module outside the division)."""
    return sorted(
        f"{module} -> {target}"
        for module, targets in graph().items()
        if part_of(module) == part
        for target in targets
        if part_of(target) is not None and part_of(target) not in allowed | {part}
    )


@pytest.mark.parametrize("layer", sorted(MAY_IMPORT))
def test_each_layer_imports_only_the_layers_below_it(layer):
    # Given the modules of one layer
    # Then none imports a layer it must not
    assert crossings(layer_of, layer, MAY_IMPORT[layer]) == []


def room_of(module: str) -> str:
    """The room of a module of ``server/`` (its first name below ``server``)."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 else ""


def test_the_server_has_its_rooms_and_nothing_else():
    # Given every module of the server layer
    rooms = {room_of(m) for m in module_files() if layer_of(m) == "server"}
    # Then each belongs to a room (the package's own __init__ aside)
    assert rooms - {""} == set(SERVER_ROOMS)


@pytest.mark.parametrize("room", sorted(SERVER_ROOMS))
def test_each_server_room_imports_only_the_rooms_after_it(room):
    # Given the modules of one room of server/
    def server_room(module: str) -> str | None:
        return room_of(module) if layer_of(module) == "server" else None

    # Then none imports a room before it
    assert crossings(server_room, room, SERVER_ROOMS[room]) == []


@pytest.mark.parametrize("layer", ["core", "previews"])
def test_the_pure_layers_import_nothing_of_jupyter(layer):
    files = module_files()
    found = sorted(
        f"{module}: {sorted(external_imports(path) & JUPYTER)}"
        for module, path in files.items()
        if layer_of(module) == layer and external_imports(path) & JUPYTER
    )
    assert found == []


def test_every_module_can_be_read_whole():
    # Given every module's length in lines
    too_long = []
    for path in module_files().values():
        lines = len(path.read_text().splitlines())
        if lines > MAX_LINES:
            too_long.append(f"{path.relative_to(ROOT.parent)}: {lines} lines (limit {MAX_LINES})")
    # Then none is past its limit
    assert too_long == []


def test_the_graph_sees_the_whole_package():
    # (a guard for the checks above: they read every module, and see real imports)
    files = module_files()
    assert f"{PACKAGE}.kernel.session" in files
    assert f"{PACKAGE}.core.store.approval_store" in graph()[f"{PACKAGE}.kernel.session"]
