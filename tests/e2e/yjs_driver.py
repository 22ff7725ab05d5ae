"""A Yjs client of a collaboration room, as an agent: one scripted change, one answer.

Run by the agent virtualenv's Python (pycrdt and websockets come with jupyter-collaboration).
Arguments: server URL, token, file path, and the change to make. For a notebook: ``source``
(edit the first cell's source), ``insert-cell`` (append a code cell) or ``trusted-script``
(trust the first cell and give it an HTML output with a script). For any other file, opened
as text: ``append:TEXT`` (add TEXT at the end). Prints one JSON line, ``{"closed": bool,
"code": int | None, "reason": str | None, "told": [...]}``: whether the server closed the
socket within three seconds of the change, and the JSON of the RAW messages it sent.
"""

from __future__ import annotations

import asyncio
import json
import sys
import urllib.request

from pycrdt import (
    Array,
    Decoder,
    Doc,
    Map,
    Text,
    create_sync_message,
    create_update_message,
    handle_sync_message,
)
from websockets.asyncio.client import connect

SCRIPT = "<script>window.__jpaAgentScriptRan = 1</script>"
TEXT = {"format": "text", "type": "file"}
#: jupyter-collaboration's message types: document sync, and RAW (JSON text).
SYNC, RAW = 0, 2


def change_notebook(doc: Doc, change: str) -> None:
    cell = doc.get("cells", type=Array)[0]
    if change == "insert-cell":
        doc.get("cells", type=Array).append(
            Map(
                {
                    "id": "agent-cell",
                    "cell_type": "code",
                    "source": Text("y = 2"),
                    "metadata": Map({}),
                    "outputs": Array([]),
                    "execution_count": None,
                }
            )
        )
    elif change == "source":
        source = cell["source"]
        if isinstance(source, Text):
            source += "\n# edited by the agent"
    else:
        cell["metadata"]["trusted"] = True
        cell["outputs"].append(
            Map(
                {
                    "output_type": "display_data",
                    "data": Map({"text/html": SCRIPT}),
                    "metadata": Map({}),
                }
            )
        )


def raw_json(message: bytes) -> object:
    decoder = Decoder(message)
    decoder.read_var_uint()
    return json.loads(decoder.read_var_string())


def open_session(url: str, token: str, path: str) -> dict:
    kind = {"format": "json", "type": "notebook"} if path.endswith(".ipynb") else TEXT
    request = urllib.request.Request(
        f"{url}/api/collaboration/session/{path}",
        data=json.dumps(kind).encode(),
        method="PUT",
        headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


async def main(url: str, token: str, path: str, change: str) -> None:
    session = open_session(url, token, path)
    room = f"{session['format']}:{session['type']}:{session['fileId']}"
    ws_url = (
        url.replace("http", "ws", 1)
        + f"/api/collaboration/room/{room}?sessionId={session['sessionId']}&token={token}"
    )
    doc = Doc()
    async with connect(ws_url) as socket:
        await socket.send(create_sync_message(doc))
        synced = False
        while not synced:
            message = await asyncio.wait_for(socket.recv(), 10)
            if message[0] == SYNC:
                reply = handle_sync_message(message[1:], doc)
                if reply is not None:
                    await socket.send(reply)
                synced = message[1] == 1  # the server's step 2: the document as it is
        updates: list[bytes] = []
        subscription = doc.observe(lambda event: updates.append(event.update))
        with doc.transaction():
            if change.startswith("append:"):
                source = doc.get("source", type=Text)
                source += change.removeprefix("append:")
            else:
                change_notebook(doc, change)
        doc.unobserve(subscription)
        for update in updates:
            await socket.send(create_update_message(update))
        told: list[object] = []
        closed = False
        try:
            while True:
                message = await asyncio.wait_for(socket.recv(), 3)
                if isinstance(message, bytes) and message[:1] == bytes([RAW]):
                    told.append(raw_json(message))
        except asyncio.TimeoutError:
            pass
        except Exception:
            closed = True
        answer = {
            "closed": closed,
            "code": socket.close_code if closed else None,
            "reason": socket.close_reason if closed else None,
            "told": told,
        }
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
