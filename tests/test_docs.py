"""docs/plugins.md cannot silently rot: its hook reference matches hookspecs.py, its code compiles."""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from types import SimpleNamespace

import pluggy
import pytest

from ikigai_core import hookspecs

DOC = Path(__file__).resolve().parents[1] / "docs" / "plugins.md"
TEXT = DOC.read_text(encoding="utf-8")
HOOKS = sorted(name for name in dir(hookspecs) if name.startswith("ikigai_"))
PLUGIN_BLOCKS = {
    f"docs/plugins.md:{TEXT.count(chr(10), 0, m.start()) + 2}": m.group(1)
    for m in re.finditer(r"```python\n(.*?)```", TEXT, re.S) if "@hookimpl" in m.group(1)
}


def documented(hook: str) -> str:
    """The reference section of ``hook``: from its heading to the next heading."""
    match = re.search(rf"^### `{hook}\((.*?)\)`\n(.*?)(?=^#)", TEXT, re.S | re.M)
    assert match, f"docs/plugins.md has no '### `{hook}(...)`' section"
    return match.group(0)


def bare_manager() -> pluggy.PluginManager:
    pm = pluggy.PluginManager("ikigai")
    pm.add_hookspecs(hookspecs)
    return pm


def test_there_are_hooks_to_document():
    assert {"ikigai_tool_sources", "ikigai_provider_serializers", "ikigai_wrap_result"} <= set(HOOKS)


@pytest.mark.parametrize("hook", HOOKS)
def test_every_hook_is_documented_with_its_arguments(hook):
    section = documented(hook)
    params = list(inspect.signature(getattr(hookspecs, hook)).parameters)
    heading = re.match(rf"### `{hook}\((.*?)\)`", section).group(1)
    assert [p.strip() for p in heading.split(",") if p.strip()] == params
    for param in params:
        assert f"`{param}`:" in section, f"argument {param} of {hook} is not described"
    for part in ("**Called:**", "**Arguments:**", "**Returns:**", "**firstresult:**"):
        assert part in section, f"{hook}: no {part}"


@pytest.mark.parametrize("hook", HOOKS)
def test_firstresult_flag_matches_the_hookspec(hook):
    flag = re.search(r"\*\*firstresult:\*\* (yes|no)", documented(hook)).group(1)
    assert (flag == "yes") == bool(getattr(bare_manager().hook, hook).spec.opts["firstresult"])


def test_every_hook_has_a_code_example():
    for hook in HOOKS:
        assert any(f"def {hook}(" in block for block in PLUGIN_BLOCKS.values()), hook


@pytest.mark.parametrize("where", PLUGIN_BLOCKS)
def test_plugin_examples_import_and_register_against_the_hookspecs(where):
    namespace: dict = {}
    exec(compile(PLUGIN_BLOCKS[where], where, "exec"), namespace)  # only defines things
    pm = bare_manager()
    pm.register(SimpleNamespace(**namespace), name="docs-example")  # checks argument names
    pm.check_pending()  # fails on a hook name hookspecs.py does not define
    assert pm.get_hookcallers(pm.get_plugin("docs-example"))
