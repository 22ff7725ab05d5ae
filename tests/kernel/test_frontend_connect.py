"""``jupyter_approvals.testing.connect``: attaching to a kernel someone else started."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from jupyter_client.connect import write_connection_file

from jupyter_approvals.testing import connect

pytestmark = pytest.mark.kernel

#: A kernel that takes two seconds before it starts: longer than the one second after which
#: jupyter_client calls a kernel it has no process of dead.
LATE_KERNEL = """
import runpy, sys, time
time.sleep(2)
sys.argv = ["ipykernel_launcher", "-f", sys.argv[1]]
runpy.run_module("ipykernel_launcher", run_name="__main__")
"""


def test_connect_waits_for_a_kernel_that_is_still_starting(tmp_path, project, kernel_env):
    # Given a kernel's connection file, and the kernel still starting
    connection_file = Path(tmp_path / "kernel-late.json")
    write_connection_file(str(connection_file))
    kernel = subprocess.Popen(
        [sys.executable, "-c", LATE_KERNEL, str(connection_file)],
        cwd=project,
        env={**os.environ, **kernel_env},
        stdin=subprocess.DEVNULL,
    )
    try:
        # When a frontend attaches to it meanwhile
        frontend = connect(connection_file)
        try:
            # Then it drives the kernel once it answers
            assert frontend.execute("print(6 * 7)").stdout == "42\n"
        finally:
            frontend.client.stop_channels()
        # And the kernel it did not start is left running
        assert kernel.poll() is None
    finally:
        kernel.terminate()
        kernel.wait(30)
