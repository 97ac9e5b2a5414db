"""``ikigai ARGS`` as a real process or in the test's own process, one answer shape for both:
a test keeps one case a real process (what a user runs) and runs its sibling cases, which take
the same path, in-process (cheaper, and seen by the coverage gate)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

IKIGAI = str(Path(sys.executable).with_name("ikigai"))


def run(*args: str, cwd: Path, real: bool, timeout: float = 60,
        ) -> subprocess.CompletedProcess[str]:
    """``ikigai ARGS`` in ``cwd`` with this process's environment: a real process when
    ``real``, else :func:`ikigai_core.cli.main` in this process (stdin empty either way)."""
    if real:
        return subprocess.run([IKIGAI, *args], cwd=cwd, capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)
    from click.testing import CliRunner

    from ikigai_core.cli import main

    here = Path.cwd()
    os.chdir(cwd)
    try:
        with CliRunner().isolation() as (out, err, _):
            try:
                main(list(args))  # as the program runs it: one line for an expected error
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
            stdout, stderr = out.getvalue().decode(), err.getvalue().decode()
    finally:
        os.chdir(here)
    return subprocess.CompletedProcess([IKIGAI, *args], code, stdout, stderr)
