"""`ikigai tool list` on a warm cache stays light: no httpx, no jsonschema (issue 2)."""

from __future__ import annotations

import os
from importlib.metadata import entry_points

import pytest

from tests.support.imports import heavy_imports
from tests.support.tools import write_tool


@pytest.fixture
def tools_home(isolated_home):
    """``$IKIGAI_HOME`` with three user tools, so the schema cache has something to hold."""
    for name in ("alpha", "beta", "gamma"):
        write_tool(isolated_home / "tools", f"{name}-tool")
    return isolated_home


def test_warm_tool_list_imports_neither_httpx_nor_jsonschema(tools_home, tmp_path):
    # Every installed plugin loads (a provider importing httpx at import time fails
    # here) except the example, whose case is the next test.
    env = {**os.environ, "IKIGAI_DISABLE_PLUGINS": "example-tools"}
    cold = heavy_imports(["tool", "list"], env=env, cwd=str(tmp_path))
    assert "jsonschema" in cold  # the cold run validated the schemas it asked for
    warm = heavy_imports(["tool", "list"], env=env, cwd=str(tmp_path))
    assert warm == [], (f"a warm `ikigai tool list` imported {warm}; see who with "
                        "`python -X importtime -m ikigai_core.cli tool list`")


def test_warm_tool_list_stays_light_with_a_plugin_giving_schemas(tools_home, tmp_path):
    if "example-tools" not in entry_points(group="ikigai").names:
        pytest.skip("ikigai-example-tools is not installed")
    heavy_imports(["tool", "list"], env=os.environ, cwd=str(tmp_path))
    assert heavy_imports(["tool", "list"], env=os.environ, cwd=str(tmp_path)) == []
