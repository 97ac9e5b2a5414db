"""Write real tool executables for tests: the protocol end to end, no mocks."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def schema_for(name: str, **properties: Any) -> dict[str, Any]:
    """A minimal valid schema for a tool called ``name``."""
    return {
        "name": name,
        "description": f"The {name} test tool",
        "parameters": {"type": "object", "properties": properties or {}},
    }


def write_tool(
    directory: Path,
    filename: str,
    *,
    schema: Mapping[str, Any] | str | None = None,
    body: str = "print(json.dumps({'ok': True, 'args': json.load(sys.stdin)}))",
    schema_body: str | None = None,
    mode: int = 0o755,
) -> Path:
    """Write a Python tool at ``directory/filename``.

    ``--schema`` prints ``schema`` (a dict is dumped as JSON, a string printed raw) or
    runs ``schema_body``; otherwise ``body`` runs with ``json``, ``sys``, ``os``,
    ``time`` and ``signal`` imported.
    """
    directory.mkdir(parents=True, exist_ok=True)
    if schema is None:
        schema = schema_for(filename.removesuffix("-tool").replace("-", "_"))
    if schema_body is None:
        text = schema if isinstance(schema, str) else json.dumps(schema)
        schema_body = f"sys.stdout.write({text!r})"
    source = (
        f"#!{sys.executable}\n"
        "import json, os, signal, sys, time\n"
        "if sys.argv[1:] == ['--schema']:\n"
        f"{textwrap.indent(textwrap.dedent(schema_body), '    ')}\n"
        "    sys.exit(0)\n"
        f"{textwrap.dedent(body)}\n"
    )
    path = directory / filename
    path.write_text(source)
    os.chmod(path, mode)
    return path


def write_shell_tool(directory: Path, filename: str, script: str, mode: int = 0o755) -> Path:
    """Write a ``/bin/sh`` tool whose whole text is ``script`` (after the shebang)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / filename
    path.write_text("#!/bin/sh\n" + textwrap.dedent(script))
    os.chmod(path, mode)
    return path


def write_hang_tool(directory: Path, pids: Path) -> Path:
    """Write ``hang-tool``: it appends its pid to ``pids`` and sleeps a minute."""
    return write_tool(directory, "hang-tool", body=f"""
        with open({str(pids)!r}, "a") as f:
            f.write(f"{{os.getpid()}}\\n")
        time.sleep(60)
    """)
