"""Real mounts for tests that need a full disk or a busy file (root only; skipped elsewhere)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def mount(*args: str) -> None:
    """Run ``mount`` or skip the test when this machine does not let us."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting needs root and mount(8)")
    proc = subprocess.run(["mount", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount here: {proc.stderr.strip()}")


@contextmanager
def tiny_fs(mountpoint: Path, size: str = "64k") -> Iterator[Path]:
    """A ``size`` tmpfs at ``mountpoint`` (created): the disk fills up for real."""
    mountpoint.mkdir(parents=True, exist_ok=True)
    mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mountpoint))
    try:
        yield mountpoint
    finally:
        subprocess.run(["umount", str(mountpoint)], check=True)


def fill(directory: Path) -> None:
    """Fill the filesystem holding ``directory``: the next write anywhere on it is ENOSPC."""
    with open(directory / "filler", "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 512)
        except OSError:
            pass
