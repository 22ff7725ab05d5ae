"""An ACP agent that follows a script instead of a model (no model is reachable here).

Jupyter AI starts it as it starts Claude Code or Goose: a subprocess speaking JSON-RPC over
stdin and stdout. Each prompt's text is a JSON list of steps, each one call of the agent to
its client:

- ``{"ask": <tool call>, "options": [<permission options>]}``: ``session/request_permission``
- ``{"write": {"path", "content"}}``: ``fs/write_text_file``
- ``{"read": {"path"}}``: ``fs/read_text_file``
- ``{"terminal": {"command", "args", "cwd", "env"}}``: ``terminal/create``, then waits for
  its exit
- ``{"update": <tool call>}``: a ``tool_call`` session update (what agents send first)

Each step's answer (``result`` or ``error``) is appended as a JSON line to the file named by
the first argument, so the test reads what the client told the agent. A step may say
``"if_allowed": true``: it runs only when the last permission answer selected an allowing
option. Plain Python, no SDK: what goes over the wire is exactly what is written here.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

LOG = Path(sys.argv[1])
_next_id = 1000
_inbox: list[dict[str, Any]] = []


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def read() -> dict[str, Any] | None:
    if _inbox:
        return _inbox.pop(0)
    line = sys.stdin.readline()
    return json.loads(line) if line else None


def call(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Send a request to the client and wait for its answer (other messages wait their turn)."""
    global _next_id
    _next_id += 1
    send({"id": _next_id, "method": method, "params": params})
    held: list[dict[str, Any]] = []
    try:
        while True:
            message = read()
            if message is None:
                raise SystemExit(0)
            if message.get("id") == _next_id and "method" not in message:
                return message
            held.append(message)
    finally:
        _inbox.extend(held)


def record(step: int, answer: dict[str, Any]) -> None:
    with LOG.open("a", encoding="utf-8") as log:
        entry = {"step": step, "result": answer.get("result"), "error": answer.get("error")}
        log.write(json.dumps(entry) + "\n")


def allowed(answer: dict[str, Any], options: list[dict[str, Any]]) -> bool:
    outcome = (answer.get("result") or {}).get("outcome") or {}
    kinds = {o["optionId"]: o["kind"] for o in options}
    return outcome.get("outcome") == "selected" and kinds.get(outcome.get("optionId")) in (
        "allow_once",
        "allow_always",
    )


def run_steps(session_id: str, steps: list[dict[str, Any]]) -> None:
    last_allowed = False
    for number, step in enumerate(steps):
        if step.get("if_allowed") and not last_allowed:
            record(number, {"result": "skipped"})
            continue
        if "update" in step:
            update = {"sessionUpdate": "tool_call", **step["update"]}
            send(
                {"method": "session/update", "params": {"sessionId": session_id, "update": update}}
            )
            record(number, {"result": "sent"})
        elif "ask" in step:
            params = {"sessionId": session_id, "toolCall": step["ask"], "options": step["options"]}
            answer = call("session/request_permission", params)
            last_allowed = allowed(answer, step["options"])
            record(number, answer)
        elif "write" in step:
            answer = call("fs/write_text_file", {"sessionId": session_id, **step["write"]})
            record(number, answer)
        elif "read" in step:
            answer = call("fs/read_text_file", {"sessionId": session_id, **step["read"]})
            record(number, answer)
        elif "terminal" in step:
            answer = call("terminal/create", {"sessionId": session_id, **step["terminal"]})
            terminal = (answer.get("result") or {}).get("terminalId")
            if terminal:
                exit_status = call(
                    "terminal/wait_for_exit", {"sessionId": session_id, "terminalId": terminal}
                )
                answer = {"result": {"terminalId": terminal, "exit": exit_status.get("result")}}
            record(number, answer)


def main() -> None:
    sessions = 0
    while True:
        message = read()
        if message is None:
            return
        method, ident = message.get("method"), message.get("id")
        params = message.get("params") or {}
        if method == "initialize":
            send(
                {
                    "id": ident,
                    "result": {
                        "protocolVersion": 1,
                        "agentCapabilities": {"loadSession": False},
                        "authMethods": [],
                        "agentInfo": {"name": "scripted", "version": "1.0"},
                    },
                }
            )
        elif method == "session/new":
            sessions += 1
            send({"id": ident, "result": {"sessionId": f"scripted-{sessions}"}})
        elif method == "session/prompt":
            text = "".join(
                block.get("text", "")
                for block in params.get("prompt", [])
                if block.get("type") == "text"
            )
            try:
                steps = json.loads(text[text.index("SCRIPT:") + len("SCRIPT:") :])
            except ValueError:
                steps = []
            run_steps(params["sessionId"], steps)
            send({"id": ident, "result": {"stopReason": "end_turn"}})
        elif ident is not None:
            send({"id": ident, "result": None})


if __name__ == "__main__":
    main()
