"""A tool source reading one directory: every executable ``*-tool`` file in it.

Kept apart from :mod:`ikigai_core.discovery` (the schema cache, the registry, the
snapshot): a plugin that subclasses or returns one, as the default scanner does, imports
only this when ``ikigai --help`` registers it (the start-up ledger).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from ikigai_core.tools import (
    TOOL_SUFFIX,
    SkippedTool,
    ToolCandidate,
    ToolScan,
    tool_name_from_filename,
)


class DirectorySource:
    """Every executable ``*-tool`` file in one directory (spec decisions 1-3).

    :param directory: the directory to scan; a missing one holds no tools.
    :param name: the source name users see (``system``, ``user``, ``project``, ...).
    :param precedence: higher wins on a name clash.
    :param only: if given, only these file names are considered (the rest is not looked at).
    """

    def __init__(
        self, directory: Path, *, name: str, precedence: int, only: Iterable[str] | None = None
    ) -> None:
        self.directory = Path(directory)
        self.name = name
        self.precedence = precedence
        self.only = None if only is None else frozenset(only)

    def __repr__(self) -> str:
        return f"DirectorySource({str(self.directory)!r}, name={self.name!r})"

    def scan(self) -> ToolScan:
        """List the directory; never runs anything."""
        try:
            filenames = sorted(os.listdir(self.directory))
        except (FileNotFoundError, NotADirectoryError):
            if not self.directory.is_file():  # missing, or under a file: no tools here
                return ToolScan()
            reason = (f"{self.directory} is a file, not a directory; tools go in a directory "
                      "of that name")
            return ToolScan(skipped=[SkippedTool(self.directory.name, self.name, reason)])
        except OSError as exc:
            reason = f"cannot read tool directory {self.directory}: {exc.strerror}"
            return ToolScan(skipped=[SkippedTool(self.directory.name, self.name, reason)])
        if self.only is not None:
            filenames = [f for f in filenames if f in self.only]
        candidates: dict[str, ToolCandidate] = {}
        skipped: list[SkippedTool] = []
        for filename in filenames:
            path = self.directory / filename
            problem, kind = self._problem(filename, path)
            name = tool_name_from_filename(filename) if filename.endswith(TOOL_SUFFIX) else filename
            if problem is None and name in candidates:
                problem = f"same tool name as {candidates[name].path}; rename one of them"
            if problem is not None:
                skipped.append(SkippedTool(name, self.name, problem, path, kind))
            else:
                candidates[name] = ToolCandidate(name, (str(path),), path)
        return ToolScan(list(candidates.values()), skipped)

    def _problem(self, filename: str, path: Path) -> tuple[str | None, str]:
        if not filename.endswith(TOOL_SUFFIX):
            return "not a tool: the file name does not end in -tool", "ignored"
        if filename.startswith("."):
            return "hidden file", "ignored"
        try:
            st = path.stat()
        except FileNotFoundError:
            return "dangling symlink: its target does not exist", "invalid"
        except OSError as exc:
            return f"cannot stat: {exc.strerror}", "invalid"
        if not stat.S_ISREG(st.st_mode):
            return "not a regular file", "invalid"
        if not os.access(path, os.X_OK):
            return f"not executable; run chmod +x {path}", "invalid"
        return self.refused(path, st), "invalid"

    def refused(self, path: Path, st: os.stat_result) -> str | None:
        """Why the executable file ``path`` (``st``: its ``stat()``, symlinks followed) is
        skipped all the same, or ``None``: here, never. A subclass may refuse, say, a file
        others could write, with the stat taken once for both checks."""
        return None
