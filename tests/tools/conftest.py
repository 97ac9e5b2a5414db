"""Run the installed built-in tools as real subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import mounts

BIN = Path(sys.executable).parent


@dataclass
class ToolRun:
    """One finished tool process: ``result`` is the parsed stdout object (``None`` on exit != 0)."""

    returncode: int
    stdout: bytes
    stderr: str
    result: dict | None


def _reject_constant(name: str) -> None:
    """JSON must not hold NaN or Infinity."""
    raise ValueError(f"non-standard JSON constant {name}")


def run_installed(
    tool: str,
    args: dict | None = None,
    *,
    raw: bytes | None = None,
    argv: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
    cwd: Path | str | None = None,
    wrapper: tuple[str, ...] = (),
    timeout: float = 60,
) -> ToolRun:
    """Run the installed ``<tool>-tool`` with ``args`` as JSON on stdin.

    On exit 0 stdout must be exactly one JSON object in strict UTF-8; it is parsed into ``result``.
    """
    exe = BIN / f"{tool}-tool"
    if not exe.exists():
        pytest.skip(f"{exe} is not installed; run `pip install -e .` in the checkout")
    data = raw if raw is not None else json.dumps(args).encode()
    proc = subprocess.run(
        [*wrapper, str(exe), *argv],
        input=data,
        capture_output=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        timeout=timeout,
    )
    result = None
    if proc.returncode == 0 and not argv:
        result = json.loads(proc.stdout.decode("utf-8"), parse_constant=_reject_constant)
        assert isinstance(result, dict)
    return ToolRun(proc.returncode, proc.stdout, proc.stderr.decode("utf-8", "replace"), result)


@pytest.fixture
def run_tool():
    """``run_tool("grep", {...}, cwd=..., env=...)``: see :func:`run_installed`."""
    return run_installed


@pytest.fixture
def tiny_fs(tmp_path):
    """A 64 KiB tmpfs: the disk fills up for real."""
    with mounts.tiny_fs(tmp_path / "tiny") as mountpoint:
        yield mountpoint


@pytest.fixture
def busy_file(tmp_path):
    """``busy/f``: a file with a file bind-mounted on it, so renaming onto it fails (EBUSY)."""
    directory = tmp_path / "busy"
    directory.mkdir()
    target, source = directory / "f", tmp_path / "source"
    target.write_text("old content\n")
    source.write_text("old content\n")
    mounts.mount("--bind", str(source), str(target))
    yield target
    subprocess.run(["umount", str(target)], check=True)
