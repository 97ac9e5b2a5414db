"""The caches under ``$IKIGAI_HOME/cache`` are shortcuts: one that others could write, or
that is nested too deeply for Python, is asked again and written anew, never obeyed and
never a traceback (the provider-key cache names the variables tools must not see)."""

from __future__ import annotations

import stat

import pytest

from tests.faults.support import ikigai

CACHES = ("provider-key-vars.json", "schemas.json", "entry-points-ikigai.json")
RUN = ("tool", "run", "bash", '{"command": "true"}')
"""A command that reads every cache: discovery, plugins, and the tool's environment."""


@pytest.fixture
def caches(isolated_home, tmp_path):
    """The cache folder after one :data:`RUN` filled it."""
    assert ikigai(*RUN, cwd=tmp_path).returncode == 0
    return isolated_home / "cache"


@pytest.mark.parametrize("name", CACHES)
@pytest.mark.parametrize("damage", ["world-writable", "deeply nested"])
def test_a_damaged_cache_is_asked_again(name, damage, caches, tmp_path):
    cache = caches / name
    if damage == "world-writable":
        cache.chmod(0o666)
    else:
        cache.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    proc = ikigai(*RUN, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert stat.S_IMODE(cache.stat().st_mode) == 0o600, "the cache was obeyed, not rebuilt"
    assert cache.read_bytes().startswith(b"{")
