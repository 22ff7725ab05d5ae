"""What held agent code is: the fields of an ``execute_request`` that are fingerprinted, the
preview a person reads, and what the agent is told while its code waits or after it ended.

The hold itself (the server's stores, limits and journal) is :mod:`.hold`.
"""

from __future__ import annotations

from typing import Any

from ...core import errors
from ...core.fingerprint import short_fingerprint
from ...core.model import RequestInfo
from ...core.protocol import HELD_MIMETYPE
from ...previews.structured import STRUCTURED_BUDGET, StructuredPreview

ACTION = "kernel.execute"
#: Fields of an execute_request's content that change what runs; all are fingerprinted.
EXECUTE_FIELDS = (
    "code",
    "silent",
    "store_history",
    "user_expressions",
    "allow_stdin",
    "stop_on_error",
)


def execute_subject(content: dict[str, Any], kernel_id: str, agent: str) -> dict[str, Any]:
    """What the fingerprint of held code covers (docs/protocol.md 7.3)."""
    return {
        "action": ACTION,
        "kernel_id": kernel_id,
        "agent": agent,
        "request": {name: content.get(name) for name in EXECUTE_FIELDS},
    }


def held_preview(code: str, expressions: dict[str, str]) -> str:
    """All that will run: the code, then each user expression (evaluated after it).

    Unlike the ready operations' previews, this text is not rendered from the structured
    preview (:mod:`...previews.render_text` indents, wraps and shares its room between
    blocks): the person judges code to the character, so the text is the code itself, whole,
    and code too long to show whole is refused rather than cut."""
    if not expressions:
        return code
    lines = [code, "", "# and these user expressions, evaluated after the code:"]
    lines.extend(f"#   {name}: {text}" for name, text in expressions.items())
    return "\n".join(lines)


def held_structured(
    content: dict[str, Any],
    expressions: dict[str, str],
    agent: str,
    notebook_path: str | None,
    kernel_id: str,
    shown_chars: int,
) -> dict[str, Any]:
    """The structured preview of held code: who runs it where, then the code as Python.

    The text preview shows all of the code (it is refused past the preview limit), so the
    budget here grows with it (``shown_chars``: the text as shown): the code block is never
    cut by the budget, only lines past the line budget are shortened, as announced there.
    """
    code = str(content.get("code", ""))
    lines = code.count("\n") + 1
    # Each line costs the builder an entry and a string besides its (at most doubled) JSON.
    structured = StructuredPreview(STRUCTURED_BUDGET + 128 * lines + 2 * shown_chars)
    structured.count("lines of code", lines)
    if expressions:
        structured.count("user expressions", len(expressions))
    facts = [("agent", agent)]
    if notebook_path:
        facts.append(("path:notebook", notebook_path))
    facts.append(("kernel", kernel_id))
    facts.extend(
        (name, repr(content.get(name)))
        for name, default in (("silent", False), ("store_history", True), ("allow_stdin", False))
        if name in content and content.get(name) != default
    )
    # What runs first; who runs it where (the kernel's id, the message's flags) folds below.
    structured.code(code, "python", title="Code")
    if expressions:
        structured.facts(
            list(expressions.items()), title="User expressions, evaluated after the code"
        )
    structured.facts(facts, fold=True)
    return structured.document()


def summary_of(content: dict[str, Any], agent: str, notebook_path: str | None, kernel: str) -> str:
    """The one-line summary of held code: who runs it where, and the flags that change what a
    run leaves (no outputs, no history); allow_stdin only lets the code ask for input, so it
    is left to the folded facts."""
    where = notebook_path or f"kernel {kernel[:8]}"
    flags = [
        f"{name}={content.get(name)!r}"
        for name, default in (("silent", False), ("store_history", True))
        if name in content and content.get(name) != default
    ]
    extra = f" ({', '.join(flags)})" if flags else ""
    if content.get("user_expressions"):
        extra += f" with {len(content['user_expressions'])} user expressions"
    return f"Agent {agent} runs code in {where}{extra}"


def pending_text(info: RequestInfo) -> str:
    """What the agent reads when its code is held (meant to be unmistakable for an LLM)."""
    return (
        f"APPROVAL_PENDING: nothing ran. This code is held at the Jupyter server until a person "
        f"approves it (request {info.id}, fingerprint {short_fingerprint(info.fingerprint)}). "
        "Ask the person to review and approve it in the card under this cell or in JupyterLab's "
        "Approvals sidebar. After they "
        "approved, send exactly the same code again: it then runs once. Changed code is a new "
        "request and needs its own approval."
    )


def refusal_text(error: errors.ApprovalError) -> str:
    """What the agent reads when its request was refused or ended without approval."""
    message = error.message
    if "othing ran" not in message:
        message += " Nothing ran."
    return f"{error.code}: {message}"


def held_notice(info: RequestInfo) -> dict[str, Any]:
    """The ``display_data`` content answering held code (docs/protocol.md 7.3): the agent reads
    its text; the sidebar's extension renders its JSON as the request's card, from the server's
    own listing of it (the JSON only points at the request)."""
    return {
        "data": {
            HELD_MIMETYPE: {
                "version": 1,
                "request_id": info.id,
                "fingerprint": info.fingerprint,
                "agent": info.origin.agent,
            },
            "text/plain": pending_text(info),
        },
        "metadata": {},
        "transient": {},
    }
