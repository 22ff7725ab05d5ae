"""Files: ``write_file`` (file.write), ``delete_path`` (file.delete), ``move_path`` (file.move).

The operations live in :mod:`.operations`, what their cards read and show in :mod:`.previews`;
this package is their public home.
"""

from __future__ import annotations

from .operations import delete_path, move_path, write_file

__all__ = ["delete_path", "move_path", "write_file"]
