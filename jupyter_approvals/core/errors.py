"""Every error jupyter-approvals raises, one class and one stable code per failure.

The code (``APPROVAL_*``) is the contract: agents and frontends match on it, so a code
is never renamed or reused. The human message may improve over time; the structured
``details`` carry what a program needs (ids, fingerprints, times) without parsing text.
"""

from __future__ import annotations

from typing import Any, ClassVar


class ApprovalError(Exception):
    """Base of all jupyter-approvals errors: nothing protected ran when one is raised."""

    code: ClassVar[str] = "APPROVAL_ERROR"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = details

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form: ``{"code", "message", "details"}``."""
        return {"code": self.code, "message": self.message, "details": dict(self.details)}


class ApprovalPending(ApprovalError):
    """The call needs a person's approval first; a request is waiting in the UI."""

    code = "APPROVAL_PENDING"


class ApprovalRejected(ApprovalError):
    """A person rejected the request; ``details["reason"]`` holds their reason."""

    code = "APPROVAL_REJECTED"


class ApprovalDismissed(ApprovalError):
    """The approval card was closed without a decision."""

    code = "APPROVAL_DISMISSED"


class ApprovalWithdrawn(ApprovalError):
    """The caller withdrew the request before anyone decided."""

    code = "APPROVAL_WITHDRAWN"


class ApprovalTimedOut(ApprovalError):
    """Nobody answered the request within the request timeout."""

    code = "APPROVAL_TIMED_OUT"


class ApprovalExpired(ApprovalError):
    """The approval was not used within its lifetime after the decision."""

    code = "APPROVAL_EXPIRED"


class ApprovalScopeMismatch(ApprovalError):
    """The approval names another action than the one being run."""

    code = "APPROVAL_SCOPE_MISMATCH"


class ApprovalFingerprintMismatch(ApprovalError):
    """The content about to run differs from the content that was approved or displayed."""

    code = "APPROVAL_FINGERPRINT_MISMATCH"


class ApprovalAutoAnswered(ApprovalError):
    """An answer came sooner than a person can read the card; it counts as no answer."""

    code = "APPROVAL_AUTO_ANSWERED"


class ApprovalNotFromFrontend(ApprovalError):
    """A decision arrived from kernel code, not from a frontend message."""

    code = "APPROVAL_NOT_FROM_FRONTEND"


class ApprovalTooLarge(ApprovalError):
    """A decision message or one of its fields is larger than the limit."""

    code = "APPROVAL_TOO_LARGE"


class ApprovalTooManyPending(ApprovalError):
    """The kernel already holds the maximum number of pending requests."""

    code = "APPROVAL_TOO_MANY_PENDING"


class ApprovalUnfingerprintable(ApprovalError):
    """A value has no defined fingerprint encoding; nothing guesses one."""

    code = "APPROVAL_UNFINGERPRINTABLE"


class ApprovalRequired(ApprovalError):
    """A low-level writer was called outside an approved run of its action."""

    code = "APPROVAL_REQUIRED"


class ApprovalJournalInsideProject(ApprovalError):
    """The decision journal would live inside the project it protects."""

    code = "APPROVAL_JOURNAL_INSIDE_PROJECT"


class ApprovalUnknownRequest(ApprovalError):
    """No request with that id exists in this kernel."""

    code = "APPROVAL_UNKNOWN_REQUEST"


class ApprovalAlreadyDecided(ApprovalError):
    """The request was already decided or ended; one decision per request."""

    code = "APPROVAL_ALREADY_DECIDED"


class ApprovalAlreadyUsed(ApprovalError):
    """The approval was already consumed by an earlier run."""

    code = "APPROVAL_ALREADY_USED"


class ApprovalNotIssued(ApprovalError):
    """The object offered as an approval was not issued by this kernel's store."""

    code = "APPROVAL_NOT_ISSUED"


class ApprovalMalformedDecision(ApprovalError):
    """A decision message lacks a field or has one of the wrong type or value."""

    code = "APPROVAL_MALFORMED_DECISION"


class ApprovalMalformedMessage(ApprovalError):
    """A comm message is not a JSON object with a known ``op``, or is too large to read."""

    code = "APPROVAL_MALFORMED_MESSAGE"


class ApprovalUnknownKernel(ApprovalError):
    """No running kernel has that id (REST API)."""

    code = "APPROVAL_UNKNOWN_KERNEL"


class ApprovalKernelUnavailable(ApprovalError):
    """The kernel did not answer in time, or has not loaded jupyter-approvals (REST API)."""

    code = "APPROVAL_KERNEL_UNAVAILABLE"


class ApprovalCrossOrigin(ApprovalError):
    """A decision was posted from a page of another origin (REST API)."""

    code = "APPROVAL_CROSS_ORIGIN"


class ApprovalWaitUnsupported(ApprovalError):
    """``wait()`` cannot see a decision from here, so it refuses instead of hanging."""

    code = "APPROVAL_WAIT_UNSUPPORTED"


class ApprovalInvalidArgument(ApprovalError):
    """A protected operation was called with arguments it cannot run; nothing was asked or run."""

    code = "APPROVAL_INVALID_ARGUMENT"


class ApprovalMissingDependency(ApprovalError):
    """An optional package an operation needs is missing; ``details["extra"]`` names the extra."""

    code = "APPROVAL_MISSING_DEPENDENCY"


class ApprovalRedirected(ApprovalError):
    """An approved HTTP request was answered with a redirect; the new URL needs its own approval."""

    code = "APPROVAL_REDIRECTED"


class ApprovalAgentForbidden(ApprovalError):
    """An agent identity asked for something agents may never do (a route, a message, a path)."""

    code = "APPROVAL_AGENT_FORBIDDEN"


class ApprovalUnknownAgent(ApprovalError):
    """No agent of that name is registered."""

    code = "APPROVAL_UNKNOWN_AGENT"


class ApprovalAgentExists(ApprovalError):
    """An agent of that name is already registered; remove it first to issue a new token."""

    code = "APPROVAL_AGENT_EXISTS"


class ApprovalAgentRegistryUnreadable(ApprovalError):
    """The agent registry file cannot be read or parsed; every agent token is refused."""

    code = "APPROVAL_AGENT_REGISTRY_UNREADABLE"


class ApprovalAgentPaused(ApprovalError):
    """A person paused this agent: its token is refused until they resume it."""

    code = "APPROVAL_AGENT_PAUSED"


class ApprovalNoServerAuth(ApprovalError):
    """The Jupyter server runs without authentication, so agent identities mean nothing."""

    code = "APPROVAL_NO_SERVER_AUTH"


def _collect_codes() -> dict[str, type[ApprovalError]]:
    found: dict[str, type[ApprovalError]] = {}
    pending: list[type[ApprovalError]] = [ApprovalError]
    while pending:
        cls = pending.pop()
        if cls is not ApprovalError:
            found[cls.code] = cls
        pending.extend(cls.__subclasses__())
    return found


#: Every stable code and its exception class.
ERROR_CODES: dict[str, type[ApprovalError]] = _collect_codes()


def error_for_code(code: str, message: str, **details: Any) -> ApprovalError:
    """Build the exception for a code (used to turn a recorded outcome into the caller's error)."""
    return ERROR_CODES.get(code, ApprovalError)(message, **details)
