"""Git: commit exactly what is staged (git.commit), push exactly the approved commit (git.push).

Both run the ``git`` program (no Python git library: the user's own git, config, hooks and
credential helpers behave as they do in a terminal), never waiting for a password
(:mod:`.command`). Each approval also covers the git program, the whole environment git
receives, the config that starts programs or redirects a push, and the hooks that will run
(:mod:`.setting`), so nothing set or edited after the approval changes what runs. The
operations live in :mod:`.commit` and :mod:`.push`; this package is their public home.
"""

from __future__ import annotations

from .command import GitCommandFailed, GitCommitDiffers, redact_url
from .commit import git_commit
from .push import git_push

__all__ = ["GitCommandFailed", "GitCommitDiffers", "git_commit", "git_push", "redact_url"]
