"""Run every ``benchmarks/bench_*.py`` in turn (on demand; never part of the test suite).

Usage: ``python benchmarks/run.py [NAME ...]`` (e.g. ``discovery``) from the checkout,
or ``tox -e bench``. Exits non-zero if any benchmark script failed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(names: list[str]) -> int:
    """Run the selected scripts (all by default); return how many failed."""
    scripts = sorted(HERE.glob("bench_*.py"))
    if names:
        scripts = [s for s in scripts if s.stem.removeprefix("bench_") in names]
    if not scripts:
        print(f"no benchmark matches {' '.join(names)}", file=sys.stderr)
        return 1
    failed = 0
    for script in scripts:
        print(f"== {script.name}", flush=True)
        code = subprocess.run([sys.executable, str(script)], cwd=HERE.parent).returncode
        if code != 0:
            print(f"== {script.name} FAILED with exit code {code}", flush=True)
            failed += 1
        print(flush=True)
    return failed


if __name__ == "__main__":
    sys.exit(1 if main(sys.argv[1:]) else 0)
