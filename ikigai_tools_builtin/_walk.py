"""Directory walking shared by glob and grep: path joining and failure-tolerant listing."""

from __future__ import annotations

import os


def join(directory: str, name: str) -> str:
    """``directory/name`` as the caller spelled the directory (``""`` is the current directory)."""
    if not directory:
        return name
    return directory + name if directory.endswith("/") else directory + "/" + name


def entries(directory: str) -> list[os.DirEntry]:
    """The entries of ``directory``; an unreadable or vanished directory has none."""
    try:
        with os.scandir(directory or ".") as scan:
            return list(scan)
    except OSError:
        return []


def is_dir(entry: os.DirEntry) -> bool:
    """Whether ``entry`` is a directory, following symlinks; a symlink loop is not."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def is_file(entry: os.DirEntry) -> bool:
    """Whether ``entry`` is a regular file, following symlinks; a symlink loop is not."""
    try:
        return entry.is_file()
    except OSError:
        return False
