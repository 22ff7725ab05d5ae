"""What the doctor reports: one :class:`Check` per concern, gathered in a :class:`DoctorReport`.

``DoctorReport.to_dict()`` is the JSON of ``GET doctor`` (docs/protocol.md, section 6.4) and of
``jupyter approvals doctor --json``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core import policy


def json_number(value: object) -> Any:
    """``value`` if JSON can hold it as is; a non-finite float becomes its text (``"nan"``)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


@dataclass(frozen=True)
class Check:
    """One concern of an installation, and whether it is in order.

    ``detail`` says what was found in one sentence; ``fix`` (when not ok) says what to do.
    ``info`` carries the facts behind the detail for programs; its keys appear next to
    ``name``, ``ok``, ``detail`` and ``fix`` in :meth:`to_dict` and never replace them.
    """

    name: str
    ok: bool
    detail: str
    fix: str | None = None
    info: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """``{"name", "ok", "detail", "fix", ...info}``."""
        out: dict[str, Any] = {
            "name": self.name,
            "ok": self.ok,
            "detail": self.detail,
            "fix": self.fix,
        }
        for key, value in self.info.items():
            out.setdefault(key, value)
        return out


@dataclass(frozen=True)
class IgnoredConfig:
    """A setting a kernel will not apply, where it was made, and why.

    ``setting`` is the configuration name (``ApprovalsConfig.request_timeout``) or the
    environment variable; ``requested`` is the configured value (``None`` for environment
    variables, whose values are not repeated); ``applied`` is the value in force instead, or
    ``None`` when the setting has no effect at all.
    """

    setting: str
    why: str
    source: str | None = None
    requested: Any = None
    applied: Any = None

    def to_dict(self) -> dict[str, Any]:
        """``{"name", "why", "source", "requested", "applied"}``, JSON-safe."""
        return {
            "name": self.setting,
            "why": self.why,
            "source": self.source,
            "requested": json_number(self.requested),
            "applied": json_number(self.applied),
        }


@dataclass(frozen=True)
class DoctorReport:
    """Every check, the limits kernels will use, what they ignore, and what is not guaranteed."""

    checks: list[Check]
    limits: policy.Limits
    ignored_settings: list[IgnoredConfig]
    not_guaranteed: list[str]
    version: str = ""
    project_root: str | None = None

    @property
    def ok(self) -> bool:
        """True when every check passed."""
        return all(check.ok for check in self.checks)

    def check(self, name: str) -> Check:
        """The check called ``name`` (``KeyError`` if there is none)."""
        for check in self.checks:
            if check.name == name:
                return check
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        """The JSON of docs/protocol.md 6.4, plus ``version`` and ``project_root``."""
        return {
            "ok": self.ok,
            "checks": [check.to_dict() for check in self.checks],
            "limits": {k: json_number(v) for k, v in dataclasses.asdict(self.limits).items()},
            "ignored_settings": [item.to_dict() for item in self.ignored_settings],
            "not_guaranteed": list(self.not_guaranteed),
            "version": self.version,
            "project_root": self.project_root,
        }
