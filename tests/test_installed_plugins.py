"""What `pip install` of the whole project (as tox does it) registers: every plugin, by entry point."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest

PROVIDERS = ("openai", "anthropic", "google")
DISTRIBUTIONS = {name: f"ikigai-provider-{name}" for name in PROVIDERS}
DISTRIBUTIONS.update({f"example-{name}": f"ikigai-example-{name}"
                      for name in ("tools", "ollama", "audit", "env", "session")})


def _missing() -> list[str]:
    missing = []
    for dist in DISTRIBUTIONS.values():
        try:
            version(dist)
        except PackageNotFoundError:
            missing.append(dist)
    return missing


MISSING = _missing()


@pytest.mark.skipif(bool(MISSING), reason=f"not installed: {', '.join(MISSING)}; install "
                    "the root and every provider and example in one pip call, as tox does")
def test_plugins_lists_every_installed_distribution():
    ran = subprocess.run([str(Path(sys.executable).parent / "ikigai"), "plugins", "--json"],
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    plugins = {entry["name"]: entry for entry in json.loads(ran.stdout)}
    for name, dist in DISTRIBUTIONS.items():
        assert plugins[name]["distribution"] == dist
        assert plugins[name]["version"] == version(dist)
        assert plugins[name]["builtin"] is False
    for name in PROVIDERS:
        assert "ikigai_provider_serializers" in plugins[name]["hooks"], f"{name}: no provider hook"
