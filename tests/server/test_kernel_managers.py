"""The extension with either kernel manager jupyter_server 2 supports: the asynchronous one
(the default) and the deprecated synchronous ``MappingKernelManager``, which its own test suite
still runs. With the synchronous one, the server's link to a kernel once read the kernel with a
blocking client, and the whole server stopped answering until the kernel next printed."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from traitlets.config import Config

from jupyter_approvals.core.project import make_git_top_level
from jupyter_approvals.server.mirror.kernel_link import async_client
from tests.kernel.helpers import SETUP
from tests.server.test_pending_mirror import rows_until

pytestmark = [
    pytest.mark.kernel,
    # jupyter_server warns that the synchronous manager is deprecated: that is the point here
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::PendingDeprecationWarning"),
]

MANAGERS = {
    "sync": "jupyter_server.services.kernels.kernelmanager.MappingKernelManager",
    "async": "jupyter_server.services.kernels.kernelmanager.AsyncMappingKernelManager",
}


@pytest.fixture(params=sorted(MANAGERS))
def jp_server_config(request):
    return Config(
        {
            "ServerApp": {
                "jpserver_extensions": {"jupyter_approvals": True},
                "kernel_manager_class": MANAGERS[request.param],
            },
            "ApprovalsServer": {"kernel_timeout": 3.0},
        }
    )


async def test_the_server_answers_and_lists_requests_with_either_kernel_manager(
    jp_fetch, jp_serverapp, jp_root_dir
):
    # Given a server whose kernel manager is the configured one, and a kernel started in it
    make_git_top_level(jp_root_dir)
    response = await jp_fetch("api", "kernels", method="POST", body=json.dumps({}))
    kernel_id = json.loads(response.body)["id"]
    kernel = jp_serverapp.kernel_manager.get_kernel(kernel_id)
    client = async_client(kernel, kernel.session)
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=60)
        # When the kernel sits idle after a protected call asked, and the server is asked
        reply = await client.execute_interactive(
            SETUP + "\ntry:\n    save('x', 'x.txt')\nexcept ja.ApprovalPending:\n    pass",
            timeout=60,
        )
        assert reply["content"]["status"] == "ok"
        started = time.monotonic()
        status = await asyncio.wait_for(jp_fetch("api", "status"), timeout=10)
        # Then the server answers at once, and lists the request
        assert status.code == 200
        assert time.monotonic() - started < 10
        listing = await rows_until(jp_fetch, lambda found: found["pending"])
        [row] = listing["pending"]
        assert row["summary"] == "Overwrite x.txt"
        # And it keeps answering while the kernel stays silent (a blocking read of the
        # kernel's iopub would stop the server's loop, and this test with it, until timeout)
        await asyncio.sleep(1)
        status = await asyncio.wait_for(jp_fetch("api", "status"), timeout=10)
        assert status.code == 200
    finally:
        client.stop_channels()
        await jp_fetch("api", "kernels", kernel_id, method="DELETE")
