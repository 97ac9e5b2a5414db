"""ikigai_core's public surface is whole and checked (issue 23, item 6): the three spellings
of its names in ``ikigai_core/__init__.py`` agree, and the skill types are importable from
it like the tool types."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import ikigai_core


def type_checking_imports() -> dict[str, str]:
    """Each name the ``if TYPE_CHECKING:`` block of ``ikigai_core/__init__.py`` imports,
    with its module."""
    tree = ast.parse(Path(ikigai_core.__file__).read_text())
    block = next(node for node in tree.body if isinstance(node, ast.If)
                 and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
    return {alias.asname or alias.name: str(node.module) for node in block.body
            if isinstance(node, ast.ImportFrom) for alias in node.names}


def test_the_three_spellings_of_the_public_names_agree():
    assert type_checking_imports() == ikigai_core._LAZY
    assert set(ikigai_core.__all__) == {*ikigai_core._LAZY, "hookimpl", "__version__"}
    assert ikigai_core.__all__ == sorted(set(ikigai_core.__all__))
    for name, module in ikigai_core._LAZY.items():
        assert getattr(ikigai_core, name) is getattr(importlib.import_module(module), name)


def test_the_skill_types_are_importable_like_the_tool_types(tmp_path):
    from ikigai_core import Skill, SkillDirectory, SkillScan, SkillSource, SkippedSkill

    (tmp_path / "greet.md").write_text("Say hello.\n")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "SKILL.md").write_text("no front matter\n")
    tmp_path.chmod(0o700)
    source = SkillDirectory(tmp_path, name="mine", precedence=5)
    assert isinstance(source, SkillSource)
    scan = source.scan()
    assert isinstance(scan, SkillScan)
    assert [(type(s), s.name) for s in (*scan.skills, *scan.skipped)] == [
        (Skill, "greet"), (SkippedSkill, "broken")]
