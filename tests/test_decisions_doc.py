"""docs/decisions.md's current decisions and start-up ledger name the test that guards each
rule and trick: every named test must exist, so a guard cannot silently go (issue 23)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def current_part() -> str:
    """The text above the dated log: what holds now."""
    return (ROOT / "docs" / "decisions.md").read_text().split("\n## The log", 1)[0]


def named_tests(text: str) -> list[tuple[str, str]]:
    """``(file, test)`` for each backticked ``path.py::test_name``; a ``::test_name`` alone is
    in the file named before it."""
    found: list[tuple[str, str]] = []
    current = ""
    for where, name in re.findall(r"`([\w/.]*\.py)?::(test_\w+)`", text):
        current = where or current
        assert current, name
        found.append((current, name))
    return found


def test_the_current_part_has_decisions_and_a_ledger():
    text = current_part()
    assert "## Current decisions" in text and "## The start-up ledger" in text
    assert "less than 1 % of start-up" in text
    assert len(named_tests(text)) >= 60


def test_every_guard_the_decisions_name_exists():
    for where, name in named_tests(current_part()):
        path = ROOT / where
        assert path.is_file(), where
        assert re.search(rf"^(    )?def {name}\(", path.read_text(), re.M), (where, name)
