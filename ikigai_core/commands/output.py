"""The CLI's printing, for people and for programs: no raw control characters, strict JSON."""

from __future__ import annotations

import re
from typing import Any

import click

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str, *, keep_newlines: bool = True) -> str:
    """``text`` with control characters escaped, so a tool cannot drive the terminal, and
    undecodable bytes (surrogates, e.g. from a file name) spelled ``\\udcff``, so it prints."""
    escaped = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    escaped = escaped.encode("utf-8", "backslashreplace").decode("utf-8")
    return escaped if keep_newlines else escaped.replace("\n", "\\n")


def dumps(value: Any, *, indent: int | None = None) -> str:
    """Strict JSON (no NaN), non-ASCII kept as is unless a string holds an undecodable
    byte (a surrogate, e.g. from a file name): then all of it is ASCII-escaped, so it prints."""
    import json  # lazy, with strictjson: `ikigai --help` prints no JSON

    from ikigai_core.strictjson import SURROGATE

    text = json.dumps(value, indent=indent, ensure_ascii=False, allow_nan=False)
    if SURROGATE.search(text):
        text = json.dumps(value, indent=indent, allow_nan=False)
    return text


def echo_json(value: Any) -> None:
    """Print ``value`` as indented strict JSON on stdout."""
    click.echo(dumps(value, indent=2))


def warn(message: str) -> None:
    """One line on stderr, prefixed ``ikigai:``."""
    click.echo(f"ikigai: {printable(message, keep_newlines=False)}", err=True)
