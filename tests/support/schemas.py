"""Tool schemas for the provider transformation tests.

``BUILTIN`` holds the six built-in tools' schemas exactly as spec 001 gives them;
the others cover nesting, optional fields, enums and arrays of objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ikigai_core.tools import Tool

PATH = {"type": "string", "description": "Absolute or relative path to file"}
SEARCH_DIR = {"type": "string", "description": "Directory to search in (default: current directory)"}

BUILTIN: dict[str, dict[str, Any]] = {
    "bash": {
        "name": "bash",
        "description": "Execute a shell command and return output",
        "parameters": {
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "Shell command to execute"},
            },
            "required": ["command"],
        },
    },
    "file_read": {
        "name": "file_read",
        "description": "Read contents of a file",
        "parameters": {
            "type": "object",
            "properties": {
                "file_path": PATH,
                "offset": {"type": "integer",
                           "description": "Line number to start reading from (1-based)"},
                "limit": {"type": "integer", "description": "Number of lines to read"},
            },
            "required": ["file_path"],
        },
    },
    "file_write": {
        "name": "file_write",
        "description": "Write content to a file (creates or overwrites)",
        "parameters": {
            "type": "object",
            "properties": {
                "file_path": PATH,
                "content": {"type": "string", "description": "Content to write to file"},
            },
            "required": ["file_path", "content"],
        },
    },
    "file_edit": {
        "name": "file_edit",
        "description": "Edit a file by replacing exact text matches. "
                       "You must read the file before editing.",
        "parameters": {
            "type": "object",
            "properties": {
                "file_path": PATH,
                "old_string": {"type": "string", "description": "Exact text to find and replace"},
                "new_string": {"type": "string",
                               "description": "Text to replace old_string with"},
                "replace_all": {
                    "type": "boolean",
                    "description": "Replace all occurrences (default: false, fails if not unique)",
                },
            },
            "required": ["file_path", "old_string", "new_string"],
        },
    },
    "glob": {
        "name": "glob",
        "description": "Find files matching a glob pattern",
        "parameters": {
            "type": "object",
            "properties": {
                "pattern": {"type": "string",
                            "description": "Glob pattern (e.g., '*.txt', 'src/**/*.c')"},
                "path": SEARCH_DIR,
            },
            "required": ["pattern"],
        },
    },
    "grep": {
        "name": "grep",
        "description": "Search for pattern in files using regular expressions",
        "parameters": {
            "type": "object",
            "properties": {
                "pattern": {"type": "string",
                            "description": "Regular expression pattern (POSIX extended)"},
                "glob": {"type": "string",
                         "description": "Glob pattern to filter files (e.g., '*.c')"},
                "path": SEARCH_DIR,
            },
            "required": ["pattern"],
        },
    },
}

NESTED = {
    "type": "object",
    "properties": {
        "target": {
            "type": "object",
            "description": "Where to deploy",
            "properties": {
                "host": {"type": "string"},
                "port": {"type": "integer", "minimum": 1, "maximum": 65535},
                "tls": {"type": "object", "properties": {"verify": {"type": "boolean"}}},
            },
            "required": ["host"],
            "additionalProperties": False,
        },
        "mode": {"type": "string", "enum": ["fast", "safe"], "description": "Deploy mode"},
        "steps": {
            "type": "array",
            "description": "Steps to run, in order",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "retries": {"type": "integer"},
                    "env": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["name"],
            },
            "minItems": 1,
        },
        "level": {"enum": [1, 2, 3]},
        "note": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    },
    "required": ["target", "steps"],
}
"""Nested objects, optional fields at every depth, enums, an array of objects, anyOf."""

NO_PARAMETERS = {"type": "object", "properties": {}}


def tool(name: str, parameters: Mapping[str, Any], description: str = "") -> Tool:
    """A registry tool with these parameters (runs nothing)."""
    return Tool(name=name, description=description or f"The {name} tool",
                parameters=parameters, command=(f"{name}-tool",), source="test")


def builtin_tool(name: str) -> Tool:
    """One built-in tool as a registry entry."""
    return tool(name, BUILTIN[name]["parameters"], BUILTIN[name]["description"])


def builtin_tools() -> list[Tool]:
    """The six built-in tools as registry entries, sorted by name."""
    return [builtin_tool(name) for name in sorted(BUILTIN)]
