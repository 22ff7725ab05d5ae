"""A real MCP client session with jupyter-mcp-server over stdio, driven one tool call at a time.

Run by the agent virtualenv's Python (it has jupyter-mcp-server and the ``mcp`` client), not
by the test process. It reads one JSON object a line on stdin, ``{"tool": NAME, "arguments":
{...}}``, calls that tool in the one MCP session it keeps for its whole life, and writes one
JSON line per call: ``{"is_error": bool, "text": [str, ...]}``. An empty line ends it.

jupyter-mcp-server gets the environment a person's MCP client would give it: the ``env`` of
the entry ``jupyter approvals agent add --mcp`` prints (the server's URL, the agent's own
token, ...), passed here as JSON in ``MCP_SERVER_ENV``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

#: What jupyter-mcp-server gets of this process's environment besides its configuration.
PASSED_ON = ("PATH", "HOME")


async def serve(log_path: Path) -> None:
    params = StdioServerParameters(
        command=str(Path(sys.executable).with_name("jupyter-mcp-server")),
        args=["start", "--transport", "stdio"],
        env={
            "ALLOW_IMG_OUTPUT": "false",
            **{name: os.environ[name] for name in PASSED_ON if name in os.environ},
            **json.loads(os.environ["MCP_SERVER_ENV"]),
        },
    )
    loop = asyncio.get_running_loop()
    with log_path.open("w") as log:
        async with (
            stdio_client(params, errlog=log) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            print(json.dumps({"ready": True}), flush=True)
            while True:
                line = await loop.run_in_executor(None, sys.stdin.readline)
                if not line.strip():
                    return
                command = json.loads(line)
                result = await session.call_tool(command["tool"], command.get("arguments", {}))
                texts = [getattr(part, "text", repr(part)) for part in result.content]
                print(json.dumps({"is_error": bool(result.is_error), "text": texts}), flush=True)


if __name__ == "__main__":
    asyncio.run(serve(Path(sys.argv[1])))
