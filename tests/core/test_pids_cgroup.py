"""The pids cgroup a sandboxed kernel gets where the server runs as root, made in a folder
laid out as the cgroup v1 pids hierarchy is."""

from __future__ import annotations

import subprocess
from pathlib import Path

from jupyter_approvals.core.pids_cgroup import (
    entering,
    make_pids_cgroup,
    own_pids_cgroup,
    remove_pids_cgroup,
)


def own_cgroup_path() -> str:
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if "pids" in controllers.split(","):
            return path.lstrip("/")
    return ""


def hierarchy_like(tmp_path: Path) -> Path:
    """A folder holding this process's cgroup as the pids hierarchy would."""
    own = tmp_path / own_cgroup_path()
    own.mkdir(parents=True, exist_ok=True)
    (own / "cgroup.procs").write_text("")
    return tmp_path


def test_a_kernels_cgroup_is_made_below_the_servers_with_its_bound(tmp_path):
    # Given a writable pids hierarchy holding the server's cgroup
    hierarchy = hierarchy_like(tmp_path)
    # When a kernel's cgroup is made with a bound of 64
    cgroup = make_pids_cgroup("jpa-kernel", 64, hierarchy)
    # Then it is below the server's, with that bound
    assert cgroup is not None
    assert cgroup.parent == own_pids_cgroup(hierarchy)
    assert (cgroup / "pids.max").read_text() == "64"
    # And it goes when the kernel ended (cgroupfs removes its own files with the folder)
    (cgroup / "pids.max").unlink()
    remove_pids_cgroup(cgroup)
    assert not cgroup.exists()


def test_no_cgroup_where_the_hierarchy_is_not_there(tmp_path):
    # Given no pids hierarchy (cgroup v2 only, or not mounted)
    # Then none is made, and the command is left as it is
    assert make_pids_cgroup("jpa-kernel", 64, tmp_path / "absent") is None
    assert entering(None, ["bwrap", "x"]) == ["bwrap", "x"]


def test_the_command_moves_itself_into_the_cgroup_before_it_runs(tmp_path):
    # Given a kernel's cgroup folder
    cgroup = make_pids_cgroup("jpa-kernel", 64, hierarchy_like(tmp_path))
    assert cgroup is not None
    (cgroup / "cgroup.procs").write_text("")
    # When a command is run through it
    done = subprocess.run(
        entering(cgroup, ["/bin/sh", "-c", "echo $$"]), capture_output=True, text=True, check=True
    )
    # Then the process that ran it wrote its own id into the cgroup first (exec keeps it)
    assert (cgroup / "cgroup.procs").read_text().strip() == done.stdout.strip()
