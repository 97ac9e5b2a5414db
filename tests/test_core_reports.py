"""The core reports; the CLI prints: no ikigai_core module outside the CLI (cli.py and
commands/) imports click, not even for annotations, or writes to the terminal, checked on
the source's syntax tree."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import ikigai_core

PACKAGE = Path(ikigai_core.__file__).parent
CLI = {PACKAGE / "cli.py", *(PACKAGE / "commands").rglob("*.py")}
CORE = sorted(path for path in PACKAGE.rglob("*.py") if path not in CLI)
TERMINAL = {"print", "input", "breakpoint"}
STREAMS = {"stdout", "stderr", "__stdout__", "__stderr__"}


def problems(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = []
    for node in ast.walk(tree):
        where = f"{path}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import):
            found += [f"{where} imports {a.name}" for a in node.names
                      if a.name.split(".")[0] == "click"]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "click":
            found.append(f"{where} imports from {node.module}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in TERMINAL:
            found.append(f"{where} calls {node.func.id}()")
        elif isinstance(node, ast.Attribute) and node.attr in STREAMS \
                and isinstance(node.value, ast.Name) and node.value.id == "sys":
            found.append(f"{where} uses sys.{node.attr}")
    return found


def test_the_checker_sees_what_it_forbids(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("import sys\nimport click.testing\nfrom click import echo\n"
                      "print('x')\nsys.stderr.write('y')\n"
                      "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import click\n")
    assert [p.split(" ", 1)[1] for p in problems(sample)] == [
        "imports click.testing", "imports from click", "calls print()", "imports click",
        "uses sys.stderr"]


@pytest.mark.parametrize("path", CORE, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_core_module_neither_prints_nor_imports_click(path):
    assert problems(path) == []
