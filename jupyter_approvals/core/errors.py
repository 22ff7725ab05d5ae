"""Every error jupyter-approvals raises, one class and one stable code per failure.

The code (``APPROVAL_*``) is the contract: agents and frontends match on it, so a code
is never renamed or reused. The human message may improve over time; the structured
``details`` carry what a program needs (ids, fingerprints, times) without parsing text.
Each class also says the HTTP status a server answers it with (``http_status``): one table,
here, for every route and every hold (docs/protocol.md 6 and 7).
"""

from __future__ import annotations

from typing import Any, ClassVar


class ApprovalError(Exception):
    """Base of all jupyter-approvals errors: nothing protected ran when one is raised."""

    code: ClassVar[str] = "APPROVAL_ERROR"
    #: The HTTP status a server answers this error with.
    http_status: int = 400

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = details

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form: ``{"code", "message", "details"}``."""
        return {"code": self.code, "message": self.message, "details": dict(self.details)}

    def to_response(self) -> dict[str, Any]:
        """The body a server answers it with: ``{"ok": false, "code", "message"}`` and the
        details beside them (docs/protocol.md 6)."""
        return {**self.details, "ok": False, "code": self.code, "message": self.message}

    @property
    def retry_after_s(self) -> float | None:
        """Seconds after which the same request may succeed (``details["retry_after_s"]``,
        answered as HTTP ``Retry-After`` too), or None when waiting would not help."""
        value = self.details.get("retry_after_s")
        return float(value) if isinstance(value, int | float) else None


class ApprovalEnded(ApprovalError):
    """The request ended without an approval that can be used: nothing ran, call again to ask."""

    http_status = 409


class ApprovalRefused(ApprovalError):
    """What was asked for, or the decision or approval offered, does not qualify: refused."""

    http_status = 409


class ApprovalProtocolError(ApprovalError):
    """A message did not follow the contract of docs/protocol.md (shape, ids, names)."""

    http_status = 400


class ApprovalUnavailable(ApprovalError):
    """Something the operation needs is missing or not answering; nothing was done."""

    http_status = 503


class ApprovalPending(ApprovalError):
    """The call needs a person's approval first; a request is waiting in the UI."""

    code = "APPROVAL_PENDING"
    http_status = 409


class ApprovalRejected(ApprovalEnded):
    """A person rejected the request; ``details["reason"]`` holds their reason."""

    code = "APPROVAL_REJECTED"


class ApprovalDismissed(ApprovalEnded):
    """The approval card was closed without a decision."""

    code = "APPROVAL_DISMISSED"


class ApprovalWithdrawn(ApprovalEnded):
    """The caller withdrew the request before anyone decided."""

    code = "APPROVAL_WITHDRAWN"


class ApprovalTimedOut(ApprovalEnded):
    """Nobody answered the request within the request timeout."""

    code = "APPROVAL_TIMED_OUT"


class ApprovalExpired(ApprovalEnded):
    """The approval was not used within its lifetime after the decision."""

    code = "APPROVAL_EXPIRED"


class ApprovalScopeMismatch(ApprovalRefused):
    """The approval names another action than the one being run."""

    code = "APPROVAL_SCOPE_MISMATCH"


class ApprovalFingerprintMismatch(ApprovalRefused):
    """The content about to run differs from the content that was approved or displayed."""

    code = "APPROVAL_FINGERPRINT_MISMATCH"


class ApprovalAutoAnswered(ApprovalEnded):
    """An answer came sooner than a person can read the card; it counts as no answer."""

    code = "APPROVAL_AUTO_ANSWERED"


class ApprovalNotFromFrontend(ApprovalRefused):
    """A decision arrived from kernel code, not from a frontend message."""

    code = "APPROVAL_NOT_FROM_FRONTEND"
    http_status = 403


class ApprovalTooLarge(ApprovalRefused):
    """A decision message or one of its fields is larger than the limit."""

    code = "APPROVAL_TOO_LARGE"
    http_status = 413


class ApprovalTooManyPending(ApprovalRefused):
    """The kernel already holds the maximum number of pending requests."""

    code = "APPROVAL_TOO_MANY_PENDING"
    http_status = 429


class ApprovalUnfingerprintable(ApprovalRefused):
    """A value has no defined fingerprint encoding; nothing guesses one."""

    code = "APPROVAL_UNFINGERPRINTABLE"
    http_status = 400


