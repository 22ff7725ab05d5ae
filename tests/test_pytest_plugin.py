"""The pytest plugin, used as a library author would: a protected function of their own."""

from __future__ import annotations

from pathlib import Path

import pytest

import jupyter_approvals as ja


@ja.protected("report.publish", summary="Publish {name}")
def publish(name: str, text: str) -> str:
    Path(name).write_text(text)
    return name


def test_an_approved_call_runs_once(jpa_session, jpa_approve, jpa_project: Path):
    # Given a call a person approved
    request = jpa_approve(lambda: publish("report.md", "# Q3"))
    assert request.summary == "Publish report.md"
    assert not (jpa_project / "report.md").exists()
    # When it is made again with the same arguments, Then it runs, once
    assert publish("report.md", "# Q3") == "report.md"
    assert (jpa_project / "report.md").read_text() == "# Q3"
    with pytest.raises(ja.ApprovalPending):
        publish("report.md", "# Q3")


def test_a_rejected_call_never_runs(jpa_reject, jpa_project: Path):
    # Given a call a person rejected
    jpa_reject(lambda: publish("report.md", "# Q3"))
    # When it is made again, Then it raises the rejection, and nothing was written
    with pytest.raises(ja.ApprovalRejected, match="rejected by the test"):
        publish("report.md", "# Q3")
    assert not (jpa_project / "report.md").exists()


def test_the_journal_is_outside_the_project(jpa_session, jpa_state_dir: Path, jpa_project: Path):
    assert jpa_session.journal.path.is_relative_to(jpa_state_dir)
    assert not jpa_session.journal.path.is_relative_to(jpa_project)
