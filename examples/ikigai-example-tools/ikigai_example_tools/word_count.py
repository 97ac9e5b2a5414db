"""The ``word_count`` tool: a JSON object on stdin, a JSON object on stdout.

Also answers ``--schema`` like any ``*-tool``, although ikigai does not need it
here: the plugin hands the schema to discovery directly.
"""

from __future__ import annotations

import sys
from typing import Any

SCHEMA: dict[str, Any] = {
    "name": "word_count",
    "description": "Count the words, lines and characters of a text.",
    "parameters": {
        "type": "object",
        "properties": {"text": {"type": "string", "description": "The text to count."}},
        "required": ["text"],
        "additionalProperties": False,
    },
}


def handle(args: dict[str, Any]) -> dict[str, Any]:
    """The counts for ``args["text"]``."""
    text = args["text"]
    return {"words": len(text.split()), "lines": len(text.splitlines()), "characters": len(text)}


def main() -> None:
    """``--schema`` prints the schema; otherwise read the arguments and print the counts."""
    import json  # here: the plugin imports this module at every start-up, for SCHEMA

    if sys.argv[1:] == ["--schema"]:
        json.dump(SCHEMA, sys.stdout)
        return
    json.dump(handle(json.load(sys.stdin)), sys.stdout)


if __name__ == "__main__":
    main()
