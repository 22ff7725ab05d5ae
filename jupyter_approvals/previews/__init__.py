"""Preview engines: pure code that turns a change into bounded text a person can judge.

Used by the ready operations (``ops``, in a kernel) and by the server's holds of agent writes,
so they import nothing of Jupyter, the kernel side or the server: only ``core``.

- :mod:`.structured`: :class:`~.structured.StructuredPreview`, the one builder of a preview
  (a character budget, every cut announced), and :mod:`.render_text`, which renders its
  document as the bounded text preview.
- :mod:`.text`: the budgets and :class:`~.text.Deadline` (a time budget).
- :mod:`.line_diff` and :mod:`.line_match`: unified line diffs of text.
- :mod:`.file_tree`: a listing of what a deletion or move touches, and the tree's state.
- :mod:`.table_diff`: rows and columns added, removed and changed between two tables.
"""
