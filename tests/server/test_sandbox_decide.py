"""Applying and discarding a change set, file by file, bound to what the person was shown."""

from __future__ import annotations

from pathlib import Path

from jupyter_approvals.server.sandbox.changes import compute_change_set
from jupyter_approvals.server.sandbox.decide import (
    Decided,
    decide,
    follow_person_edits,
    remove_discarded,
    without_settled,
)


def paths_of(change_set) -> list[str]:
    return [change.path for change in change_set.changes]


def decided_in(project: Path) -> Decided:
    return Decided(project.parent / "decided.json")


def test_apply_writes_exactly_the_shown_changes_into_the_project(overlay):
    # Given a project and a sandboxed run that created, modified, deleted and moved files
    project, run = overlay
    (project / "sales.csv").write_text("id\n1\n")
    (project / "old.txt").write_text("old\n")
    (project / "draft.md").write_text("# draft\n")
    shown = run(
        "printf 'id\\n2\\n' > sales.csv; rm old.txt; mkdir out; echo r > out/report.md; "
        "chmod 4755 out/report.md; mv draft.md final.md"
    )
    upper = project.parent / "upper"
    decided = decided_in(project)
    # When the person applies all of it
    outcome = decide(
        project, upper, shown, compute_change_set(project, upper), paths_of(shown), "apply", decided
    )
    # Then every change is in the project, with the shown bytes and no setuid bit
    assert outcome.refused == {}
    assert (project / "sales.csv").read_text() == "id\n2\n"
    assert not (project / "old.txt").exists()
    assert (project / "out" / "report.md").read_text() == "r\n"
    assert (project / "out" / "report.md").stat().st_mode & 0o7777 == 0o755
    assert (project / "final.md").read_text() == "# draft\n"
    assert not (project / "draft.md").exists()
    # And nothing is left to decide
    assert not without_settled(compute_change_set(project, upper), decided)


def test_a_project_file_the_person_changed_meanwhile_is_refused_and_the_rest_applied(overlay):
    # Given a change set shown to the person, touching two files
    project, run = overlay
    (project / "a.csv").write_text("a\n")
    (project / "b.csv").write_text("b\n")
    shown = run("echo A > a.csv; echo B > b.csv")
    upper = project.parent / "upper"
    # When the person edits b.csv in the project before approving
    (project / "b.csv").write_text("person\n")
    now = compute_change_set(project, upper)
    outcome = decide(project, upper, shown, now, ["a.csv", "b.csv"], "apply", decided_in(project))
    # Then b.csv is refused and keeps the person's edit; a.csv is applied
    assert outcome.refused == {"b.csv": "APPROVAL_FINGERPRINT_MISMATCH"}
    assert outcome.done == ["a.csv"]
    assert (project / "b.csv").read_text() == "person\n"
    assert (project / "a.csv").read_text() == "A\n"


def test_a_file_the_sandbox_changed_after_it_was_shown_is_refused(overlay):
    # Given a change set shown to the person
    project, run = overlay
    shown = run("echo first > out.csv")
    upper = project.parent / "upper"
    # When the sandboxed code writes other bytes before the approval
    now = run("echo second > out.csv")
    outcome = decide(project, upper, shown, now, ["out.csv"], "apply", decided_in(project))
    # Then nothing of it reaches the project
    assert outcome.refused == {"out.csv": "APPROVAL_FINGERPRINT_MISMATCH"}
    assert not (project / "out.csv").exists()


def test_the_bytes_applied_are_the_bytes_hashed(overlay, monkeypatch):
    # Given a change set shown and judged unchanged at the decision
    project, run = overlay
    shown = run("echo shown > out.csv")
    upper = project.parent / "upper"
    now = compute_change_set(project, upper)
    # When the file changes in the overlay between that check and the copy
    (upper / "out.csv").write_text("swapped\n")
    outcome = decide(project, upper, shown, now, ["out.csv"], "apply", decided_in(project))
    # Then the copy's own digest refuses it and the project has nothing
    assert outcome.refused == {"out.csv": "APPROVAL_FINGERPRINT_MISMATCH"}
    assert not (project / "out.csv").exists()
    assert [p.name for p in project.iterdir()] == []


