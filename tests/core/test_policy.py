"""Configuration may only make the promised limits stricter."""

from __future__ import annotations

import pytest
from traitlets.config import Config

from jupyter_approvals.config import ApprovalsConfig
from jupyter_approvals.core.policy import Limits, tightened


def test_stricter_values_apply():
    # Given stricter timeouts and a longer minimum answer time
    limits, ignored = tightened(
        request_timeout_s=120, approval_ttl_s=60, min_answer_s=2.5, max_pending=5
    )
    # Then they are in force and nothing is reported
    assert limits == Limits(
        request_timeout_s=120, approval_ttl_s=60, min_answer_s=2.5, max_pending=5
    )
    assert ignored == []


def test_looser_values_are_ignored_and_reported():
    # Given values that would loosen every promise
    limits, ignored = tightened(
        request_timeout_s=3600, approval_ttl_s=86400, min_answer_s=0.1, max_pending=1000
    )
    # Then the promises hold and each value is reported
    assert limits == Limits()
    assert {i.name for i in ignored} == {
        "request_timeout_s",
        "approval_ttl_s",
        "min_answer_s",
        "max_pending",
    }
    assert all("loosen" in i.why for i in ignored)


def test_unknown_limit_is_an_error():
    with pytest.raises(TypeError, match="unknown approval limit"):
        tightened(request_timeout=5)


def test_traitlets_config_goes_through_the_same_rule():
    # Given an IPython-style config asking for a 2 h timeout and a 10 s one for approvals
    config = Config()
    config.ApprovalsConfig.request_timeout = 7200.0
    config.ApprovalsConfig.approval_ttl = 10.0
    # When the kernel reads it
    limits, ignored = ApprovalsConfig(config=config).limits()
    # Then only the stricter one applies
    assert limits.request_timeout_s == 600
    assert limits.approval_ttl_s == 10
    assert [i.name for i in ignored] == ["request_timeout_s"]


def test_every_trait_is_configurable_with_help():
    for name, trait in ApprovalsConfig.class_traits(config=True).items():
        assert len(trait.help) > 30, name


def test_non_finite_values_are_ignored():
    # Given NaN and infinity in the configuration
    limits, ignored = tightened(approval_ttl_s=float("nan"), min_answer_s=float("-inf"))
    # Then the promised limits hold and both are reported
    assert limits == Limits()
    assert {i.name for i in ignored} == {"approval_ttl_s", "min_answer_s"}


def test_a_store_enforces_limits_however_they_were_built():
    from jupyter_approvals.core.store.approval_store import ApprovalStore

    store = ApprovalStore(Limits(approval_ttl_s=float("nan"), request_timeout_s=86_400))
    assert store.limits.approval_ttl_s == 600
    assert store.limits.request_timeout_s == 600
