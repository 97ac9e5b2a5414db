"""Fixtures for the core tests."""

from __future__ import annotations

import os
import shutil
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


@pytest.fixture
def counted(monkeypatch):
    """``counted(owner, name)`` replaces ``owner.name`` with a wrapper that records each
    call's first argument in the list it returns, then calls the real function."""

    def count(owner: object, name: str) -> list:
        calls = []
        real = getattr(owner, name)

        def counting(first, *args, **kwargs):
            calls.append(first)
            return real(first, *args, **kwargs)

        monkeypatch.setattr(owner, name, counting)
        return calls

    return count


@pytest.fixture
def unprivileged():
    """The command prefix that runs a tool with permission bits enforced.

    As root, ``setpriv`` drops the capabilities that bypass them; otherwise nothing is needed.
    """
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root and setpriv is missing: permission bits cannot be enforced")
    return (setpriv, "--bounding-set=-dac_override,-dac_read_search")
