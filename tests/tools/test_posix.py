"""POSIX pattern translation: ERE and glob semantics that Python's ``re`` reads differently."""

from __future__ import annotations

import re

import pytest

from ikigai_tools_builtin._posix import PatternError, ere, glob_part, glob_path


def ere_matches(pattern, text):
    """Whether the translated ERE finds a match in ``text``."""
    return re.search(ere(pattern), text, re.MULTILINE) is not None


@pytest.mark.parametrize(
    "pattern, text, expected",
    [
        ("[[:upper:]][[:lower:]]+", "Hello", True),
        ("[[:xdigit:]]{4}", "beef", True),
        ("[[:punct:]]", "abc", False),
        ("[]x]", "]", True),
        ("[^]x]", "]", False),
        ("[a\\]", "\\", True),
        ("[a-c-]", "-", True),
        ("a**", "aaa", True),
        ("a+*b", "b", True),
        ("(ab){2}{2}", "abababab", True),
        ("(?i)", "?i", True),
        ("(?i)", "I", False),
        ("+x", "+x", True),
        ("a|*b", "*b", True),
        ("x{", "x{", True),
        ("x{}", "x{}", True),
        ("a[^b]c", "a\nc", False),
        ("a\\Wc", "a\nc", False),
        ("a\\sc", "a\nc", False),
        ("one\ntwo", "two", True),
        ("[[=a=]]", "a", True),
        ("[[.-.]]", "-", True),
    ],
)
def test_ere(pattern, text, expected):
    assert ere_matches(pattern, text) is expected


@pytest.mark.parametrize(
    "pattern, message",
    [
        ("(a", "Unmatched ( or \\("),
        ("a)", "Unmatched ) or \\)"),
        ("[a", "unterminated ["),
        ("[[:nope:]]", "unknown character class [:nope:]"),
        ("[z-a]", "invalid range z-a"),
        ("a\\", "Trailing backslash"),
    ],
)
def test_ere_errors(pattern, message):
    with pytest.raises(PatternError, match=re.escape(message)):
        ere(pattern)


def test_no_future_warning_for_sets_python_would_read_as_nested():
    # filterwarnings=error turns re's FutureWarning about "[[" or "--" into a failure.
    assert re.compile(ere("[[&&~~||]")).search("~")
    assert re.compile(ere("[--/]")).search(".")


@pytest.mark.parametrize(
    "pattern, name, expected",
    [
        ("*.c", "main.c", True),
        ("*.c", ".hidden.c", False),
        (".*", ".hidden", True),
        ("[.]x", ".x", False),
        ("?x", ".x", False),
        ("[!a]x", "bx", True),
        ("[^a]x", "ax", False),
        ("\\*", "*", True),
    ],
)
def test_glob_part(pattern, name, expected):
    assert (re.fullmatch(glob_part(pattern), name) is not None) is expected


@pytest.mark.parametrize(
    "pattern, path, expected",
    [
        ("src/**/*.c", "src/main.c", True),
        ("src/**/*.c", "src/a/b/main.c", True),
        ("src/**/*.c", "lib/main.c", False),
        ("**/x", "x", True),
        ("a/**", "a/b/c", True),
        ("a/*", "a/b/c", False),
    ],
)
def test_glob_path(pattern, path, expected):
    assert (re.fullmatch(glob_path(pattern), path) is not None) is expected
