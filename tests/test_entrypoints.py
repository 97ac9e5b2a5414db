"""The entry-point cache: same answer as importlib.metadata, refreshed when sys.path changes."""

from __future__ import annotations

import json
import sys

import pytest

from ikigai_core import entrypoints
from ikigai_core.entrypoints import PluginEntryPoint, plugin_entry_points
from ikigai_core.plugins import get_plugin_manager

PLUGIN = """
from ikigai_core import hookimpl
class Holder:
    class Inner:
        @staticmethod
        @hookimpl
        def ikigai_tool_sources():
            return []
"""


@pytest.fixture
def scans(counted):
    """Count how often importlib.metadata is really asked."""
    return counted(entrypoints, "_scan")


def names(eps):
    return {ep.name for ep in eps}


def test_second_call_is_served_from_the_cache(site, tmp_path, scans):
    site("ikigai-acme", "acme", PLUGIN)
    first = plugin_entry_points("ikigai", tmp_path / "cache")
    second = plugin_entry_points("ikigai", tmp_path / "cache")
    assert first == second and "acme" in names(first)
    assert scans == ["ikigai"]
    acme = [ep for ep in second if ep.name == "acme"][0]
    assert (acme.distribution, acme.version, acme.label) == ("ikigai-acme", "0.3",
                                                             " (ikigai-acme 0.3)")


def test_installing_a_distribution_is_seen_at_once(site, tmp_path, scans):
    site("ikigai-acme", "acme", PLUGIN)
    assert "beta" not in names(plugin_entry_points("ikigai", tmp_path / "cache"))
    site("ikigai-beta", "beta", PLUGIN)
    assert "beta" in names(plugin_entry_points("ikigai", tmp_path / "cache"))
    assert len(scans) == 2


@pytest.mark.parametrize("garbage", ["{oops", "[]", '{"key": 1}', '{"key": [], "x": 1}'])
def test_corrupt_cache_is_asked_again(site, tmp_path, scans, garbage):
    site("ikigai-acme", "acme", PLUGIN)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "entry-points-ikigai.json").write_text(garbage)
    assert "acme" in names(plugin_entry_points("ikigai", cache))
    assert json.loads((cache / "entry-points-ikigai.json").read_text())["value"]


def test_unwritable_cache_still_answers(site, tmp_path):
    site("ikigai-acme", "acme", PLUGIN)
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    assert "acme" in names(plugin_entry_points("ikigai", blocker / "cache"))


def test_no_cache_dir_asks_every_time(site, scans):
    site("ikigai-acme", "acme", PLUGIN)
    plugin_entry_points("ikigai")
    plugin_entry_points("ikigai")
    assert scans == ["ikigai", "ikigai"]


def test_load_follows_module_and_attribute_path(site):
    site("ikigai-acme", "acme", PLUGIN)
    module = PluginEntryPoint("acme", "ikigai_acme_plugin", None, None).load()
    inner = PluginEntryPoint("acme", "ikigai_acme_plugin : Holder.Inner", None, None).load()
    assert inner is module.Holder.Inner
    assert PluginEntryPoint("x", "m", None, None).label == ""


def test_plugin_manager_loads_cached_plugins(site, tmp_path, scans):
    site("ikigai-acme", "acme", "from ikigai_core import hookimpl\n"
                                "@hookimpl\ndef ikigai_tool_sources():\n    return []\n")
    for _ in range(2):
        pm = get_plugin_manager(environ={}, cache_dir=tmp_path / "cache")
        assert pm.get_plugin("acme") is not None
    assert scans == ["ikigai"]


def test_reinstalling_the_same_version_with_new_entry_points_is_seen(site, tmp_path):
    import shutil
    import time

    site("ikigai-acme", "acme", PLUGIN)
    assert "acme" in names(plugin_entry_points("ikigai", tmp_path / "cache"))
    info = next((tmp_path / "site").glob("ikigai_acme-0.3.dist-info"))
    time.sleep(0.05)  # a real reinstall takes far longer than the filesystem's timestamp tick
    shutil.rmtree(info)
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ikigai-acme\nVersion: 0.3\n")
    (info / "entry_points.txt").write_text("[ikigai]\nacme2 = ikigai_acme_plugin\n")
    assert names(plugin_entry_points("ikigai", tmp_path / "cache")) >= {"acme2"}


def test_python_c_and_the_console_script_share_the_cache(site, tmp_path, scans, monkeypatch):
    """``sys.path[0]`` is ``""`` for ``python -c`` and the script's folder for ``ikigai``."""
    site("ikigai-acme", "acme", PLUGIN)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.chdir(tmp_path)
    rest = list(sys.path)
    for first in ("", str(bin_dir), "", str(bin_dir)):
        monkeypatch.setattr(sys, "path", [first, *rest])
        assert "acme" in names(plugin_entry_points("ikigai", tmp_path / "cache"))
    assert scans == ["ikigai"]