class ApprovalForkedProcess(ApprovalRefused):
    """An approval, or the run it allowed, used in a process forked from the kernel
    (``os.fork``, multiprocessing's fork start method): one approval runs once, in the kernel's
    own process. Nothing ran in the child."""

    code = "APPROVAL_FORKED_PROCESS"


class ApprovalUnsupportedArgument(ApprovalUnfingerprintable):
    """A value whose data the fingerprint cannot read itself, only through its own methods
    (an enum member whose mixed-in data differs from its value, a pandas extension array or
    index of another package's class): the card could show other data than the function
    receives, so nothing is asked. Pass plain data instead."""

    code = "APPROVAL_UNSUPPORTED_ARGUMENT"


class ApprovalRequired(ApprovalError):
    """A low-level writer was called outside an approved run of its action."""

    code = "APPROVAL_REQUIRED"
    http_status = 409


class ApprovalJournalInsideProject(ApprovalRefused):
    """The decision journal would live inside the project it protects."""

    code = "APPROVAL_JOURNAL_INSIDE_PROJECT"


class ApprovalJournalUnusable(ApprovalUnavailable, ValueError):
    """The journal's state directory is set to something unusable (a relative path)."""

    code = "APPROVAL_JOURNAL_UNUSABLE"


class ApprovalUnknownRequest(ApprovalProtocolError):
    """No request with that id exists in this kernel."""

    code = "APPROVAL_UNKNOWN_REQUEST"
    http_status = 404


class ApprovalAlreadyDecided(ApprovalRefused):
    """The request was already decided or ended; one decision per request."""

    code = "APPROVAL_ALREADY_DECIDED"


class ApprovalAlreadyUsed(ApprovalRefused):
    """The approval was already consumed by an earlier run."""

    code = "APPROVAL_ALREADY_USED"


class ApprovalNotIssued(ApprovalRefused):
    """The object offered as an approval was not issued by this kernel's store."""

    code = "APPROVAL_NOT_ISSUED"


class ApprovalMalformedDecision(ApprovalProtocolError):
    """A decision message lacks a field or has one of the wrong type or value."""

    code = "APPROVAL_MALFORMED_DECISION"


class ApprovalMalformedMessage(ApprovalProtocolError):
    """A comm message is not a JSON object with a known ``op``, or is too large to read."""

    code = "APPROVAL_MALFORMED_MESSAGE"


class ApprovalUnknownKernel(ApprovalProtocolError):
    """No running kernel has that id (REST API)."""

    code = "APPROVAL_UNKNOWN_KERNEL"
    http_status = 404


class ApprovalKernelUnavailable(ApprovalUnavailable):
    """The kernel did not answer in time, or has not loaded jupyter-approvals (REST API)."""

    code = "APPROVAL_KERNEL_UNAVAILABLE"
    http_status = 504


class ApprovalKernelBusy(ApprovalUnavailable):
    """The kernel runs a cell that does not await a decision; retry when it is idle (REST)."""

    code = "APPROVAL_KERNEL_BUSY"


class ApprovalCrossOrigin(ApprovalRefused):
    """A decision was posted from a page of another origin (REST API)."""

    code = "APPROVAL_CROSS_ORIGIN"
    http_status = 403


class ApprovalWaitUnsupported(ApprovalUnavailable):
    """``wait()`` cannot see a decision from here, so it refuses instead of hanging."""

    code = "APPROVAL_WAIT_UNSUPPORTED"


class ApprovalInvalidArgument(ApprovalRefused):
    """A protected operation was called with arguments it cannot run; nothing was asked or run."""

    code = "APPROVAL_INVALID_ARGUMENT"
    http_status = 400


class ApprovalInvalidPreview(ApprovalRefused):
    """A preview function returned a structured preview that does not have the documented
    shape (docs/protocol.md 4.1); no request was opened and nothing ran."""

    code = "APPROVAL_INVALID_PREVIEW"
    http_status = 400


class ApprovalMissingDependency(ApprovalUnavailable):
    """An optional package an operation needs is missing; ``details["extra"]`` names the extra."""

    code = "APPROVAL_MISSING_DEPENDENCY"


class ApprovalRedirected(ApprovalError):
    """An approved HTTP request was answered with a redirect; the new URL needs its own approval."""

    code = "APPROVAL_REDIRECTED"
    http_status = 409


