"""Fixtures for the core tests."""

from __future__ import annotations

import sys
import textwrap

import pytest


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A fake site-packages on sys.path: ``install(name, module_source)`` adds a distribution
    whose ``ikigai`` entry point loads ``module_source``."""
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))

    def install(dist: str, entry: str, source: str, version: str = "0.3") -> None:
        module = f"{dist.replace('-', '_')}_plugin"
        (root / f"{module}.py").write_text(textwrap.dedent(source))
        info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
        (info / "entry_points.txt").write_text(f"[ikigai]\n{entry} = {module}\n")
        sys.modules.pop(module, None)

    return install
