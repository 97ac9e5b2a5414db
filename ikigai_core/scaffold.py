"""Write a new tool from a template (``ikigai tool new``): the tool, a test beside it, and
a line in the directory's README.md. All or nothing: a bad name, a file in the way or a
build that fails writes nothing."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

from ikigai_core.errors import IkigaiError, UsageError

TEMPLATES = Path(__file__).with_name("templates")
"""One ``LANG.tool`` per language and the shared ``test.tmpl`` (package data)."""
LANGUAGES = ("python", "bash", "node", "go", "c")
BUILD = {"go": ("go", "build", "-o"), "c": ("cc", "-o")}
"""Compiled languages: the command that builds ``NAME-tool`` from ``NAME-tool.LANG``."""
BUILD_TIMEOUT = 120
NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")
"""A name that is a tool name, a file name and an identifier in every template language."""


class NewTool(NamedTuple):
    """What :func:`new_tool` wrote."""

    name: str
    tool: Path
    test: Path
    source: Path | None
    """The source a compiled tool was built from (``None`` for scripts)."""


def new_tool(directory: Path, name: str, lang: str, *, force: bool = False,
             python: str = sys.executable) -> NewTool:
    """Write tool ``name`` in ``lang`` into ``directory`` (made if missing).

    :param force: replace files that exist.
    :param python: the interpreter a Python tool's shebang names (it must have ikigai_toolkit).
    :raises UsageError: a bad name or language, or a file in the way without ``force``.
    :raises IkigaiError: a compiled language whose compiler is missing, or a failed build.
    """
    if not NAME_RE.fullmatch(name):
        raise UsageError(f"invalid tool name {name!r}: use a letter, then up to 63 letters, "
                         "digits or _ (the file is NAME with - for _, plus -tool)")
    if lang not in LANGUAGES:
        raise UsageError(f"unknown language {lang!r}; use one of {', '.join(LANGUAGES)}")
    program = name.replace("_", "-") + "-tool"
    made = NewTool(name, directory / program, directory / f"test_{name}_tool.py",
                   directory / f"{program}.{lang}" if lang in BUILD else None)
    in_the_way = [path for path in (made.tool, made.test, made.source)
                  if path is not None and os.path.lexists(path)]
    if in_the_way and not force:
        raise UsageError(f"{in_the_way[0]} exists; pass --force to replace it")
    if lang in BUILD and shutil.which(BUILD[lang][0]) is None:
        raise IkigaiError(f"--lang {lang} needs {BUILD[lang][0]} on PATH to build {program}; "
                          "install it or choose another --lang")
    values = {"{{name}}": name, "{{program}}": program, "{{python}}": python}
    directory.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=directory, prefix=".ikigai-new-") as scratch:
        staged = Path(scratch)
        code = _fill(TEMPLATES / f"{lang}.tool", values)
        if made.source is None:
            _write(staged / program, code, 0o755)
        else:
            _write(staged / made.source.name, code, 0o644)
            _build(lang, staged / made.source.name, staged / program)
        _write(staged / made.test.name, _fill(TEMPLATES / "test.tmpl", values), 0o644)
        for path in (made.source, made.test, made.tool):  # the tool last: listed once whole
            if path is not None:
                os.replace(staged / path.name, path)
    _add_readme_line(directory / "README.md", name, lang, made.test.name)
    return made


def _fill(template: Path, values: dict[str, str]) -> str:
    text = template.read_text(encoding="utf-8")
    for placeholder, value in values.items():
        text = text.replace(placeholder, value)
    return text


def _write(path: Path, text: str, mode: int) -> None:
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)


def _build(lang: str, source: Path, output: Path) -> None:
    try:
        built = subprocess.run([*BUILD[lang], str(output), str(source)], capture_output=True,
                               text=True, cwd=source.parent, timeout=BUILD_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise IkigaiError(f"building {output.name} took over {BUILD_TIMEOUT} s; "
                          "nothing was written") from None
    if built.returncode != 0:
        last = (built.stderr.strip().splitlines() or ["no message"])[-1]
        raise IkigaiError(f"building {output.name} failed: {last}; nothing was written")


def _add_readme_line(readme: Path, name: str, lang: str, test: str) -> None:
    line = (f"- `{name}` ({lang}): shout TEXT back in capitals. Try `ikigai tool test {name} "
            f"'{{\"text\": \"hi\"}}'`; test with `pytest {test}`.\n")
    text = readme.read_text(encoding="utf-8") if readme.exists() else "# Tools\n\n"
    if f"- `{name}` (" not in text:
        readme.write_text(text + line, encoding="utf-8")
