"""The ``sandbox`` policy for agent code: kernels agents start are sandboxed, their code runs
at once there and its changes wait as a change set; agent code in any other kernel is held."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from traitlets.config import Config

from jupyter_approvals.server.sandbox.provisioner import is_sandboxed

from .agent_client import APPROVALS_API, KernelSocket, add_agent, call

pytestmark = pytest.mark.timeout(120)


def server_config(**approvals) -> Config:
    return Config(
        {
            "ServerApp": {"jpserver_extensions": {"jupyter_approvals": True}},
            "ApprovalsServer": {"agent_code": "sandbox", **approvals},
        }
    )


@pytest.fixture
def jp_server_config(request):
    return request.param


async def start_kernel_as(jp_fetch, token: str, body: dict | None = None) -> str:
    status, _, model = await call(
        jp_fetch, "api", "kernels", method="POST", body=json.dumps(body or {}), token=token
    )
    assert status == 201, model
    return model["id"]


@pytest.mark.parametrize("jp_server_config", [server_config()], indirect=True)
@pytest.mark.parametrize("asked", [{}, {"name": "python3"}])
async def test_a_kernel_an_agent_starts_is_sandboxed_and_its_code_runs_at_once(
    sandboxed_kernelspec,
    jp_fetch,
    jp_serverapp,
    jp_http_port,
    jp_base_url,
    jp_root_dir,
    state_dir,
    asked,
):
    # Given the sandbox policy and an agent that asks for the default kernel or a plain one
    token = add_agent(state_dir, "bot")
    (Path(jp_root_dir) / "sales.csv").write_text("id\n1\n")
    kernel_id = await start_kernel_as(jp_fetch, token, asked)
    # Then the kernel it got runs in a sandbox
    assert is_sandboxed(jp_serverapp.kernel_manager, kernel_id)
    agent = await KernelSocket.open(jp_http_port, jp_base_url, kernel_id, token)
    try:
        # When the agent reads and writes in it, with no one approving anything
        read = await agent.execute("print(open('sales.csv').read(), end='')")
        wrote = await agent.execute("open('clean.csv', 'w').write('id\\n1\\n')")
    finally:
        agent.close()
    # Then both ran at once, and nothing is pending
    assert (read["reply"]["status"], read["stdout"]) == ("ok", "id\n1\n")
    assert wrote["reply"]["status"] == "ok"
    _, _, listing = await call(jp_fetch, APPROVALS_API, "pending")
    assert listing["pending"] == []
    # And the write waits as the kernel's change set, not in the project
    assert not (Path(jp_root_dir) / "clean.csv").exists()
    _, _, changes = await call(jp_fetch, APPROVALS_API, "changes")
    [change_set] = changes["change_sets"]
    assert (change_set["kernel_id"], change_set["counts"]) == (kernel_id, {"created": 1})


@pytest.mark.parametrize("jp_server_config", [server_config()], indirect=True)
async def test_agent_code_in_a_kernel_that_is_not_sandboxed_is_still_held(
    sandboxed_kernelspec, kernels, jp_fetch, jp_http_port, jp_base_url, state_dir
):
    # Given the sandbox policy and a person's own (unsandboxed) notebook kernel
    token = add_agent(state_dir, "bot")
    kernel = await kernels()
    agent = await KernelSocket.open(jp_http_port, jp_base_url, kernel.id, token)
    try:
        # When the agent sends code to it
        result = await agent.execute("open('x.txt', 'w').write('x')")
    finally:
        agent.close()
    # Then the code is held for a person, as with the ask policy
    assert result["reply"]["ename"] == "APPROVAL_PENDING"
    _, _, listing = await call(jp_fetch, APPROVALS_API, "pending")
    [held] = listing["pending"]
    assert (held["held_at"], held["agent"]) == ("server", "bot")


@pytest.mark.parametrize(
    "jp_server_config", [server_config(sandbox_bwrap="/nonexistent/bwrap")], indirect=True
)
async def test_where_the_sandbox_cannot_run_an_agents_kernel_starts_plain_and_code_is_held(
    sandboxed_kernelspec, jp_fetch, jp_serverapp, jp_http_port, jp_base_url, state_dir
):
    # Given the sandbox policy on a machine where bubblewrap cannot run
    token = add_agent(state_dir, "bot")
    # When an agent starts a kernel and sends code to it
    kernel_id = await start_kernel_as(jp_fetch, token)
    agent = await KernelSocket.open(jp_http_port, jp_base_url, kernel_id, token)
    try:
        result = await agent.execute("print('hi')")
    finally:
        agent.close()
    # Then the kernel is the plain one it asked for, and its code is held per cell
    assert not is_sandboxed(jp_serverapp.kernel_manager, kernel_id)
    assert result["reply"]["ename"] == "APPROVAL_PENDING"