def test_a_symbolic_link_is_never_applied(overlay):
    # Given a sandboxed run that planted a link to a secret
    project, run = overlay
    shown = run("ln -s /etc/shadow leak")
    upper = project.parent / "upper"
    # When the person applies it
    outcome = decide(project, upper, shown, shown, ["leak"], "apply", decided_in(project))
    # Then it is refused and nothing is in the project
    assert outcome.refused == {"leak": "APPROVAL_CHANGE_UNSUPPORTED"}
    assert not (project / "leak").exists()


def test_a_target_behind_a_symbolic_link_in_the_project_is_refused(overlay, tmp_path):
    # Given a created file in a folder that, in the project, becomes a link to elsewhere
    project, run = overlay
    shown = run("mkdir -p out; echo x > out/x.csv")
    upper = project.parent / "upper"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / "out").symlink_to(elsewhere)
    # When the person applies it
    outcome = decide(project, upper, shown, shown, ["out/x.csv"], "apply", decided_in(project))
    # Then it is refused and nothing lands elsewhere
    assert outcome.refused == {"out/x.csv": "APPROVAL_FINGERPRINT_MISMATCH"}
    assert list(elsewhere.iterdir()) == []


def test_discard_gives_the_overlay_the_project_back(overlay):
    # Given a sandboxed run that modified one file, deleted one and created one
    project, run = overlay
    (project / "keep.csv").write_text("project\n")
    (project / "gone.csv").write_text("still\n")
    shown = run("echo sandbox > keep.csv; rm gone.csv; echo new > new.csv")
    upper = project.parent / "upper"
    decided = decided_in(project)
    # When the person discards all of it
    outcome = decide(project, upper, shown, shown, paths_of(shown), "discard", decided)
    # Then the project is unchanged, the modified file's copy has the project's bytes again,
    # the deletion's whiteout is gone, and nothing is listed any more
    assert sorted(outcome.done) == ["gone.csv", "keep.csv", "new.csv"]
    assert (project / "keep.csv").read_text() == "project\n"
    assert (upper / "keep.csv").read_text() == "project\n"
    assert not (upper / "gone.csv").exists()
    assert not (project / "new.csv").exists()
    assert not without_settled(compute_change_set(project, upper), decided)
    # And the created file leaves the overlay when the kernel next starts
    remove_discarded(upper, decided)
    assert not (upper / "new.csv").exists()


def test_a_discarded_file_written_again_is_listed_again(overlay):
    # Given a created file the person discarded
    project, run = overlay
    shown = run("echo one > new.csv")
    upper = project.parent / "upper"
    decided = decided_in(project)
    decide(project, upper, shown, shown, ["new.csv"], "discard", decided)
    # When the sandboxed code writes it again
    again = without_settled(run("echo two > new.csv"), decided)
    # Then it is a change to decide again, and is not removed at the next start
    assert paths_of(again) == ["new.csv"]
    remove_discarded(upper, decided)
    assert (upper / "new.csv").read_text() == "two\n"


def test_a_persons_edit_of_an_applied_file_is_not_taken_for_the_kernels(overlay):
    # Given a file the person applied from the sandbox
    project, run = overlay
    shown = run("echo sandbox > report.md")
    upper = project.parent / "upper"
    decided = decided_in(project)
    decide(project, upper, shown, shown, ["report.md"], "apply", decided)
    # When the person edits it in the project
    (project / "report.md").write_text("person\n")
    raw = compute_change_set(project, upper)
    # Then it is not listed as a change of the kernel's
    assert not without_settled(raw, decided)
    # And the overlay's copy follows the person's bytes (the kernel sees the edit)
    follow_person_edits(project, upper, raw, decided)
    assert (upper / "report.md").read_text() == "person\n"
    assert not compute_change_set(project, upper)
