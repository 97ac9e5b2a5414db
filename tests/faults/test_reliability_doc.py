"""docs/reliability.md cannot rot: every test it names exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEXT = (ROOT / "docs" / "reliability.md").read_text(encoding="utf-8")


def named_tests() -> list[tuple[str, str]]:
    """``(file, test)`` for every ``file::test`` and every ``::test`` following one in a cell."""
    found = []
    for cell in re.findall(r"\|([^|\n]*tests/[^|\n]*)", TEXT):
        current = None
        for path, name in re.findall(r"`(tests/[\w/]+\.py)?::(test_\w+)`", cell):
            current = path or current
            found.append((current, name))
    return found


@pytest.mark.parametrize("path, name", named_tests())
def test_every_named_test_exists(path, name):
    source = (ROOT / path).read_text(encoding="utf-8")
    assert re.search(rf"^\s*def {name}\(", source, re.M), f"{path}::{name} does not exist"


def test_the_table_names_tests():
    assert len(named_tests()) > 60
