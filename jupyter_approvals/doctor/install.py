"""Checks of what is installed: the server extension, the sidebar, the widgets frontend.

Each check reads the same configuration and search paths as Jupyter itself
(``jupyter_core.paths``; jupyter_server's ``ExtensionConfigManager``, which decides what
``jupyter server extension list`` shows), from the process environment as Jupyter does.
Each takes the paths as optional arguments so callers (and tests) can point it elsewhere.
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from jupyter_core.paths import jupyter_config_dir, jupyter_config_path, jupyter_path

from .config_files import load_config_files
from .report import Check

#: The import name jupyter_server enables, and the labextension name JupyterLab loads.
SERVER_EXTENSION = "jupyter_approvals"
LABEXTENSION = "jupyter-approvals"
WIDGETS_MANAGER = "@jupyter-widgets/jupyterlab-manager"
ANYWIDGET_LABEXTENSION = "anywidget"

_SERVER_SECTION = "jupyter_server_config"


def server_config_paths() -> list[str]:
    """Where jupyter_server looks for its configuration (``JupyterApp.config_file_paths``)."""
    paths = jupyter_config_path()
    if jupyter_config_dir() not in paths:
        paths.insert(0, jupyter_config_dir())
    return paths


def labextension_paths() -> list[str]:
    """Where JupyterLab looks for prebuilt extensions, highest priority first."""
    return jupyter_path("labextensions")


# -- server extension ---------------------------------------------------------------------


def _enabled_in_config_d(name: str, paths: Sequence[str]) -> tuple[bool | None, str | None]:
    """``jpserver_extensions[name]`` from the JSON config (``*_config.d`` included), and where.

    This is how ``ServerApp.find_server_extensions`` and ``jupyter server extension list``
    read it: jupyter_server's ``ExtensionConfigManager`` merges every directory, highest
    priority last.
    """
    from jupyter_server.config_manager import BaseJSONConfigManager
    from jupyter_server.extension.config import ExtensionConfigManager

    manager = ExtensionConfigManager(read_config_path=list(paths))
    merged = manager.get_jpserver_extensions()  # type: ignore[no-untyped-call]
    if name not in merged:
        return None, None
    source = None
    for directory in reversed(list(paths)):
        data = BaseJSONConfigManager(config_dir=directory).get(_SERVER_SECTION)
        if name in data.get("ServerApp", {}).get("jpserver_extensions", {}):
            source = directory
    return bool(merged[name]), source


def _enabled_in_traitlets_config(
    name: str, paths: Sequence[str]
) -> tuple[bool | None, str | None, list[str]]:
    """``c.ServerApp.jpserver_extensions[name]`` from the server's own config files.

    Set there (``jupyter_server_config.py``, say), it wins over the ``config.d`` files.
    """
    loaded = load_config_files(("jupyter_config", _SERVER_SECTION), paths)
    # A later file's jpserver_extensions replaces an earlier one's whole dict (Config.merge).
    source = loaded.source_of("ServerApp", "jpserver_extensions")
    if source is None:
        return None, None, loaded.errors
    extensions = loaded.config["ServerApp"]["jpserver_extensions"]
    if not isinstance(extensions, Mapping) or name not in extensions:
        return None, None, loaded.errors
    return bool(extensions[name]), source, loaded.errors


def _load_problem(name: str) -> tuple[str | None, str]:
    """Why the server extension would not load (None if it loads), and its version."""
    try:
        module = importlib.import_module(name)
        points = module._jupyter_server_extension_points()
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}", ""
    try:
        from jupyter_server.extension.manager import ExtensionPackage

        package = ExtensionPackage(name=name, enabled=True)  # type: ignore[no-untyped-call]
        if not package.validate():  # type: ignore[no-untyped-call]
            return "jupyter_server finds no load function in its extension points", ""
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}", ""
    if not points:
        return "it declares no extension points", ""
    return None, str(getattr(module, "__version__", ""))


def check_server_extension(
    config_paths: Sequence[str] | None = None, name: str = SERVER_EXTENSION
) -> Check:
    """The server extension is enabled for jupyter_server, and it loads."""
    paths = server_config_paths() if config_paths is None else list(config_paths)
    enabled, source = _enabled_in_config_d(name, paths)
    py_enabled, py_source, errors = _enabled_in_traitlets_config(name, paths)
    if py_enabled is not None:
        enabled, source = py_enabled, py_source
    problem, version = _load_problem(name)
    info: dict[str, Any] = {
        "enabled": bool(enabled),
        "enabled_in": source,
        "loads": problem is None,
        "version": version or None,
        "config_errors": errors,
    }
    label = f"{name} {version}".strip()
    fix_enable = f"jupyter server extension enable {name}"
    # Never by name: jupyter-approvals is on no package index, and whoever registers the name
    # there would be installed.
    fix_install = (
        "reinstall jupyter-approvals from your clone of it "
        "(pip install --force-reinstall /path/to/your/clone/of/jupyter-approvals)"
    )
    if enabled and problem is None:
        return Check(
            "server_extension", True, f"{label} is enabled (in {source}) and loads", info=info
        )
    if enabled is None:
        state = f"{name} is not enabled for jupyter_server: no configuration file enables it"
    elif not enabled:
        state = f"{name} is disabled for jupyter_server (in {source})"
    else:
        state = f"{name} is enabled (in {source})"
    if problem is None:
        return Check("server_extension", False, f"{state}.", fix=fix_enable, info=info)
    detail = f"{state}, but it does not load: {problem}"
    fix = fix_install if enabled else f"{fix_install}, then {fix_enable}"
    return Check("server_extension", False, detail, fix=fix, info=info)


# -- labextensions -------------------------------------------------------------------------


def find_labextension(name: str, paths: Sequence[str]) -> tuple[str, str] | None:
    """``(directory, version)`` of the first installed prebuilt extension ``name``, or None."""
    for directory in paths:
        package_json = Path(directory, *name.split("/"), "package.json")
        if not package_json.is_file():
            continue
        try:
            data = json.loads(package_json.read_text(encoding="utf-8"))
            version = str(data.get("version", "")) if isinstance(data, dict) else ""
        except (OSError, ValueError):
            version = ""
        return str(package_json.parent), version
    return None


def disabled_labextensions(config_paths: Sequence[str] | None = None) -> dict[str, bool]:
    """JupyterLab's ``disabledExtensions`` from ``labconfig/page_config.json``, merged.

    ``jupyter labextension disable`` writes it; a list there means every item is disabled.
    """
    from jupyter_server.services.config.manager import ConfigManager

    paths = server_config_paths() if config_paths is None else list(config_paths)
    manager = ConfigManager(read_config_path=[os.path.join(p, "labconfig") for p in paths])
    page_config = manager.get("page_config")  # type: ignore[no-untyped-call]
    disabled = page_config.get("disabledExtensions", {})
    if isinstance(disabled, list):
        return {str(item): True for item in disabled}
    if isinstance(disabled, dict):
        return {str(key): bool(value) for key, value in disabled.items()}
    return {}


def _disabled_parts(name: str, disabled: Mapping[str, bool]) -> list[str]:
    """``name`` itself, or any of its plugins (``name:plugin``), where disabled."""
    return sorted(k for k, v in disabled.items() if v and (k == name or k.startswith(name + ":")))


def check_labextension(
    paths: Sequence[str] | None = None,
    config_paths: Sequence[str] | None = None,
    name: str = LABEXTENSION,
) -> Check:
    """The prebuilt JupyterLab sidebar is installed, and not disabled."""
    search = labextension_paths() if paths is None else list(paths)
    found = find_labextension(name, search)
    if found is None:
        return Check(
            "labextension",
            False,
            f"the JupyterLab extension {name} is not installed (looked in {', '.join(search)})",
            fix=(
                "reinstall jupyter-approvals, whose wheel ships the prebuilt extension; from a "
                "source checkout, build it and run `jupyter labextension develop --overwrite .`"
            ),
            info={"installed": False, "searched": search},
        )
    where, version = found
    off = _disabled_parts(name, disabled_labextensions(config_paths))
    info = {"installed": True, "path": where, "version": version or None, "disabled": off}
    label = f"{name} {version}".strip()
    if off:
        return Check(
            "labextension",
            False,
            f"{label} is installed in {where} but disabled: {', '.join(off)}",
            fix=f"jupyter labextension enable {name}",
            info=info,
        )
    return Check("labextension", True, f"{label} is installed in {where}", info=info)


# -- widgets -------------------------------------------------------------------------------


def _distribution_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _major(version: str) -> int:
    head = version.split(".", 1)[0]
    return int(head) if head.isdigit() else 0


def _listing(versions: Mapping[str, str | None]) -> str:
    return ", ".join(f"{name} {version or 'missing'}" for name, version in versions.items())


def check_widgets(
    paths: Sequence[str] | None = None, config_paths: Sequence[str] | None = None
) -> Check:
    """ipywidgets 8 and anywidget are installed, with their JupyterLab frontends."""
    search = labextension_paths() if paths is None else list(paths)
    packages = {name: _distribution_version(name) for name in ("ipywidgets", "anywidget")}
    problems = [f"{pkg} is not installed" for pkg, v in packages.items() if v is None]
    ipywidgets = packages["ipywidgets"]
    if ipywidgets is not None and _major(ipywidgets) < 8:
        problems.append(f"ipywidgets {ipywidgets} is older than 8")
    disabled = disabled_labextensions(config_paths)
    frontends: dict[str, str | None] = {}
    for ext in (WIDGETS_MANAGER, ANYWIDGET_LABEXTENSION):
        found = find_labextension(ext, search)
        frontends[ext] = found[1] if found else None
        if found is None:
            problems.append(f"the JupyterLab extension {ext} is not installed")
        elif off := _disabled_parts(ext, disabled):
            problems.append(f"the JupyterLab extension {ext} is disabled: {', '.join(off)}")
    listed = f"{_listing(packages)}; labextensions {_listing(frontends)}"
    info = {"packages": packages, "labextensions": frontends}
    if problems:
        return Check(
            "widgets",
            False,
            f"{'; '.join(problems)} ({listed}); the approval card cannot be shown",
            fix="pip install 'ipywidgets>=8' 'anywidget>=0.9' jupyterlab_widgets, then "
            "enable any disabled extension with `jupyter labextension enable`",
            info=info,
        )
    return Check("widgets", True, listed, info=info)
