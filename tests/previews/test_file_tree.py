"""What a held change binds of its target: every entry at and below a path (file_tree.py)."""

from __future__ import annotations

from jupyter_approvals.previews.file_tree import scan, tree_state


def test_a_path_below_a_file_holds_nothing_and_binds_its_absence(tmp_path):
    # Given a file where a folder would be
    (tmp_path / "blocker").write_text("a file\n")
    below = tmp_path / "blocker" / "inside.txt"
    # Then the path below it has no entries, like a path that does not exist
    assert scan(str(below)) == []
    assert tree_state(str(below)) == tree_state(str(tmp_path / "absent.txt"))


def test_a_folder_is_listed_root_first_then_sorted(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "b.txt").write_text("b")
    (tmp_path / "d" / "a.txt").write_text("a")
    names = [entry.relative for entry in scan(str(tmp_path / "d"))]
    assert names == [".", "a.txt", "b.txt"]
