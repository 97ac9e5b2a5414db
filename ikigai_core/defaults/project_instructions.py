"""Default plugin: a trusted project's instructions, appended to the system prompt.

``AGENTS.md`` at the project's root (the convention Codex and other agents follow), then
``.ikigai/system.md``. The project is the one tools come from
(:func:`ikigai_core.project.find_project`: ``AGENTS.md`` marks one), else the working
directory. An untrusted project's files are never read: a cloned repository must not steer
the model any more than it may run tools; :func:`ignored_instructions` says so.
"""

from __future__ import annotations

from pathlib import Path

from ikigai_core.errors import ConfigError
from ikigai_core.marker import hookimpl

INSTRUCTION_FILES = ("AGENTS.md", ".ikigai/system.md")


def read_text(path: Path) -> str | None:
    """The file's text; ``None`` if there is no such file (a directory is none); one clear
    error if it is unreadable, not UTF-8, or others could have written it or made it huge
    (:func:`~ikigai_core.statefiles.read_state`: it steers the model as a rule would)."""
    from ikigai_core.statefiles import read_state

    raw = None if path.is_dir() else read_state(path)
    try:
        return None if raw is None else raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not UTF-8 text; fix or remove it") from None


def _instructions(cwd: Path, home: Path) -> tuple[Path, list[str], bool]:
    """The project, the instruction files it holds, and whether it is trusted (asked only
    when it holds some)."""
    from ikigai_core.project import find_project  # not on `ikigai --help`'s path
    from ikigai_core.trust import TrustStore

    project = find_project(cwd, ikigai_home=home) or cwd
    names = [name for name in INSTRUCTION_FILES if (project / name).is_file()]
    return project, names, bool(names) and TrustStore(home).is_trusted(project)


def ignored_instructions(cwd: Path, home: Path) -> str | None:
    """One line saying which instruction files of an untrusted project are not sent and how
    to send them; ``None`` when none are ignored."""
    project, names, trusted = _instructions(cwd, home)
    if not names or trusted:
        return None
    from ikigai_core.trust import untrusted_reason

    return (f"{' and '.join(names)} of {project} not sent to the model: "
            f"{untrusted_reason(project)}")


@hookimpl(trylast=True)
def ikigai_system_prompt(cwd: Path, home: Path) -> list[str]:
    """Each instruction file of a trusted project, under a heading naming it."""
    project, names, trusted = _instructions(cwd, home)
    if not trusted:
        return []
    fragments = []
    for name in names:
        text = read_text(project / name)
        if text and text.strip():
            fragments.append(f"## Project instructions ({name})\n\n{text.strip()}")
    return fragments
