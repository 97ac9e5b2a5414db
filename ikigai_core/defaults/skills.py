"""Default plugin: the user's skills (``$IKIGAI_HOME/skills``) and the project's
(``./.ikigai/skills``, read only once the project directory is trusted)."""

from __future__ import annotations

from pathlib import Path

from ikigai_core import hookimpl
from ikigai_core.skills import SkillDirectory
from ikigai_core.trust import TrustStore

USER_PRECEDENCE = 10
PROJECT_PRECEDENCE = 20


@hookimpl
def ikigai_skill_sources(home: Path, cwd: Path) -> list[SkillDirectory]:
    """The user directory, then the project directory (untrusted: listed, never read)."""
    untrusted = None
    if not TrustStore(home).is_trusted(cwd):
        untrusted = f"project directory not trusted; run `ikigai trust {cwd.resolve()}`"
    return [
        SkillDirectory(home / "skills", name="user", precedence=USER_PRECEDENCE),
        SkillDirectory(cwd / ".ikigai" / "skills", name="project",
                       precedence=PROJECT_PRECEDENCE, untrusted_reason=untrusted),
    ]
