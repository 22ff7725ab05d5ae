"""Reading traitlets configuration files the way a Jupyter or IPython application does.

An application looks for ``<base>.py`` and ``<base>.json`` in each directory of its search
path, highest priority first, and loads them lowest priority first so that later files win
(``traitlets.config.Application._load_config_files``). :func:`load_config_files` does the
same with traitlets' own loaders and also keeps which file set what, for the doctor to say
where a setting came from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from traitlets.config import Config
from traitlets.config.loader import (
    ConfigFileNotFound,
    JSONFileConfigLoader,
    PyFileConfigLoader,
)


@dataclass
class LoadedConfig:
    """The merged configuration, the files it came from, and the files that failed to load."""

    config: Config = field(default_factory=Config)
    #: ``(file, config of that file alone)``, in load order (lowest priority first).
    files: list[tuple[str, Config]] = field(default_factory=list)
    #: ``"<file>: <error>"`` for each file that exists but could not be loaded.
    errors: list[str] = field(default_factory=list)

    def source_of(self, section: str, key: str) -> str | None:
        """The file whose value of ``section.key`` is in force (the last one setting it)."""
        found = None
        for filename, config in self.files:
            if section in config and key in config[section]:
                found = filename
        return found


def load_config_files(basenames: Sequence[str], paths: Sequence[str]) -> LoadedConfig:
    """Load ``<base>.py`` then ``<base>.json`` for each base in ``basenames``, over ``paths``.

    ``paths`` is in descending priority, as applications list it; each base is loaded over
    all paths before the next base, as IPython loads ``ipython_config`` before
    ``ipython_kernel_config``. Python files are executed, exactly as the application would.
    """
    loaded = LoadedConfig()
    for base in basenames:
        for directory in reversed(list(paths)):
            for loader in (
                PyFileConfigLoader(base + ".py", path=directory),
                JSONFileConfigLoader(base + ".json", path=directory),
            ):
                try:
                    config = loader.load_config()
                except ConfigFileNotFound:
                    continue
                except Exception as exc:
                    name = loader.full_filename or f"{directory}/{loader.filename}"
                    loaded.errors.append(f"{name}: {type(exc).__name__}: {exc}")
                    continue
                loaded.files.append((loader.full_filename, config))
                loaded.config.merge(config)
    return loaded
