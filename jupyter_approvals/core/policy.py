"""The time and size limits of approvals, and the rule that configuration only tightens them.

The ceilings here are promises made to the person approving (docs/security.md): a request
nobody answers ends after ten minutes, an approval nobody uses ends ten minutes after the
decision, and an answer faster than a second is not a person's answer. Configuration can make
each of these stricter. A looser value is ignored and reported, never applied.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from typing import Any, Final, Protocol

#: A pending request that nobody answers within this many seconds times out.
MAX_REQUEST_TIMEOUT_S = 600.0
#: An approval that is not used within this many seconds of the decision expires.
MAX_APPROVAL_TTL_S = 600.0
#: An answer sooner than this many seconds after the card was shown is auto-answered.
MIN_ANSWER_S = 1.0
#: The reading floor can be raised up to this many seconds, no further.
MIN_ANSWER_CEILING_S = 60.0
#: At most this many requests may be pending in one kernel at once.
MAX_PENDING = 20
#: Previews are cut to this many characters in the card and in comm messages.
MAX_PREVIEW_CHARS = 20_000
#: A structured preview's JSON may use this many characters; a longer one is not shown.
MAX_STRUCTURED_CHARS = 64_000
#: A summary line is cut to this many characters.
MAX_SUMMARY_CHARS = 500
#: A rejection reason longer than this is refused as too large.
MAX_REASON_CHARS = 2_000
#: Ended requests kept in memory so the caller can still be told how they ended.
MAX_ENDED_KEPT = 200


@dataclass(frozen=True)
class Limits:
    """The limits one store enforces. Build it with :func:`tightened` from configuration."""

    request_timeout_s: float = MAX_REQUEST_TIMEOUT_S
    approval_ttl_s: float = MAX_APPROVAL_TTL_S
    min_answer_s: float = MIN_ANSWER_S
    max_pending: int = MAX_PENDING
    max_preview_chars: int = MAX_PREVIEW_CHARS
    max_structured_chars: int = MAX_STRUCTURED_CHARS
    max_summary_chars: int = MAX_SUMMARY_CHARS
    max_reason_chars: int = MAX_REASON_CHARS
    max_ended_kept: int = MAX_ENDED_KEPT

    @property
    def min_answer_ms(self) -> int:
        """The reading floor in whole milliseconds, as frontends are told it."""
        return round(self.min_answer_s * 1000)


@dataclass(frozen=True)
class IgnoredSetting:
    """A configured value that would have loosened a limit, and why it was not applied."""

    name: str
    requested: float
    applied: float
    why: str


# For each limit: which direction is stricter, and the bound it may never cross.
_SMALLER_IS_STRICTER = {
    "request_timeout_s": (True, MAX_REQUEST_TIMEOUT_S),
    "approval_ttl_s": (True, MAX_APPROVAL_TTL_S),
    "min_answer_s": (False, MIN_ANSWER_S),
    "max_pending": (True, MAX_PENDING),
    "max_preview_chars": (True, MAX_PREVIEW_CHARS),
    "max_structured_chars": (True, MAX_STRUCTURED_CHARS),
    "max_summary_chars": (True, MAX_SUMMARY_CHARS),
    "max_reason_chars": (True, MAX_REASON_CHARS),
    "max_ended_kept": (True, MAX_ENDED_KEPT),
}
# Values that make the product unusable rather than stricter (a zero timeout, no previews).
_FLOORS = {
    "request_timeout_s": 1.0,
    "approval_ttl_s": 1.0,
    "max_pending": 1,
    "max_preview_chars": 200,
    "max_structured_chars": 2_000,
    "max_summary_chars": 40,
    "max_reason_chars": 0,
    "max_ended_kept": 1,
}
_CEILINGS = {"min_answer_s": MIN_ANSWER_CEILING_S}


def tightened(**requested: float) -> tuple[Limits, list[IgnoredSetting]]:
    """Apply requested limit values that are stricter than the promises; report the rest.

    Unknown names raise ``TypeError``: a misspelt setting must not pass silently.
    """
    defaults = Limits()
    applied: dict[str, Any] = {}
    ignored: list[IgnoredSetting] = []
    for name, value in requested.items():
        if name not in _SMALLER_IS_STRICTER:
            raise TypeError(f"unknown approval limit {name!r}")
        smaller_is_stricter, bound = _SMALLER_IS_STRICTER[name]
        if not isinstance(value, (int, float)) or not math.isfinite(value):
            ignored.append(IgnoredSetting(name, float("nan"), bound, "not a finite number"))
            continue
        looser = value > bound if smaller_is_stricter else value < bound
        if looser:
            ignored.append(
                IgnoredSetting(
                    name, value, bound, "would loosen a promised limit; kept at the bound"
                )
            )
            continue
        floor = _FLOORS.get(name)
        ceiling = _CEILINGS.get(name)
        if floor is not None and value < floor:
            ignored.append(IgnoredSetting(name, value, floor, f"below the usable minimum {floor}"))
            value = floor
        if ceiling is not None and value > ceiling:
            ignored.append(
                IgnoredSetting(name, value, ceiling, f"above the usable maximum {ceiling}")
            )
            value = ceiling
        default = getattr(defaults, name)
        applied[name] = type(default)(value)
    return dataclasses.replace(defaults, **applied), ignored


def enforced(limits: Limits) -> Limits:
    """``limits`` with every value held to the promises, however the object was built."""
    return tightened(**dataclasses.asdict(limits))[0]


class Clock(Protocol):
    """Where a store reads the time: wall time for display, monotonic time for durations."""

    def wall(self) -> float:
        """Seconds since the epoch."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never goes backwards."""
        ...


#: The clocks as this module found them at import: cell code that later replaces
#: ``time.monotonic`` (to stop requests timing out, approvals expiring, or to beat the reading
#: floor) changes what its own code reads, not these. Code in the kernel can still reach them
#: here: this makes the simple attack fail, it is no boundary (docs/security.md).
_WALL: Final = time.time
_MONOTONIC: Final = time.monotonic


class SystemClock:
    """The real clocks."""

    def wall(self) -> float:
        """Seconds since the epoch, from the system clock."""
        return _WALL()

    def monotonic(self) -> float:
        """Seconds from ``time.monotonic`` (as it was when this module was imported)."""
        return _MONOTONIC()


class ManualClock:
    """A clock that moves only when told to, for tests of timeouts and expiry."""

    def __init__(self, wall: float = 1_800_000_000.0) -> None:
        self._wall = wall
        self._mono = 1000.0

    def wall(self) -> float:
        """The current fake wall time."""
        return self._wall

    def monotonic(self) -> float:
        """The current fake monotonic time."""
        return self._mono

    def advance(self, seconds: float) -> None:
        """Move both clocks forward."""
        if seconds < 0:
            raise ValueError("a clock does not go backwards")
        self._wall += seconds
        self._mono += seconds
