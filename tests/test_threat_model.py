"""docs/security.md's threat-model table names, for every "protected", the test that proves
it: each named file and test must exist, so the table cannot point at a test that is gone."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def table_rows() -> list[str]:
    text = (ROOT / "docs" / "security.md").read_text()
    section = text.split("## Threat model", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("| ") and "---" not in line][1:]


def references(cell: str) -> list[tuple[Path, str | None]]:
    """``(file or folder, test name or None)`` for each backticked reference of a cell; a
    ``::name`` alone is in the file named before it."""
    found: list[tuple[Path, str | None]] = []
    current: Path | None = None
    for ref in re.findall(r"`([^`]*(?:\.py|::|/)[^`]*)`", cell):
        where, _, name = ref.partition("::")
        if where:
            current = ROOT / where if where.startswith("ikigai_") else ROOT / "tests" / where
        assert current is not None, ref
        found.append((current, name or None))
    return found


def test_the_table_has_a_row_per_asset_and_attacker():
    rows = table_rows()
    assert len(rows) >= 15
    assert all(row.count(" | ") == 3 for row in rows), rows


def test_every_test_the_threat_model_names_exists():
    for row in table_rows():
        proved_by = row.rsplit(" | ", 1)[1]
        refs = references(proved_by)
        assert refs, row
        for path, name in refs:
            assert path.exists(), (row, path)
            if name is not None:
                assert re.search(rf"^def {re.escape(name)}\(", path.read_text(), re.M), (path, name)
