"""Meta-tests: every hook is documented and tested (datasette's rule)."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from ikigai_core import hookspecs

HOOKS = sorted(name for name in dir(hookspecs) if name.startswith("ikigai_"))
TESTS = "\n".join(p.read_text() for p in Path(__file__).parent.rglob("test_*.py"))


def test_there_are_hooks_for_sources_providers_and_envelopes():
    assert {"ikigai_tool_sources", "ikigai_provider_serializers", "ikigai_wrap_result"} <= set(HOOKS)


@pytest.mark.parametrize("name", HOOKS)
def test_hook_is_documented(name):
    hook = getattr(hookspecs, name)
    doc = inspect.getdoc(hook)
    assert doc, f"{name} has no docstring"
    for param in inspect.signature(hook).parameters:
        assert f":param {param}:" in doc, f"{name} does not document {param}"
    assert ":returns:" in doc
    if getattr(hook, "ikigai_spec", {}).get("firstresult"):
        assert "Stops at first non-None result." in doc


@pytest.mark.parametrize("name", HOOKS)
def test_hook_has_a_test(name):
    assert re.search(rf"def {name}\(", TESTS), f"no test implements {name}"


def test_hook_names_are_not_folder_names():
    folders = {p.name for p in Path(hookspecs.__file__).parent.parent.iterdir() if p.is_dir()}
    assert not folders & set(HOOKS)
