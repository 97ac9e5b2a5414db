"""Default plugin: a trusted project's instructions, appended to the system prompt.

``AGENTS.md`` at the project's root (the convention Codex and other agents follow), then
``.ikigai/system.md``. The project is the one tools come from
(:func:`ikigai_core.project.find_project`), else the working directory. An untrusted
project's files are never read: a cloned repository must not steer the model any more
than it may run tools.
"""

from __future__ import annotations

from pathlib import Path

from ikigai_core import hookimpl
from ikigai_core.errors import ConfigError
from ikigai_core.project import find_project
from ikigai_core.trust import TrustStore

INSTRUCTION_FILES = ("AGENTS.md", ".ikigai/system.md")


def read_text(path: Path) -> str | None:
    """The file's text; ``None`` if there is no such file; unreadable is one clear error."""
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not UTF-8 text; fix or remove it") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None


@hookimpl(trylast=True)
def ikigai_system_prompt(cwd: Path, home: Path) -> list[str]:
    """Each instruction file of a trusted project, under a heading naming it."""
    project = find_project(cwd, ikigai_home=home) or cwd
    if not any((project / name).is_file() for name in INSTRUCTION_FILES):
        return []
    if not TrustStore(home).is_trusted(project):
        return []
    fragments = []
    for name in INSTRUCTION_FILES:
        text = read_text(project / name)
        if text and text.strip():
            fragments.append(f"## Project instructions ({name})\n\n{text.strip()}")
    return fragments
