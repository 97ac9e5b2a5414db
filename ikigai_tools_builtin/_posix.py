"""POSIX patterns in Python ``re`` syntax: glob patterns (glob, grep's filter, .gitignore) and ERE.

Python's ``re`` reads several POSIX constructs differently; the translators below make the
documented POSIX meaning hold: bracket classes such as ``[[:alpha:]]``, a backslash that is
literal inside brackets, ``]`` first in a bracket, ``\\<``/``\\>``, a leading ``*``, stacked
repetitions (``a**``), and ``(?`` (literal in ERE, an extension in Python).
"""

from __future__ import annotations

import re

CLASSES = {
    "alpha": "a-zA-Z",
    "digit": "0-9",
    "alnum": "a-zA-Z0-9",
    "upper": "A-Z",
    "lower": "a-z",
    "space": " \\t\\r\\f\\v",
    "blank": " \\t",
    "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
    "xdigit": "0-9A-Fa-f",
    "cntrl": "\\x00-\\x1f\\x7f",
    "print": "\\x20-\\x7e",
    "graph": "\\x21-\\x7e",
    "word": "a-zA-Z0-9_",
}


class PatternError(ValueError):
    """A pattern that cannot be translated; the message says why."""


def bracket(pattern: str, start: int, negations: str = "^") -> tuple[str, int]:
    """Translate the bracket expression opening at ``pattern[start] == "["``.

    Returns the Python character set and the index just past the closing ``]``. A negated set
    never matches a newline, so a grep match stays within one line.

    :raises PatternError: the bracket is not closed, or names an unknown class.
    """
    i = start + 1
    negate = i < len(pattern) and pattern[i] in negations
    if negate:
        i += 1
    items: list[str] = []
    first = True
    while True:
        if i >= len(pattern):
            raise PatternError("unterminated [")
        char = pattern[i]
        if char == "]" and not first:
            break
        first = False
        if pattern.startswith("[:", i):
            end = pattern.find(":]", i + 2)
            if end < 0:
                raise PatternError("unterminated [")
            name = pattern[i + 2 : end]
            if name not in CLASSES:
                raise PatternError(f"unknown character class [:{name}:]")
            items.append(CLASSES[name])
            i = end + 2
            continue
        if pattern.startswith(("[.", "[="), i):
            end = pattern.find(pattern[i + 1] + "]", i + 2)
            if end < 0 or end == i + 2:
                raise PatternError("unterminated [")
            char, i = pattern[i + 2 : end], end + 2
        else:
            i += 1
        if i + 1 < len(pattern) and pattern[i] == "-" and pattern[i + 1] != "]":
            high = pattern[i + 1]
            if high < char:
                raise PatternError(f"invalid range {char}-{high}")
            items.append(f"{re.escape(char)}-{re.escape(high)}")
            i += 2
        else:
            items.append(re.escape(char))
    body = "".join(items)
    return (f"[^{body}\\n]" if negate else f"[{body}]"), i + 1


def glob_part(part: str, hidden_literal: bool = True) -> str:
    """Translate one glob component (no ``/``): ``*``, ``?``, ``[...]``, ``\\`` escapes.

    With ``hidden_literal`` a wildcard never matches a leading ``.`` (POSIX glob).

    :raises PatternError: an unterminated bracket.
    """
    out: list[str] = []
    i = 0
    while i < len(part):
        char = part[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            regex, i = bracket(part, i, "!^")
            out.append(regex)
            continue
        elif char == "\\" and i + 1 < len(part):
            i += 1
            out.append(re.escape(part[i]))
        else:
            out.append(re.escape(char))
        i += 1
    regex = "".join(out)
    if hidden_literal and part[:1] in ("*", "?", "["):
        regex = "(?!\\.)" + regex
    return regex


def glob_path(pattern: str, hidden_literal: bool = False) -> str:
    """Translate a glob over a relative path: ``**`` spans any number of directories."""
    parts = pattern.split("/")
    out: list[str] = []
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            out.append(".*" if last else "(?:[^/]+/)*")
        else:
            out.append(glob_part(part, hidden_literal) + ("" if last else "/"))
    return "".join(out)


def has_magic(part: str) -> bool:
    """True when a glob component contains a wildcard or bracket."""
    return any(char in part for char in "*?[")


def unescape(part: str) -> str:
    """A wildcard-free glob component with its backslash escapes removed."""
    return re.sub(r"\\(.)", r"\1", part)


def ere(pattern: str) -> str:
    """Translate a POSIX extended regular expression to Python ``re`` syntax.

    Newlines in ``pattern`` separate alternatives (as in grep).

    :raises PatternError: a construct that is invalid in ERE (``re.compile`` checks the rest).
    """
    if "\n" in pattern:
        return "|".join(f"(?:{ere(line)})" for line in pattern.split("\n"))
    out: list[str] = []
    groups: list[int] = []
    atom = -1  # index in ``out`` where the last atom starts; -1 when no atom precedes
    quantified = False
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char in "*+?{" and atom < 0:  # nothing to repeat: literal in ERE, as in GNU grep
            out.append(re.escape(char))
            atom, quantified = len(out) - 1, False
            i += 1
            continue
        if char in "*+?{":
            end = i + 1
            if char == "{":
                close = pattern.find("}", i)
                if close < 0 or not re.fullmatch(r"\d+(,\d*)?|,\d+", pattern[i + 1 : close]):
                    out.append("\\{")
                    atom, quantified = len(out) - 1, False
                    i += 1
                    continue
                end = close + 1
            if quantified:
                out[atom:] = ["(?:" + "".join(out[atom:]) + ")"]
            out.append(pattern[i:end])
            quantified = True
            i = end
            continue
        quantified = False
        if char == "(":
            groups.append(len(out))
            out.append("(")
            atom = -1
        elif char == ")":
            if not groups:
                raise PatternError("Unmatched ) or \\)")
            out.append(")")
            atom = groups.pop()
        elif char == "|":
            out.append("|")
            atom = -1
        elif char in "^$":
            out.append(char)
            atom = -1
        elif char == "[":
            regex, i = bracket(pattern, i)
            atom = len(out)
            out.append(regex)
            continue
        elif char == "\\":
            if i + 1 >= len(pattern):
                raise PatternError("Trailing backslash")
            i += 1
            atom = len(out)
            out.append(_escape(pattern[i]))
        else:
            atom = len(out)
            out.append(char if char == "." else re.escape(char))
        i += 1
    if groups:
        raise PatternError("Unmatched ( or \\(")
    return "".join(out)


def _escape(char: str) -> str:
    """Translate the escape ``\\char``: GNU word boundaries, classes kept to one line."""
    if char == "<":
        return r"\b(?=\w)"
    if char == ">":
        return r"\b(?<=\w)"
    if char == "s":
        return r"[^\S\n]"
    if char in "WD":
        return f"[^\\{char.lower()}\\n]"
    if char in "Swbd" or char.isdigit():
        return "\\" + char
    return re.escape(char)
