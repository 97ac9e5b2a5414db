"""The corpus of real tool schemas in ``tests/corpus/``, as registry tools.

Each file holds ``{"source": where it came from, "schemas": {name: parameters}}``;
a tool's name is its file's stem and key, made a valid tool name (``mcp_servers.git_add``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ikigai_core.tools import Tool

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def corpus_files() -> list[Path]:
    """Every corpus file, sorted."""
    return sorted(CORPUS.glob("*.json"))


def corpus() -> Iterator[tuple[str, dict[str, Any]]]:
    """``(id, parameters)`` for every schema in the corpus: ``file/key``."""
    for path in corpus_files():
        for key, schema in json.loads(path.read_text())["schemas"].items():
            yield f"{path.stem}/{key}", schema


def corpus_tool(ident: str, parameters: dict[str, Any]) -> Tool:
    """A registry tool with ``parameters`` and a valid name made from ``ident``."""
    name = re.sub(r"[^A-Za-z0-9_-]", "_", ident.split("/", 1)[1])[:64]
    return Tool(name=name, description=f"Corpus schema {ident}", parameters=parameters,
                command=("/bin/true",), source="test")
