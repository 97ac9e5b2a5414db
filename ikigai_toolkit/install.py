"""This installation and the machine it runs on: where the console scripts are (the built-in
tools, the ripgrep wheel's ``rg``), and how many processors a process may use. Standard
library only: the built-in tools import it, and so does the core."""

from __future__ import annotations

import os
import sys

IN_VENV = os.name == "posix" and sys.prefix != sys.base_prefix
"""A virtual environment on POSIX, whose scripts are always in ``<venv>/bin``."""


def scripts_dir() -> str:
    """pip's scripts folder for this interpreter. In a virtual environment it is known
    without loading ``sysconfig``'s configuration (the start-up ledger)."""
    if IN_VENV:
        return os.path.join(sys.prefix, "bin")
    import sysconfig

    return sysconfig.get_path("scripts")


def processors() -> int:
    """How many processors this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
