"""The limits kernels will use: IPython's kernel configuration read as a kernel reads it.

An IPython kernel (``IPKernelApp``) searches its profile directory, then
``<sys.prefix>/etc/ipython``, then the system directories, and loads ``ipython_config``
before ``ipython_kernel_config`` (``.py`` then ``.json`` each), later files winning. The
session then builds ``ApprovalsConfig(config=shell.config)`` and calls ``.limits()``. This
module does the same for the default profile. Options given on a kernel's command line (in
a kernel spec's ``argv``) are not visible here.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from traitlets import TraitError
from traitlets.config import Config

from ..config import TRAIT_OF_LIMIT, ApprovalsConfig
from ..core import policy
from ..core.project import STATE_DIR_ENV
from .config_files import load_config_files
from .report import Check, IgnoredConfig

#: Files a kernel loads, in order.
KERNEL_CONFIG_FILES = ("ipython_config", "ipython_kernel_config")
#: Environment variables of ours start with this; only STATE_DIR_ENV is one.
ENV_PREFIX = "JUPYTER_APPROVALS_"
_SECTION = "ApprovalsConfig"
_ENV_WHY = (
    "not a setting; limits are configured only through ApprovalsConfig and can only be tightened"
)


def kernel_config_paths(ipython_dir: str | os.PathLike[str] | None = None) -> list[str]:
    """The directories a kernel with the default profile searches, highest priority first."""
    from IPython.core.application import ENV_CONFIG_DIRS, SYSTEM_CONFIG_DIRS
    from IPython.paths import get_ipython_dir

    base = Path(get_ipython_dir() if ipython_dir is None else ipython_dir)
    return [str(base / "profile_default"), *ENV_CONFIG_DIRS, *SYSTEM_CONFIG_DIRS]


@dataclass
class EffectiveLimits:
    """The limits a kernel will enforce, what it ignores, and what went wrong reading config."""

    limits: policy.Limits
    ignored: list[IgnoredConfig] = field(default_factory=list)
    #: Settings that make a kernel fail to start approvals, and config files that fail to load.
    errors: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


def _unknown_setting(key: str, known: list[str], source: str | None) -> IgnoredConfig:
    why = f"not a setting of {_SECTION}"
    close = difflib.get_close_matches(key, known, n=1)
    if close:
        why += f" (did you mean {close[0]}?)"
    return IgnoredConfig(f"{_SECTION}.{key}", why, source)


def stray_environment(environ: Mapping[str, str]) -> list[IgnoredConfig]:
    """``JUPYTER_APPROVALS_*`` variables other than the state dir: nothing reads them."""
    return [
        IgnoredConfig(name, _ENV_WHY, "environment")
        for name in sorted(environ)
        if name.startswith(ENV_PREFIX) and name != STATE_DIR_ENV
    ]


def effective_limits(
    ipython_dir: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] = os.environ,
) -> EffectiveLimits:
    """Load the default profile's kernel configuration and apply it as a kernel would."""
    loaded = load_config_files(KERNEL_CONFIG_FILES, kernel_config_paths(ipython_dir))
    result = EffectiveLimits(policy.Limits(), errors=list(loaded.errors))
    result.files = [name for name, _ in loaded.files]
    section = loaded.config[_SECTION] if _SECTION in loaded.config else Config()
    known = sorted(ApprovalsConfig.class_trait_names(config=True))
    usable = Config()
    for key, value in section.items():
        source = loaded.source_of(_SECTION, key)
        if key not in known:
            result.ignored.append(_unknown_setting(key, known, source))
            continue
        try:
            ApprovalsConfig(config=Config({_SECTION: {key: value}}))
        except TraitError as exc:
            result.errors.append(
                f"{_SECTION}.{key} in {source}: {exc} A kernel refuses to start approvals "
                "with this setting."
            )
            continue
        usable[_SECTION][key] = value
    limits, ignored = ApprovalsConfig(config=usable).limits()
    result.limits = limits
    for item in ignored:
        trait = TRAIT_OF_LIMIT.get(item.name, item.name)
        result.ignored.append(
            IgnoredConfig(
                f"{_SECTION}.{trait}",
                item.why,
                loaded.source_of(_SECTION, trait),
                section.get(trait, item.requested),
                item.applied,
            )
        )
    result.ignored.extend(stray_environment(environ))
    return result


def check_limits(effective: EffectiveLimits) -> Check:
    """The kernel configuration loads, and none of it is ignored."""
    limits = effective.limits
    summary = (
        f"requests time out after {limits.request_timeout_s:g} s, approvals expire "
        f"{limits.approval_ttl_s:g} s after the decision, answers faster than "
        f"{limits.min_answer_s:g} s do not count, at most {limits.max_pending} pending"
    )
    info = {"config_files": effective.files, "errors": effective.errors}
    problems = list(effective.errors)
    if effective.ignored:
        names = ", ".join(item.setting for item in effective.ignored)
        count = len(effective.ignored)
        problems.append(f"{count} setting{'s' if count > 1 else ''} ignored: {names}")
    if problems:
        return Check(
            "limits",
            False,
            f"{'; '.join(problems)}. In force: {summary}",
            fix="remove or correct these settings; limits can only be made stricter, through "
            f"c.{_SECTION} in the IPython kernel configuration",
            info=info,
        )
    return Check("limits", True, summary, info=info)
