"""``load_skill``: the model loads a skill by name; its instructions come back.

Run as ``python -m ikigai_tools_builtin.load_skill_tool NAME=PATH ...`` with the skills the
conversation may load (ikigai gives them, see :func:`ikigai_core.skills.skill_tool_sources`).
The instructions are the skill file's markdown after its front matter, cut to the output
budget like any built-in tool's text. ikigai notices a successful call and advertises the
skill's own tools from the model's next turn. Like every built-in tool it needs the standard
library alone (``_skillfile.py`` reads the file; the core checked the skill when it started).
"""

from __future__ import annotations

import os
import sys

from ikigai_toolkit.skillfile import LOAD_SKILL_SCHEMA, SkillFileError, read_skill_file
from ikigai_tools_builtin._protocol import run_tool


def handle(skills: dict[str, str], args: dict) -> dict:
    """The body of the skill ``args["name"]``, or ``NOT_FOUND`` naming the loadable ones."""
    name = args["name"]
    path = skills.get(name)
    if path is None:
        known = ", ".join(sorted(skills)) or "none"
        return {"error": f"no skill named '{name}'; the skills are: {known}",
                "error_code": "NOT_FOUND"}
    try:
        _, body = read_skill_file(path)
    except SkillFileError as exc:
        return {"error": f"skill '{name}' cannot be read: {exc}", "error_code": "READ_FAILED"}
    return {"skill": name, "directory": os.path.dirname(path), "output": body.strip()}


def main() -> None:
    """Take the ``NAME=PATH`` arguments, then run the tool protocol on the rest."""
    pairs = [arg.partition("=") for arg in sys.argv[1:] if "=" in arg]
    skills = {name: path for name, _, path in pairs}
    sys.argv[1:] = [arg for arg in sys.argv[1:] if "=" not in arg]
    run_tool(dict(LOAD_SKILL_SCHEMA), lambda args: handle(skills, args))


if __name__ == "__main__":
    main()
