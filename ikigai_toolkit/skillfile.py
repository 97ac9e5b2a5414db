"""A skill file read with the standard library alone: its front matter's text apart from its
body, or one line saying why it cannot be used.

Shared by the core (``ikigai_core/skills.py`` parses the front matter as YAML and checks its
fields) and the ``load_skill`` tool, which needs only the body: the tool process imports
neither the core (nor so pluggy) nor PyYAML, as every built-in tool (issue 22).
"""

from __future__ import annotations

import os

SKILL_FILE = "SKILL.md"
"""An Agent Skills folder's file (front matter required); any other ``NAME.md`` is a skill
of its own (front matter optional)."""
MAX_SKILL_BYTES = 256 * 1024
LOAD_SKILL_SCHEMA = {
    "name": "load_skill",
    "description": "Load a skill listed under Skills in the system prompt: its full "
                   "instructions come back, and the tools it brings are available from the "
                   "next turn.",
    "parameters": {
        "type": "object",
        "properties": {"name": {"type": "string", "description": "The skill's name"}},
        "required": ["name"],
    },
}
"""The schema of ``load_skill`` (``load_skill_tool.py``); the core gives it with the tool's
candidate, so discovery never asks the tool."""


class SkillFileError(Exception):
    """The skill file cannot be used; the message is the one-line reason."""


def read_skill_file(path: str | os.PathLike[str]) -> tuple[str | None, str]:
    """``(front matter text, body)`` of the skill file at ``path``; the front matter is
    ``None`` when there is none (allowed but in a ``SKILL.md``).

    :raises SkillFileError: too big, not UTF-8, unreadable, front matter missing or not closed.
    """
    try:
        if os.stat(path).st_size > MAX_SKILL_BYTES:
            raise SkillFileError(f"larger than {MAX_SKILL_BYTES // 1024} KiB")
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except UnicodeDecodeError:
        raise SkillFileError("not UTF-8 text") from None
    except OSError as exc:
        raise SkillFileError(f"cannot read: {exc.strerror}") from None
    front, body = split_front_matter(text)
    if front is None and os.path.basename(path) == SKILL_FILE:
        raise SkillFileError("no front matter: start SKILL.md with ---, name:, description:, ---")
    return front, body


def split_front_matter(text: str) -> tuple[str | None, str]:
    """``(front matter text, body)``: the lines between a first line ``---`` and the next
    ``---``; ``(None, text)`` when the first line is not ``---``.

    :raises SkillFileError: the front matter is not closed.
    """
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip() != "---":
        return None, text
    end = next((i for i, line in enumerate(lines[1:], 1) if line.rstrip() == "---"), None)
    if end is None:
        raise SkillFileError("front matter is not closed by a line '---'")
    return "".join(lines[1:end]), "".join(lines[end + 1:])
