"""Wrapping the contents manager changes nothing for anyone but agents: a wrapped method is a
coroutine function exactly when the manager's own is, so jupyter_server's own callers (the
preferred_dir check asks inspect whether to await) keep working."""

from __future__ import annotations

import inspect
import logging
from pathlib import Path

import pytest
from jupyter_server.services.contents.filemanager import (
    AsyncFileContentsManager,
    FileContentsManager,
)
from traitlets import TraitError

from jupyter_approvals.server.gate.contents import ContentsHold


@pytest.mark.parametrize("manager_class", [FileContentsManager, AsyncFileContentsManager])
def test_the_wrapped_manager_keeps_its_methods_kinds_and_checks(tmp_path: Path, manager_class):
    # Given a contents manager of either kind, wrapped by the gate
    (tmp_path / "data").mkdir()
    manager = manager_class(root_dir=str(tmp_path))
    wrapped = [*ContentsHold.HOLD_POINTS, *ContentsHold.CHECKED]
    own = {name: inspect.iscoroutinefunction(getattr(manager, name)) for name in wrapped}
    ContentsHold(None, tmp_path, list, logging.getLogger("test")).install(manager)
    # Then each wrapped method is awaited exactly when the manager's own was
    for name, was_coroutine in own.items():
        assert getattr(manager, name).jupyter_approvals_wrapped
        assert inspect.iscoroutinefunction(getattr(manager, name)) == was_coroutine, name
    # And jupyter_server's own check of preferred_dir still tells a folder from a missing one
    manager.preferred_dir = "data"
    with pytest.raises(TraitError, match="not found"):
        manager.preferred_dir = "missing"
