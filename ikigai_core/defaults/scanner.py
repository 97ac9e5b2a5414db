"""Default plugin (core policy): the user's and the project's tool directories.

``$IKIGAI_HOME/tools`` (source ``user``) and the project's ``.ikigai/tools`` (source
``project``, only once the project directory is trusted with ``ikigai trust``). The project
is the nearest ancestor of the working directory holding ``.ikigai/`` or ``AGENTS.md``
(:func:`ikigai_core.project.find_project`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ikigai_core import SkippedTool, ToolScan, hookimpl
from ikigai_core.errors import ConfigError
from ikigai_core.statefiles import exposure, refuse_exposed
from ikigai_core.tool_directory import DirectorySource

if TYPE_CHECKING:
    from ikigai_core.trust import TrustStore

USER_PRECEDENCE = 10
PROJECT_PRECEDENCE = 20


class PrivateSource(DirectorySource):
    """A tool directory of the user's or a project's: a tool another user could have put
    there or changed (ssh's rule for the folder and the file) is skipped, never run."""

    def scan(self) -> ToolScan:
        """The directory's tools, less those others could have written (issue 21): the
        folder is checked once, each file with the ``stat()`` the scan took anyway."""
        scan = super().scan()
        try:
            refuse_exposed(self.directory)
        except ConfigError as exc:
            refused = [SkippedTool(c.name, self.name, str(exc), c.path) for c in scan.candidates]
            return ToolScan((), [*scan.skipped, *refused])
        return scan

    def refused(self, path: Path, st: os.stat_result) -> str | None:
        """Why others could have written the tool file ``path``, if they could."""
        return exposure(path, st)


class ProjectSource(PrivateSource):
    """``PROJECT/.ikigai/tools``, whose tools are only candidates once the project is trusted."""

    def __init__(self, project: Path, trust: TrustStore) -> None:
        super().__init__(project / ".ikigai" / "tools", name="project",
                         precedence=PROJECT_PRECEDENCE)
        self.project = project
        self.trust = trust

    def scan(self) -> ToolScan:
        """Untrusted: every would-be tool is reported as ``untrusted`` and nothing is run."""
        scan = super().scan()
        if not scan.candidates or self.trust.is_trusted(self.project):
            return scan
        from ikigai_core.trust import untrusted_reason

        reason = untrusted_reason(self.project)
        untrusted = [SkippedTool(c.name, self.name, reason, c.path, "untrusted")
                     for c in scan.candidates]
        return ToolScan((), [*scan.skipped, *untrusted])


@hookimpl
def ikigai_tool_sources(home: Path, cwd: Path) -> list[DirectorySource]:
    """The user directory, then the project directory (if ``cwd`` is in a project)."""
    from ikigai_core.project import find_project  # not on `ikigai --help`'s path
    from ikigai_core.trust import TrustStore

    sources: list[DirectorySource] = [
        PrivateSource(home / "tools", name="user", precedence=USER_PRECEDENCE)]
    project = find_project(cwd, ikigai_home=home)
    if project is not None:
        sources.append(ProjectSource(project, TrustStore(home)))
    return sources
