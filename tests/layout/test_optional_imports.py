"""The server extension and the kernel library load without the optional packages.

numpy, pandas and SQLAlchemy are extras (``tables``, ``sql``): code that needs them imports
them when it runs. An import at module level would make the extension fail to load where they
are missing (a clean install, the oldest supported versions), which only the slow wheel and
oldest-version tests would notice.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

OPTIONAL = ("numpy", "pandas", "pyarrow", "sqlalchemy")


@pytest.mark.parametrize(
    "module",
    [
        "jupyter_approvals",
        "jupyter_approvals.server.app",
        "jupyter_approvals.kernel.gate",
        "jupyter_approvals.doctor",
        "jupyter_approvals.cli",
    ],
)
def test_a_module_loads_without_the_optional_packages(module):
    # Given a Python in which the optional packages cannot be imported
    code = f"import sys\nfor name in {OPTIONAL!r}:\n    sys.modules[name] = None\nimport {module}\n"
    # When the module is imported
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    # Then it loads
    assert done.returncode == 0, done.stderr[-2000:]
