"""``jupyter approvals doctor``: each check passing and failing, on real files.

Every test runs in an isolated Jupyter and IPython environment (``JUPYTER_CONFIG_PATH``,
``JUPYTER_PATH``, ``IPYTHONDIR`` and the state dir under ``tmp_path``), so nothing depends on
what this machine has installed. ``JUPYTER_CONFIG_PATH`` and ``JUPYTER_PATH`` come first in
Jupyter's search paths, so what a test writes there decides over any installed file.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

import pytest

from jupyter_approvals.core import policy
from jupyter_approvals.core.journal.writer import Journal
from jupyter_approvals.core.project import journal_path
from jupyter_approvals.doctor import (
    NOT_GUARANTEED,
    Check,
    DoctorReport,
    check_journal,
    check_labextension,
    check_limits,
    check_server_extension,
    check_widgets,
    effective_limits,
    run_checks,
)
from jupyter_approvals.doctor import _guarded as guarded

REPO = Path(__file__).resolve().parents[2]
SHIPPED_SERVER_CONFIG = REPO / "jupyter-config" / "server-config" / "jupyter_approvals.json"
posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX modes")


@dataclass
class Env:
    """The isolated directories of one test."""

    config: Path  # first entry of JUPYTER_CONFIG_PATH
    data: Path  # first entry of JUPYTER_PATH
    ipython: Path  # IPYTHONDIR
    state: Path  # JUPYTER_APPROVALS_STATE_DIR

    @property
    def profile(self) -> Path:
        path = self.ipython / "profile_default"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def install_labextension(self, name: str, version: str = "1.2.3") -> Path:
        directory = self.data / "labextensions" / name
        directory.mkdir(parents=True)
        (directory / "package.json").write_text(json.dumps({"name": name, "version": version}))
        return directory

    def server_config_d(self, filename: str, enabled: dict[str, bool]) -> Path:
        directory = self.config / "jupyter_server_config.d"
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / filename
        path.write_text(json.dumps({"ServerApp": {"jpserver_extensions": enabled}}))
        return path

    def disable_labextension(self, name: str) -> None:
        directory = self.config / "labconfig"
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "page_config.json").write_text(
            json.dumps({"disabledExtensions": {name: True}})
        )


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Env:
    for name in list(os.environ):
        if name.startswith("JUPYTER_APPROVALS_"):
            monkeypatch.delenv(name)
    isolated = Env(
        config=tmp_path / "jupyter-config",
        data=tmp_path / "jupyter-data",
        ipython=tmp_path / "ipython",
        state=tmp_path / "state",
    )
    for directory in (isolated.config, isolated.data, isolated.ipython):
        directory.mkdir()
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(isolated.config))
    monkeypatch.setenv("JUPYTER_PATH", str(isolated.data))
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "user-config"))
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "user-data"))
    monkeypatch.setenv("IPYTHONDIR", str(isolated.ipython))
    monkeypatch.setenv("JUPYTER_APPROVALS_STATE_DIR", str(isolated.state))
    return isolated


def mode_of(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


# -- server_extension -----------------------------------------------------------------------


def test_server_extension_enabled_by_the_shipped_config_file_is_ok(env: Env) -> None:
    # Given the file the package ships into jupyter_server_config.d, and nothing else
    target = env.config / "jupyter_server_config.d" / "jupyter_approvals.json"
    target.parent.mkdir()
    target.write_bytes(SHIPPED_SERVER_CONFIG.read_bytes())

    # When the server extension is checked
    check = check_server_extension()

    # Then it is enabled there, and the extension module loads
    assert check.ok, check.detail
    assert check.info["enabled"] is True
    assert check.info["enabled_in"] == str(env.config)
    assert check.info["loads"] is True
    assert "is enabled" in check.detail
    assert check.fix is None


def test_server_extension_disabled_in_a_higher_priority_file_fails(
    env: Env, tmp_path: Path
) -> None:
    # Given a low-priority directory enabling it and JUPYTER_CONFIG_PATH disabling it
    low = tmp_path / "low"
    (low / "jupyter_server_config.d").mkdir(parents=True)
    (low / "jupyter_server_config.d" / "jupyter_approvals.json").write_bytes(
        SHIPPED_SERVER_CONFIG.read_bytes()
    )
    env.server_config_d("off.json", {"jupyter_approvals": False})

    # When the server extension is checked over both directories
    check = check_server_extension(config_paths=[str(env.config), str(low)])

    # Then the higher-priority "disabled" wins, and the fix says how to enable it
    assert not check.ok
    assert check.info["enabled"] is False
    assert check.detail == f"jupyter_approvals is disabled for jupyter_server (in {env.config})."
    assert check.fix == "jupyter server extension enable jupyter_approvals"


def test_server_extension_disabled_in_jupyter_server_config_py_fails(env: Env) -> None:
    # Given config.d enabling it, but the server's Python config disabling it
    env.server_config_d("jupyter_approvals.json", {"jupyter_approvals": True})
    py_config = env.config / "jupyter_server_config.py"
    py_config.write_text('c.ServerApp.jpserver_extensions = {"jupyter_approvals": False}\n')

    # When the server extension is checked
    check = check_server_extension()

    # Then the traitlets setting wins, as it does in ServerApp, and the file is named
    assert not check.ok
    assert check.info["enabled"] is False
    assert check.info["enabled_in"] == str(py_config)
    assert "disabled" in check.detail


def test_server_extension_not_configured_anywhere_fails(tmp_path: Path) -> None:
    # Given configuration directories that do not mention it
    empty = tmp_path / "empty"
    empty.mkdir()

    # When the server extension is checked there
    check = check_server_extension(config_paths=[str(empty)])

    # Then it is reported as not enabled
    assert not check.ok
    assert check.info["enabled"] is False
    assert check.info["enabled_in"] is None
    assert "not enabled" in check.detail


def test_server_extension_that_does_not_import_fails_with_the_import_error(env: Env) -> None:
    # Given an enabled extension whose module is not installed
    env.server_config_d("ghost.json", {"jupyter_approvals_ghost": True})

    # When it is checked
    check = check_server_extension(name="jupyter_approvals_ghost")

    # Then the check fails and names the import error; nothing raised
    assert not check.ok
    assert check.info["enabled"] is True
    assert check.info["loads"] is False
    assert "does not load: ModuleNotFoundError" in check.detail
    assert "jupyter_approvals_ghost" in check.detail
    assert check.fix is not None
    assert "reinstall" in check.fix


# -- labextension ---------------------------------------------------------------------------


def test_labextension_installed_on_the_jupyter_path_is_ok(env: Env) -> None:
    # Given the prebuilt sidebar under JUPYTER_PATH
    where = env.install_labextension("jupyter-approvals", "0.1.0")

    # When the labextension is checked
    check = check_labextension()

    # Then it is found, with its version
    assert check.ok, check.detail
    assert check.info["path"] == str(where)
    assert check.info["version"] == "0.1.0"
    assert check.detail == f"jupyter-approvals 0.1.0 is installed in {where}"


def test_labextension_missing_fails_with_the_searched_paths(tmp_path: Path) -> None:
    # Given labextension directories without it
    empty = tmp_path / "labextensions"
    empty.mkdir()

    # When the labextension is checked there
    check = check_labextension(paths=[str(empty)])

    # Then it fails, says where it looked and how to install it
    assert not check.ok
    assert check.info["installed"] is False
    assert str(empty) in check.detail
    assert check.fix is not None
    assert "reinstall jupyter-approvals" in check.fix


def test_labextension_disabled_in_page_config_fails(env: Env) -> None:
    # Given the sidebar installed but disabled with `jupyter labextension disable`
    env.install_labextension("jupyter-approvals")
    env.disable_labextension("jupyter-approvals")

    # When the labextension is checked
    check = check_labextension()

    # Then it fails as disabled
    assert not check.ok
    assert check.info["disabled"] == ["jupyter-approvals"]
    assert "disabled" in check.detail
    assert check.fix == "jupyter labextension enable jupyter-approvals"


# -- widgets --------------------------------------------------------------------------------


def test_widgets_with_both_frontends_are_ok(env: Env) -> None:
    # Given the widget manager and anywidget frontends under JUPYTER_PATH
    env.install_labextension("@jupyter-widgets/jupyterlab-manager", "5.0.16")
    env.install_labextension("anywidget", "0.11.0")

    # When the widgets are checked
    check = check_widgets()

    # Then every part is present, with versions
    assert check.ok, check.detail
    assert check.info["labextensions"] == {
        "@jupyter-widgets/jupyterlab-manager": "5.0.16",
        "anywidget": "0.11.0",
    }
    assert check.info["packages"]["ipywidgets"].startswith("8.")
    assert check.info["packages"]["anywidget"]
    assert "ipywidgets 8." in check.detail


def test_widgets_without_frontends_fail(tmp_path: Path) -> None:
    # Given labextension directories without the widget frontends
    empty = tmp_path / "labextensions"
    empty.mkdir()

    # When the widgets are checked there
    check = check_widgets(paths=[str(empty)])

    # Then it fails and names both missing frontends
    assert not check.ok
    assert "@jupyter-widgets/jupyterlab-manager is not installed" in check.detail
    assert "anywidget is not installed" in check.detail
    assert check.info["labextensions"] == {
        "@jupyter-widgets/jupyterlab-manager": None,
        "anywidget": None,
    }


def test_widgets_with_a_disabled_manager_fail(env: Env) -> None:
    # Given both frontends, the widget manager disabled
    env.install_labextension("@jupyter-widgets/jupyterlab-manager")
    env.install_labextension("anywidget")
    env.disable_labextension("@jupyter-widgets/jupyterlab-manager")

    # When the widgets are checked
    check = check_widgets()

    # Then it fails as disabled
    assert not check.ok
    assert "@jupyter-widgets/jupyterlab-manager is disabled" in check.detail


# -- journal --------------------------------------------------------------------------------


def test_journal_not_written_yet_is_ok(env: Env, project: Path) -> None:
    # Given a state dir outside the project and no journal yet
    # When the journal is checked
    check = check_journal(project)

    # Then it is fine: the path is known, the file will be created on first use
    assert check.ok, check.detail
    assert check.info["path"] == str(journal_path(project, env.state))
    assert check.info["exists"] is False
    assert check.info["writable"] is True
    assert "does not exist yet" in check.detail


@posix_only
def test_journal_written_by_a_kernel_is_ok_with_private_modes(env: Env, project: Path) -> None:
    # Given a journal with one entry, written as a kernel writes it
    journal = Journal.for_project(project, env.state)
    assert journal.append("requested", request_id="r1", action="file.write")
    before = journal.path.read_bytes()

    # When the journal is checked
    check = check_journal(project)

    # Then it exists, is private and writable, and the check wrote nothing
    assert check.ok, check.detail
    assert check.info["exists"] is True
    assert check.info["dir_mode"] == "0700"
    assert check.info["file_mode"] == "0600"
    assert check.info["writable"] is True
    assert journal.path.read_bytes() == before


def test_journal_state_dir_inside_the_project_fails_with_the_fix(
    monkeypatch: pytest.MonkeyPatch, env: Env, project: Path
) -> None:
    # Given JUPYTER_APPROVALS_STATE_DIR pointing inside the project
    monkeypatch.setenv("JUPYTER_APPROVALS_STATE_DIR", str(project / ".approvals"))

    # When the journal is checked
    check = check_journal(project)

    # Then it fails with the refusal code and says to move the state dir
    assert not check.ok
    assert check.info["code"] == "APPROVAL_JOURNAL_INSIDE_PROJECT"
    assert "inside the project" in check.detail
    assert check.fix is not None
    assert "JUPYTER_APPROVALS_STATE_DIR" in check.fix


def test_journal_check_reads_the_given_environ(env: Env, project: Path) -> None:
    # Given a process environment that is fine, and an environ naming a relative state dir
    environ = {"JUPYTER_APPROVALS_STATE_DIR": "relative/state"}

    # When the journal is checked with that environ
    check = check_journal(project, environ)

    # Then the environ decides: the location is unusable
    assert not check.ok
    assert "must be an absolute path" in check.detail
    assert check.fix is not None
    assert "JUPYTER_APPROVALS_STATE_DIR" in check.fix


@posix_only
def test_journal_with_loose_modes_fails(env: Env, project: Path) -> None:
    # Given a journal whose directory and file others can read
    journal = Journal.for_project(project, env.state)
    assert journal.append("requested", request_id="r1")
    os.chmod(journal.path.parent, 0o755)
    os.chmod(journal.path, 0o644)

    # When the journal is checked
    check = check_journal(project)

    # Then both modes are reported, with the chmod that fixes them
    assert not check.ok
    assert f"{journal.path.parent} has mode 0755, expected 0700" in check.detail
    assert f"{journal.path} has mode 0644, expected 0600" in check.detail
    assert check.fix == f"chmod 700 {journal.path.parent}; chmod 600 {journal.path}"
    assert check.info["dir_mode"] == "0755"
    assert mode_of(journal.path) == 0o644  # the doctor only looks


@posix_only
def test_journal_that_is_a_symlink_fails(env: Env, project: Path, tmp_path: Path) -> None:
    # Given a symlink where the journal should be
    path = journal_path(project, env.state)
    path.parent.mkdir(parents=True, mode=0o700)
    os.chmod(path.parent, 0o700)
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_text("")
    path.symlink_to(elsewhere)

    # When the journal is checked
    check = check_journal(project)

    # Then it fails: the journal never follows symlinks
    assert not check.ok
    assert "symbolic link" in check.detail
    assert check.info["writable"] is False


# -- limits ---------------------------------------------------------------------------------


def test_limits_without_configuration_are_the_promises(env: Env) -> None:
    # Given an empty IPython directory
    # When the effective limits are read and checked
    effective = effective_limits()
    check = check_limits(effective)

    # Then the promised limits are in force and nothing is ignored
    assert check.ok, check.detail
    assert effective.limits == policy.Limits()
    assert effective.ignored == []
    assert check.detail == (
        "requests time out after 600 s, approvals expire 600 s after the decision, answers "
        "faster than 1 s do not count, at most 20 pending"
    )


def test_limits_looser_and_nan_settings_are_ignored_and_reported(env: Env) -> None:
    # Given a kernel profile that loosens one limit and sets another to NaN
    config = env.profile / "ipython_kernel_config.py"
    config.write_text(
        "c.ApprovalsConfig.request_timeout = 3600\n"
        "c.ApprovalsConfig.approval_ttl = float('nan')\n"
        "c.ApprovalsConfig.max_pending = 5\n"
    )

    # When the effective limits are read and checked
    effective = effective_limits()
    check = check_limits(effective)

    # Then the stricter one applies, the other two are ignored with why and where
    assert effective.limits.request_timeout_s == 600
    assert effective.limits.approval_ttl_s == 600
    assert effective.limits.max_pending == 5
    ignored = {item.setting: item.to_dict() for item in effective.ignored}
    assert ignored == {
        "ApprovalsConfig.request_timeout": {
            "name": "ApprovalsConfig.request_timeout",
            "why": "would loosen a promised limit; kept at the bound",
            "source": str(config),
            "requested": 3600,
            "applied": 600.0,
        },
        "ApprovalsConfig.approval_ttl": {
            "name": "ApprovalsConfig.approval_ttl",
            "why": "not a finite number",
            "source": str(config),
            "requested": "nan",
            "applied": 600.0,
        },
    }
    assert not check.ok
    assert "2 settings ignored: ApprovalsConfig.request_timeout" in check.detail
    assert "at most 5 pending" in check.detail


def test_limits_kernel_config_overrides_ipython_config(env: Env) -> None:
    # Given ipython_config.py and a stricter ipython_kernel_config.json in the profile
    (env.profile / "ipython_config.py").write_text("c.ApprovalsConfig.request_timeout = 300\n")
    kernel_json = env.profile / "ipython_kernel_config.json"
    kernel_json.write_text(json.dumps({"ApprovalsConfig": {"request_timeout": 120}}))

    # When the effective limits are read
    effective = effective_limits()

    # Then the kernel's own file wins, as in IPKernelApp, and both files were read
    assert effective.limits.request_timeout_s == 120
    assert check_limits(effective).ok
    assert effective.files == [str(env.profile / "ipython_config.py"), str(kernel_json)]


def test_limits_misspelt_and_invalid_settings_are_reported(env: Env) -> None:
    # Given a profile with a misspelt setting and a value of the wrong type
    config = env.profile / "ipython_kernel_config.py"
    config.write_text(
        "c.ApprovalsConfig.request_timout = 60\nc.ApprovalsConfig.max_pending = 'lots'\n"
    )

    # When the effective limits are read and checked
    effective = effective_limits()
    check = check_limits(effective)

    # Then the misspelling is ignored with a suggestion, the bad value is an error
    assert [item.to_dict() for item in effective.ignored] == [
        {
            "name": "ApprovalsConfig.request_timout",
            "why": "not a setting of ApprovalsConfig (did you mean request_timeout?)",
            "source": str(config),
            "requested": None,
            "applied": None,
        }
    ]
    assert len(effective.errors) == 1
    assert "ApprovalsConfig.max_pending" in effective.errors[0]
    assert "refuses to start approvals" in effective.errors[0]
    assert effective.limits.max_pending == 20
    assert not check.ok


def test_limits_config_file_that_fails_to_load_is_reported(env: Env) -> None:
    # Given a kernel config file that raises
    config = env.profile / "ipython_kernel_config.py"
    config.write_text("raise RuntimeError('broken on purpose')\n")

    # When the effective limits are read and checked
    effective = effective_limits()
    check = check_limits(effective)

    # Then the file and its error are named, and the promised limits are in force
    assert not check.ok
    assert effective.errors == [f"{config}: RuntimeError: broken on purpose"]
    assert effective.limits == policy.Limits()


def test_stray_jupyter_approvals_environment_variable_is_ignored(env: Env) -> None:
    # Given an environment with a made-up JUPYTER_APPROVALS_ variable besides the state dir
    environ = {
        "JUPYTER_APPROVALS_STATE_DIR": str(env.state),
        "JUPYTER_APPROVALS_AUTO_APPROVE": "1",
    }

    # When the effective limits are read with it
    effective = effective_limits(environ=environ)
    check = check_limits(effective)

    # Then only the stray variable is listed, without its value
    assert [item.to_dict() for item in effective.ignored] == [
        {
            "name": "JUPYTER_APPROVALS_AUTO_APPROVE",
            "why": "not a setting; limits are configured only through ApprovalsConfig and "
            "can only be tightened",
            "source": "environment",
            "requested": None,
            "applied": None,
        }
    ]
    assert not check.ok
    assert "JUPYTER_APPROVALS_AUTO_APPROVE" in check.detail


# -- the report -----------------------------------------------------------------------------


def test_report_has_the_documented_json_shape(env: Env, project: Path) -> None:
    # Given a looser setting in the profile
    (env.profile / "ipython_kernel_config.py").write_text(
        "c.ApprovalsConfig.min_answer_seconds = 0.1\n"
    )

    # When every check runs
    report = run_checks(project)
    data = report.to_dict()

    # Then the JSON has the keys of docs/protocol.md 6.4, in strict JSON
    json.dumps(data, allow_nan=False)
    assert {"ok", "checks", "limits", "ignored_settings", "not_guaranteed"} <= set(data)
    assert [c["name"] for c in data["checks"]] == [
        "server_extension",
        "labextension",
        "widgets",
        "journal",
        "limits",
        "sandbox",
        "hub_kernel_token",
    ]
    for check in data["checks"]:
        assert {"name", "ok", "detail", "fix"} <= set(check)
    assert data["limits"]["min_answer_s"] == 1.0
    assert data["limits"]["request_timeout_s"] == 600
    assert data["limits"]["max_pending"] == 20
    assert [item["name"] for item in data["ignored_settings"]] == [
        "ApprovalsConfig.min_answer_seconds"
    ]
    assert data["ok"] is False
    assert report.check("limits").ok is False
    assert data["project_root"] == str(project.resolve())


def test_report_is_ok_only_when_every_check_is() -> None:
    # Given reports with all checks passing, and with one failing
    passing = [Check("a", True, "fine"), Check("b", True, "fine")]
    failing = [*passing, Check("c", False, "broken", fix="do this")]

    # When they are built
    good = DoctorReport(passing, policy.Limits(), [], [])
    bad = DoctorReport(failing, policy.Limits(), [], [])

    # Then ok follows the checks
    assert good.ok is True
    assert good.to_dict()["ok"] is True
    assert bad.ok is False
    assert bad.to_dict()["checks"][2] == {
        "name": "c",
        "ok": False,
        "detail": "broken",
        "fix": "do this",
    }


def test_check_info_never_replaces_the_documented_keys() -> None:
    # Given a check whose info reuses a documented key
    check = Check("journal", True, "fine", info={"ok": False, "path": "/x"})

    # When it is turned into JSON
    data = check.to_dict()

    # Then the documented key keeps its value; other info is added
    assert data["ok"] is True
    assert data["path"] == "/x"


def test_a_check_that_breaks_is_reported_as_failed() -> None:
    # Given a check function that raises
    def broken() -> Check:
        raise OSError("disk on fire")

    # When it runs guarded
    check = guarded("journal", broken)

    # Then it is a failed check naming the error, not an exception
    assert not check.ok
    assert check.detail == "the check itself failed: OSError: disk on fire"


def test_not_guaranteed_is_short_and_covers_the_security_page() -> None:
    # Given the list shipped with the doctor
    # When it is read
    text = " ".join(NOT_GUARANTEED).lower()

    # Then it is a handful of short sentences covering docs/security.md's list
    assert 5 <= len(NOT_GUARANTEED) <= 12
    assert all(len(item) <= 200 and item.endswith(".") for item in NOT_GUARANTEED)
    for topic in ("sandbox", "connection key", "outside jupyter", "journal", "preview", "clock"):
        assert topic in text
