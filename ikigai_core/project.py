"""Which project ikigai runs in: found the way git finds its root.

The project directory is the nearest ancestor of the working directory (itself included)
that holds a ``.ikigai/`` directory or an ``AGENTS.md`` file (the instructions Codex and
other agents read: a folder with them is a project, as git's root is). The search stops
below the user's home directory and the filesystem root: neither is ever a project
(``~/.ikigai`` is the default user layer, not a project's), so a directory outside every
project has none.
"""

from __future__ import annotations

from pathlib import Path

PROJECT_MARKER = ".ikigai"
INSTRUCTIONS = "AGENTS.md"


def find_project(start: Path, *, ikigai_home: Path, user_home: Path | None = None) -> Path | None:
    """The project directory ``start`` is in, or ``None``.

    :param start: where to begin (the working directory).
    :param ikigai_home: ``$IKIGAI_HOME``: a directory whose ``.ikigai`` is it holds the user
        layer, and is no project whatever else it holds.
    :param user_home: where the search stops (default: the user's home directory).
    """
    if user_home is None:
        try:
            user_home = Path.home()
        except RuntimeError:  # no HOME and no passwd entry: only the root stops the search
            user_home = Path("/")
    stop = user_home.resolve()
    directory = start
    home = ikigai_home.resolve()
    while directory != stop and directory != directory.parent:
        if _is_project(directory, home):
            return directory
        directory = directory.parent
    return None


def _is_project(directory: Path, ikigai_home: Path) -> bool:
    """``directory`` holds ``.ikigai/`` or ``AGENTS.md``, and its ``.ikigai`` is not the
    user layer."""
    marker = directory / PROJECT_MARKER
    marked = marker.is_dir() or (directory / INSTRUCTIONS).is_file()
    return marked and marker.resolve() != ikigai_home
