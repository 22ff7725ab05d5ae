"""``jupyter approvals agent add | list | remove``: the agents allowed to connect to the server.

A token is printed once, when the agent is added; only its hash is kept (core/agents.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from typing import Any

from .core.agents import AgentRegistry, registry_path
from .core.errors import ApprovalError
from .core.project import default_state_dir

PROG = "jupyter approvals agent"
DEFAULT_URL = "http://localhost:8888/"
#: The jupyter-mcp-server release the project tests against (docs/decisions/0003).
MCP_SERVER_PACKAGE = "jupyter-mcp-server==2.2.4"


class AgentCliError(Exception):
    """A printable error of an ``agent`` command (exit 2)."""


def registry() -> AgentRegistry:
    """The registry of the state directory that the server resolves the same way."""
    try:
        return AgentRegistry(registry_path(default_state_dir(os.environ)))
    except ValueError as exc:
        raise AgentCliError(f"{PROG}: {exc}") from None


def running_server_url() -> str | None:
    """The URL of a Jupyter server of this user that is running now, if any."""
    try:
        from jupyter_server.serverapp import list_running_servers
    except ImportError:  # pragma: no cover - jupyter-server is a dependency
        return None
    for info in list_running_servers():
        url = info.get("url")
        if isinstance(url, str) and url:
            return url
    return None


#: How to get what the printed configuration starts, when this machine has neither.
MCP_LAUNCHER_HINT = (
    "The configuration starts jupyter-mcp-server with uvx, which this machine does not have. "
    "Install uv (pip install uv, or see https://docs.astral.sh/uv/), or install the server "
    f"itself (pip install '{MCP_SERVER_PACKAGE}') and run this again: the configuration then "
    "starts the jupyter-mcp-server it finds on PATH."
)


#: Seconds jupyter-mcp-server waits before it opens a closed kernel websocket again.
MCP_RECONNECT_S = 5


def mcp_launcher() -> tuple[str, list[str], bool]:
    """How the agent's MCP client starts jupyter-mcp-server: ``(command, args, found)``.

    ``uvx`` when it is on PATH (it fetches the pinned release), else an installed
    ``jupyter-mcp-server`` by its absolute path; else ``uvx``, and ``found`` is False.
    """
    uvx = shutil.which("uvx")
    if uvx is not None:
        return "uvx", [MCP_SERVER_PACKAGE], True
    installed = shutil.which("jupyter-mcp-server")
    if installed is not None:
        return installed, [], True
    return "uvx", [MCP_SERVER_PACKAGE], False


def mcp_config(name: str, token: str, url: str, launcher: tuple[str, list[str]]) -> dict[str, Any]:
    """A ready ``mcpServers`` entry for jupyter-mcp-server connecting as agent ``name``,
    started by ``launcher`` (a command and its arguments).

    jupyter-mcp-server 2.2.4 reads DOCUMENT_* and CODE_SANDBOX_* (falling back to
    JUPYTER_*); releases before it read RUNTIME_*. All name the same server and token.
    """
    command, args = launcher
    return {
        "mcpServers": {
            f"jupyter-{name}": {
                "command": command,
                "args": args,
                "env": {
                    "JUPYTER_URL": url,
                    "JUPYTER_TOKEN": token,
                    "DOCUMENT_URL": url,
                    "DOCUMENT_TOKEN": token,
                    "RUNTIME_URL": url,
                    "RUNTIME_TOKEN": token,
                    "CODE_SANDBOX_URL": url,
                    "CODE_SANDBOX_TOKEN": token,
                    # Else it starts a spare kernel at launch, before any notebook is used.
                    "START_NEW_CODE_SANDBOX": "false",
                    # A pause closes the agent's kernel websockets; without reconnecting (off
                    # by default) they stay dead after the person resumes it.
                    "RECONNECT_INTERVAL": str(MCP_RECONNECT_S),
                },
            }
        }
    }


def _add(args: argparse.Namespace) -> int:
    try:
        record, token = registry().add(args.name)
    except ApprovalError as exc:
        raise AgentCliError(f"{PROG} add: [{exc.code}] {exc.message}") from None
    if args.json:
        print(json.dumps({"name": record.name, "token": token}))
    elif args.mcp:
        url = args.url or running_server_url() or DEFAULT_URL
        command, launch_args, found = mcp_launcher()
        print(json.dumps(mcp_config(record.name, token, url, (command, launch_args)), indent=2))
        if not found:
            print(MCP_LAUNCHER_HINT, file=sys.stderr)
    else:
        print(f"Agent {record.name!r} added. Its token (shown only now, store it in the agent):")
        print(token)
        print(
            "Requests with this token are the agent: it never decides, and the code it sends "
            "waits for a person's approval."
        )
    return 0


def _list(args: argparse.Namespace) -> int:
    try:
        records = registry().records()
    except ApprovalError as exc:
        raise AgentCliError(f"{PROG} list: [{exc.code}] {exc.message}") from None
    if args.json:
        print(json.dumps({"agents": [r.public() for r in records.values()]}))
        return 0
    if not records:
        print("no agents registered (add one with 'jupyter approvals agent add NAME')")
        return 0
    width = max(len(name) for name in records)
    print(f"{'NAME'.ljust(width)}  {'STATE'.ljust(6)}  ADDED (UTC)")
    for record in records.values():
        state = "paused" if record.paused else "active"
        print(f"{record.name.ljust(width)}  {state.ljust(6)}  {record.created_at}")
    return 0


def _remove(args: argparse.Namespace) -> int:
    try:
        record = registry().remove(args.name)
    except ApprovalError as exc:
        raise AgentCliError(f"{PROG} remove: [{exc.code}] {exc.message}") from None
    print(
        f"Agent {record.name!r} removed: its token is refused from now on and a running server "
        "closes its open connections."
    )
    return 0


def _pause(args: argparse.Namespace) -> int:
    paused = args.agent_command == "pause"
    try:
        record = registry().set_paused(args.name, paused)
    except ApprovalError as exc:
        raise AgentCliError(f"{PROG} {args.agent_command}: [{exc.code}] {exc.message}") from None
    if paused:
        print(
            f"Agent {record.name!r} paused: a running server rejects its pending requests, closes "
            "its connections and refuses its token until 'jupyter approvals agent resume "
            f"{record.name}'."
        )
    else:
        print(f"Agent {record.name!r} resumed: its token works again.")
    return 0


def add_agent_commands(commands: Any) -> None:
    """Add the ``agent`` command and its subcommands to the CLI's subparsers."""
    agent = commands.add_parser("agent", help="register, list and remove agent identities")
    actions = agent.add_subparsers(dest="agent_command", metavar="ACTION", required=True)

    add = actions.add_parser("add", help="register an agent and print its token once")
    add.add_argument("name", help="the agent's name: lower-case letters, digits, - and _")
    shown = add.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help='print {"name": ..., "token": ...}')
    shown.add_argument(
        "--mcp", action="store_true", help="print a configuration for jupyter-mcp-server"
    )
    add.add_argument(
        "--url", help="server URL for --mcp (default: a running server's, else localhost:8888)"
    )
    add.set_defaults(run=_add)

    listing = actions.add_parser("list", help="list the registered agents")
    listing.add_argument("--json", action="store_true", help="print the list as JSON")
    listing.set_defaults(run=_list)

    remove = actions.add_parser("remove", help="remove an agent; its token stops working")
    remove.add_argument("name")
    remove.set_defaults(run=_remove)

    for action, text in (
        ("pause", "pause an agent: its pending requests rejected, its token refused"),
        ("resume", "let a paused agent in again"),
    ):
        parser = actions.add_parser(action, help=text)
        parser.add_argument("name")
        parser.set_defaults(run=_pause)