class ApprovalAgentForbidden(ApprovalRefused):
    """An agent identity asked for something agents may never do (a route, a message, a path)."""

    code = "APPROVAL_AGENT_FORBIDDEN"
    http_status = 403


class ApprovalNotAPerson(ApprovalRefused):
    """A decision came with a credential that is not the person's own browser session: on
    JupyterHub, an API token (the server's, the kernel's, one from the token page, a
    service's) or another user's session (an admin's) without the deciding scope."""

    code = "APPROVAL_NOT_A_PERSON"
    http_status = 403


class ApprovalUnknownAgent(ApprovalProtocolError):
    """No agent of that name is registered."""

    code = "APPROVAL_UNKNOWN_AGENT"
    http_status = 404


class ApprovalAgentExists(ApprovalRefused):
    """An agent of that name is already registered; remove it first to issue a new token."""

    code = "APPROVAL_AGENT_EXISTS"


class ApprovalAgentRegistryUnreadable(ApprovalUnavailable):
    """The agent registry file cannot be read or parsed; every agent token is refused."""

    code = "APPROVAL_AGENT_REGISTRY_UNREADABLE"
    http_status = 500


class ApprovalAgentPaused(ApprovalRefused):
    """A person paused this agent: its token is refused until they resume it."""

    code = "APPROVAL_AGENT_PAUSED"
    http_status = 403


class ApprovalNoServerAuth(ApprovalUnavailable):
    """The Jupyter server runs without authentication, so agent identities mean nothing."""

    code = "APPROVAL_NO_SERVER_AUTH"
    http_status = 403


class ApprovalSourceEncoding(ApprovalRefused):
    """Python would read the text under another encoding than its preview shows (a PEP 263
    coding cookie): the change is refused rather than shown as something else."""

    code = "APPROVAL_SOURCE_ENCODING"


class ApprovalAgentOverLimit(ApprovalRefused):
    """An agent sent more, or faster, than the gate takes from one agent: nothing was done."""

    code = "APPROVAL_AGENT_OVER_LIMIT"
    http_status = 413

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message, **details)
        if "retry_after_s" in details:
            self.http_status = 429  # too fast, rather than too big


class ApprovalSandboxUnavailable(ApprovalUnavailable):
    """A sandboxed kernel cannot start here (no bubblewrap 0.11, no user namespaces, no
    overlayfs, or the server extension is not loaded): it is not started at all, never
    without its sandbox. ``details["reason"]`` says which."""

    code = "APPROVAL_SANDBOX_UNAVAILABLE"


class ApprovalSandboxLimit(ApprovalRefused):
    """A sandboxed kernel reached one of its sandbox's limits: its processes
    (``sandbox_processes``), the largest file it may write, or what its staged changes may
    hold in all (``sandbox_overlay_bytes``; the server then stops the kernel, and what it
    staged waits for a person as it is)."""

    code = "APPROVAL_SANDBOX_LIMIT"


class ApprovalSandboxNoNetwork(ApprovalRefused):
    """A protected operation that needs the network (an HTTP request, a git push, SQL on a
    database server) was called in a sandboxed kernel, which has none: nothing ran. The
    person runs it in a kernel of their own."""

    code = "APPROVAL_SANDBOX_NO_NETWORK"


class ApprovalChangeUnsupported(ApprovalRefused):
    """A sandboxed kernel's change that is shown but never applied: a symbolic link, a named
    pipe, a socket or a device it made in the project."""

    code = "APPROVAL_CHANGE_UNSUPPORTED"


def _collect_codes() -> dict[str, type[ApprovalError]]:
    found: dict[str, type[ApprovalError]] = {}
    pending: list[type[ApprovalError]] = [ApprovalError]
    while pending:
        cls = pending.pop()
        if "code" in vars(cls) and cls is not ApprovalError:  # families have no code of their own
            found[cls.code] = cls
        pending.extend(cls.__subclasses__())
    return found


#: Every stable code and its exception class.
ERROR_CODES: dict[str, type[ApprovalError]] = _collect_codes()


def http_status_of(code: str) -> int:
    """The HTTP status of the error with ``code`` (a code another party sent, such as a
    kernel's verdict); 400 for a code this version does not know."""
    cls = ERROR_CODES.get(code)
    return cls.http_status if cls is not None else ApprovalError.http_status
