"""POSIX patterns in Python ``re`` syntax: glob patterns (glob, grep's filter, .gitignore) and ERE.

Python's ``re`` reads several POSIX constructs differently; the translators below make the
documented POSIX meaning hold: bracket classes such as ``[[:alpha:]]``, a backslash that is
literal inside brackets, ``]`` first in a bracket, ``\\<``/``\\>``, a leading ``*``, stacked
repetitions (``a**``), and ``(?`` (literal in ERE, an extension in Python).

:func:`ere` also writes ripgrep's (Rust) syntax, for grep's fast path. Both translations agree
on bytes that are not UTF-8: grep decodes them to lone surrogates (``surrogateescape``), which
``.``, negated brackets and ``\\W``/``\\S``/``\\D`` never match, as Rust's regex never
matches invalid UTF-8 with them.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

CLASSES = {
    "alpha": "a-zA-Z",
    "digit": "0-9",
    "alnum": "a-zA-Z0-9",
    "upper": "A-Z",
    "lower": "a-z",
    "space": " \\t\\r\\f\\v",
    "blank": " \\t",
    "punct": r"""!"\#\$%\&'\(\)\*\+,\-\./:;<=>\?@\[\\\]\^_`\{\|\}\~""",  # re.escape()d
    "xdigit": "0-9A-Fa-f",
    "cntrl": "\\x00-\\x09\\x0b-\\x1f\\x7f",  # not the newline: matches stay within a line
    "print": "\\x20-\\x7e",
    "graph": "\\x21-\\x7e",
    "word": "a-zA-Z0-9_",
}


NOT_UTF8 = "\\udc80-\\udcff"  # the lone surrogates ``surrogateescape`` decodes bad bytes to


class PatternError(ValueError):
    """A pattern that cannot be translated; the message says why."""


class Unsupported(PatternError):
    """A valid pattern that ripgrep cannot run (a back-reference): grep searches in Python."""


def py_escape(text: str) -> str:
    """``text`` as a literal in Python regex syntax: ``re.escape``, imported only here and where
    a pattern is compiled, since glob's common patterns and grep's ripgrep path need no ``re``
    (with ``enum``, a third of a tool's start)."""
    import re

    return re.escape(text)


def rust_escape(text: str) -> str:
    """``text`` as a literal in Rust regex syntax, inside or outside brackets."""
    return "".join(c if c.isalnum() or not c.isascii() else f"\\x{{{ord(c):02x}}}" for c in text)


def bracket(
    pattern: str, start: int, negations: str = "^", outside: str = "\\n",
    escape: Callable[[str], str] = py_escape,
) -> tuple[str, int]:
    """Translate the bracket expression opening at ``pattern[start] == "["``.

    Returns the character set and the index just past the closing ``]``. A negated set never
    matches ``outside`` (a newline, so a grep match stays within one line); ``escape`` writes
    a literal character (Python's by default).

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
            items.append(f"{escape(char)}-{escape(high)}")
            i += 2
        else:
            items.append(escape(char))
    body = "".join(items)
    return (f"[^{body}{outside}]" if negate else f"[{body}]"), i + 1


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
            out.append(py_escape(part[i]))
        else:
            out.append(py_escape(char))
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
    import re

    return re.sub(r"\\(.)", r"\1", part)


def ere(pattern: str, rust: bool = False) -> str:
    """Translate a POSIX extended regular expression to Python ``re`` syntax (or Rust's).

    Newlines in ``pattern`` separate alternatives (as in grep).

    :raises PatternError: a construct that is invalid in ERE (``re.compile`` checks the rest).
    :raises Unsupported: with ``rust``, a construct Rust's regex lacks.
    """
    if "\n" in pattern:
        return "|".join(f"(?:{ere(line, rust)})" for line in pattern.split("\n"))
    escape = rust_escape if rust else py_escape
    outside = "\\n" if rust else "\\n" + NOT_UTF8
    out: list[str] = []
    groups: list[int] = []
    atom = -1  # index in ``out`` where the last atom starts; -1 when no atom precedes
    quantified = boundary = False  # boundary: the last atom is \b, \< or \>
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char in "*+?{" and atom < 0:  # nothing to repeat: literal in ERE, as in GNU grep
            out.append(escape(char))
            atom, quantified = len(out) - 1, False
            i += 1
            continue
        if char in "*+?{":
            end = i + 1
            if char == "{":
                close = pattern.find("}", i)
                import re

                if close < 0 or not re.fullmatch(r"\d+(,\d*)?|,\d+", pattern[i + 1 : close]):
                    out.append(escape("{"))
                    atom, quantified = len(out) - 1, False
                    i += 1
                    continue
                end = close + 1
            if boundary:  # as Python's re says; ripgrep would take \b{2}
                raise PatternError(f"nothing to repeat at position {i}")
            if quantified:
                out[atom:] = ["(?:" + "".join(out[atom:]) + ")"]
            out.append(pattern[i:end].replace("{,", "{0,"))
            quantified = True
            i = end
            continue
        quantified = boundary = False
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
            regex, i = bracket(pattern, i, outside=outside, escape=escape)
            atom = len(out)
            out.append(regex)
            continue
        elif char == "\\":
            if i + 1 >= len(pattern):
                raise PatternError("Trailing backslash")
            i += 1
            atom = len(out)
            out.append(_escape(pattern[i], rust))
            boundary = pattern[i] in "b<>"
            i += 1
            continue
        else:
            atom = len(out)
            out.append(("." if rust else f"[^{outside}]") if char == "." else escape(char))
        i += 1
    if groups:
        raise PatternError("Unmatched ( or \\(")
    return "".join(out)


def _escape(char: str, rust: bool) -> str:
    """Translate the escape ``\\char``: GNU word boundaries, classes kept to one line."""
    if char == "s":
        return r"[^\S\n]"
    if rust:
        if char.isdigit():
            raise Unsupported("back-references")
        return "\\" + char if char in "<>WDSwbd" else rust_escape(char)
    if char == "<":
        return r"\b(?=\w)"
    if char == ">":
        return r"\b(?<=\w)"
    if char in "WD":
        return f"[^\\{char.lower()}\\n{NOT_UTF8}]"
    if char == "S":
        return f"[^\\s{NOT_UTF8}]"
    if char in "wbd" or char.isdigit():
        return "\\" + char
    return py_escape(char)
