"""Default plugin: the user's skills (``$IKIGAI_HOME/skills``) and the project's
(``PROJECT/.ikigai/skills``, read only once the project directory is trusted; the project
is found as for tools, :func:`ikigai_core.trust.find_project_trust`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ikigai_core.marker import hookimpl

if TYPE_CHECKING:
    from ikigai_core.skills import SkillDirectory

USER_PRECEDENCE = 10
PROJECT_PRECEDENCE = 20


@hookimpl
def ikigai_skill_sources(home: Path, cwd: Path) -> list[SkillDirectory]:
    """The user directory, then the project's (untrusted: listed, never read)."""
    from ikigai_core.skills import SkillDirectory  # not on `ikigai --help`'s path
    from ikigai_core.trust import find_project_trust

    sources = [SkillDirectory(home / "skills", name="user", precedence=USER_PRECEDENCE)]
    located = find_project_trust(cwd, home)
    if located is not None:
        project, untrusted = located
        sources.append(SkillDirectory(project / ".ikigai" / "skills", name="project",
                                      precedence=PROJECT_PRECEDENCE,
                                      untrusted_reason=untrusted))
    return sources
