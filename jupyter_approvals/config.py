"""The one configuration class of jupyter-approvals.

Kernel side it reads IPython's configuration (``ipython_kernel_config.py`` or
``c.ApprovalsConfig...`` in ``ipython_config.py``); the server extension reads the same class
from the server's configuration, to show the effective limits. Every limit can only be made
stricter than the promises in :mod:`jupyter_approvals.core.policy`; a looser value is ignored
and reported by ``%approvals`` and ``jupyter approvals doctor``.
"""

from __future__ import annotations

from traitlets import Float, Int
from traitlets.config import Configurable

from .core import policy

#: Each field of :class:`~jupyter_approvals.core.policy.Limits` and the trait that sets it.
TRAIT_OF_LIMIT: dict[str, str] = {
    "request_timeout_s": "request_timeout",
    "approval_ttl_s": "approval_ttl",
    "min_answer_s": "min_answer_seconds",
    "max_pending": "max_pending",
    "max_preview_chars": "max_preview_chars",
    "max_reason_chars": "max_reason_chars",
}


class ApprovalsConfig(Configurable):
    """Limits of approvals in a kernel. Values may only tighten the defaults."""

    request_timeout = Float(
        policy.MAX_REQUEST_TIMEOUT_S,
        help=(
            "Seconds a request waits for a person before it ends as APPROVAL_TIMED_OUT. "
            f"At most {policy.MAX_REQUEST_TIMEOUT_S:g}; a larger value is ignored."
        ),
    ).tag(config=True)

    approval_ttl = Float(
        policy.MAX_APPROVAL_TTL_S,
        help=(
            "Seconds an approval stays usable after the decision before it ends as "
            f"APPROVAL_EXPIRED. At most {policy.MAX_APPROVAL_TTL_S:g}; a larger value is ignored."
        ),
    ).tag(config=True)

    min_answer_seconds = Float(
        policy.MIN_ANSWER_S,
        help=(
            "An answer sooner than this after the card was shown is recorded as "
            f"APPROVAL_AUTO_ANSWERED and runs nothing. At least {policy.MIN_ANSWER_S:g}; a "
            "smaller value is ignored."
        ),
    ).tag(config=True)

    max_pending = Int(
        policy.MAX_PENDING,
        help=(
            "Most requests that may wait for a person in one kernel; past it calls are "
            f"refused with APPROVAL_TOO_MANY_PENDING. At most {policy.MAX_PENDING}."
        ),
    ).tag(config=True)

    max_preview_chars = Int(
        policy.MAX_PREVIEW_CHARS,
        help=(
            "Characters of a preview shown in the card and sent to frontends; the rest is "
            f"left out and counted. At most {policy.MAX_PREVIEW_CHARS}. The fingerprint always "
            "covers the whole content."
        ),
    ).tag(config=True)

    max_reason_chars = Int(
        policy.MAX_REASON_CHARS,
        help=(
            "Longest rejection reason accepted; a longer one is refused with APPROVAL_TOO_LARGE. "
            f"At most {policy.MAX_REASON_CHARS}."
        ),
    ).tag(config=True)

    def limits(self) -> tuple[policy.Limits, list[policy.IgnoredSetting]]:
        """The limits in force, and the configured values that were ignored as too loose."""
        return policy.tightened(
            **{field: getattr(self, trait) for field, trait in TRAIT_OF_LIMIT.items()}
        )
