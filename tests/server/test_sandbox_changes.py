"""Change sets read from a real overlay: what a sandboxed process did to the project, from the
bytes of its upper folder."""

from __future__ import annotations

from jupyter_approvals.server.sandbox.changes import compute_change_set


def kinds(change_set) -> dict[str, str]:
    return {change.path: change.kind for change in change_set.changes}


def test_created_modified_and_deleted_files_are_listed_with_their_bytes(overlay):
    # Given a project with three files
    project, run = overlay
    (project / "keep.csv").write_text("a\n")
    (project / "edit.csv").write_text("old\n")
    (project / "drop.csv").write_text("gone\n")
    # When sandboxed code writes one again unchanged, edits one, deletes one and creates one
    change_set = run(
        "printf 'a\\n' > keep.csv; printf 'new\\n' > edit.csv; rm drop.csv; "
        "printf 'fresh\\n' > made.csv"
    )
    # Then the change set lists exactly the three changes, in path order
    assert kinds(change_set) == {
        "drop.csv": "deleted",
        "edit.csv": "modified",
        "made.csv": "created",
    }
    assert change_set.counts == {"deleted": 1, "modified": 1, "created": 1}
    edit = next(c for c in change_set.changes if c.path == "edit.csv")
    assert (edit.before.size, edit.after.size) == (4, 4)
    assert edit.before.sha256 != edit.after.sha256
    # And the project itself is untouched
    assert (project / "drop.csv").read_text() == "gone\n"
    assert not (project / "made.csv").exists()


def test_a_deleted_folder_lists_each_file_it_held(overlay):
    # Given a folder of files in the project
    project, run = overlay
    (project / "data" / "raw").mkdir(parents=True)
    (project / "data" / "a.csv").write_text("1\n")
    (project / "data" / "raw" / "b.csv").write_text("2\n")
    # When sandboxed code deletes the folder
    change_set = run("rm -rf data")
    # Then every file below it is listed as deleted
    assert kinds(change_set) == {"data/a.csv": "deleted", "data/raw/b.csv": "deleted"}


def test_a_folder_replaced_whole_deletes_what_it_held_and_creates_what_is_new(overlay):
    # Given a folder with two files
    project, run = overlay
    (project / "out").mkdir()
    (project / "out" / "old.csv").write_text("old\n")
    (project / "out" / "same.csv").write_text("same\n")
    # When sandboxed code removes the folder and makes it again with other files
    change_set = run("rm -rf out; mkdir out; printf 'same\\n' > out/same.csv; echo n > out/n.csv")
    # Then the old file is deleted, the new one created, and the one rewritten alike unchanged
    assert kinds(change_set) == {"out/n.csv": "created", "out/old.csv": "deleted"}


def test_a_moved_file_is_listed_once_as_renamed(overlay):
    # Given a file in the project
    project, run = overlay
    (project / "draft.md").write_text("# report\n")
    # When sandboxed code moves it
    change_set = run("mkdir -p docs; mv draft.md docs/report.md")
    # Then the change set has one rename, naming where it came from
    [change] = change_set.changes
    assert (change.path, change.kind, change.detail) == ("docs/report.md", "renamed", "draft.md")


def test_a_symbolic_link_is_listed_as_unsupported_with_its_target(overlay):
    # Given a project
    _project, run = overlay
    # When sandboxed code plants a symbolic link to a secret outside the project
    change_set = run("ln -s /root/.ssh/id_rsa key")
    # Then it is listed as unsupported, naming the target, never as a file
    [change] = change_set.changes
    assert change.kind == "unsupported"
    assert change.detail == "symbolic link to '/root/.ssh/id_rsa'"


def test_a_file_that_became_a_folder_and_a_folder_that_became_a_file(overlay):
    # Given a file and a folder
    project, run = overlay
    (project / "f").write_text("file\n")
    (project / "d").mkdir()
    (project / "d" / "x").write_text("x\n")
    # When sandboxed code swaps their kinds
    change_set = run("rm f; mkdir f; echo y > f/y; rm -rf d; echo d > d")
    # Then the old contents are deleted and the new created
    assert kinds(change_set) == {
        "d": "created",
        "d/x": "deleted",
        "f": "deleted",
        "f/y": "created",
    }


def test_the_fingerprint_is_stable_and_follows_the_bytes(overlay):
    # Given a change set
    project, run = overlay
    first = run("echo one > a.txt")
    # When it is computed again, and after the bytes changed
    again = compute_change_set(project, project.parent / "upper")
    changed = run("echo two > a.txt")
    # Then the same bytes give the same fingerprint, other bytes another
    assert first.fingerprint == again.fingerprint
    assert changed.fingerprint != first.fingerprint


def test_no_change_is_an_empty_change_set(overlay):
    # Given a project with a file
    project, run = overlay
    (project / "a.txt").write_text("a\n")
    # When sandboxed code only reads, and writes the same bytes back
    change_set = run("cat a.txt > /dev/null; printf 'a\\n' > a.txt")
    # Then nothing changed
    assert not change_set
    assert change_set.counts == {}
