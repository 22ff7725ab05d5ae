"""The answer of GET pending, as a running server gives it, has the shape of
jupyter_approvals/core/schemas/pending.schema.json (docs/decisions/0007)."""

from __future__ import annotations

import json
from pathlib import Path

from jupyter_approvals.core import schemas
from jupyter_approvals.server.gate.held_files import held_file_write

from .test_rest import API


async def test_get_pending_validates_with_kernel_rows_and_held_ones(
    jp_fetch, kernels, approvals, jp_root_dir
):
    # Given a kernel where two ready operations ask, and, held by the server, an agent's
    # code and an agent's write of a file
    kernel = await kernels("sales/clean.ipynb")
    await kernel.run("import jupyter_approvals as ja\nfrom jupyter_approvals import ops")
    (Path(jp_root_dir) / "sales" / "notes.txt").write_text("total = 1\n")  # the kernel's cwd
    await kernel.pending_call("ops.delete_path('notes.txt')")
    await kernel.pending_call("ops.write_file('notes.txt', 'total = 2\\n')")
    hold = approvals.parts.gate.hold
    hold.screen({"code": "print(40 + 2)"}, kernel.id, "bot", "sales/clean.ipynb")
    write = held_file_write("sales/notes.txt", b"total = 3\n", Path(jp_root_dir), "bot")
    hold.screen_write(write, "bot")
    # When the sidebar asks
    response = await jp_fetch(API, "pending")
    answer = json.loads(response.body)
    # Then the answer and every row in it have the schema's shape
    errors = [
        f"{'/'.join(map(str, error.absolute_path))}: {error.message}"
        for error in schemas.validator(schemas.PENDING).iter_errors(answer)
    ]
    assert errors == []
    held_at = sorted(row["held_at"] for row in answer["pending"])
    assert held_at == ["kernel", "kernel", "server", "server"]
    assert all(row["structured"] is not None for row in answer["pending"])
