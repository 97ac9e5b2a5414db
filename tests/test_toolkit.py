"""ikigai_toolkit's ``@tool``: a typed function becomes a tool that speaks the protocol of
docs/tools.md; every case runs the tool as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ikigai_toolkit.author import build_schema, docstring_parts

RICH = '''
from typing import Literal, Optional

from ikigai_toolkit import ToolError, tool


@tool
def pack(name: str, count: int, ratio: float = 0.5, loud: bool = False,
         tags: list[str] | None = None, mode: Literal["fast", "slow"] = "fast",
         limits: Optional[dict[str, int]] = None, *, note: str = "") -> dict:
    """Pack things up.

    Longer text that is not the description.

    :param name: what to call
        the pack.
    :param count: how many.
    """
    if count < 0:
        raise ToolError("count is negative", "NEGATIVE")
    if name == "text":
        return "just text"
    if name == "crash":
        raise RuntimeError("boom")
    return {"name": name, "count": count, "ratio": ratio, "loud": loud, "tags": tags,
            "mode": mode, "limits": limits, "note": note}
'''


@pytest.fixture
def pack(tmp_path) -> Path:
    path = tmp_path / "pack-tool"
    path.write_text(f"#!{sys.executable}\n{RICH}")
    path.chmod(0o755)
    return path


def run(tool: Path, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([str(tool), *args], input=stdin, capture_output=True, timeout=30)


def test_schema_comes_from_the_signature_and_the_docstring(pack):
    answer = run(pack, "--schema")
    assert answer.returncode == 0
    assert json.loads(answer.stdout) == {
        "name": "pack", "description": "Pack things up.",
        "parameters": {"type": "object", "required": ["name", "count"], "properties": {
            "name": {"type": "string", "description": "what to call the pack."},
            "count": {"type": "integer", "description": "how many."},
            "ratio": {"type": "number", "default": 0.5},
            "loud": {"type": "boolean", "default": False},
            "tags": {"type": "array", "items": {"type": "string"}},
            "mode": {"type": "string", "enum": ["fast", "slow"], "default": "fast"},
            "limits": {"type": "object", "additionalProperties": {"type": "integer"}},
            "note": {"type": "string", "default": ""},
        }}}


def test_a_call_reads_json_and_prints_the_result(pack):
    ran = run(pack, stdin=b'{"name": "box", "count": 2, "tags": ["a"], "limits": {"w": 3},'
                          b' "ratio": 1, "unknown": true, "mode": null}')
    assert (ran.returncode, ran.stderr) == (0, b"")
    assert json.loads(ran.stdout) == {"name": "box", "count": 2, "ratio": 1, "loud": False,
                                      "tags": ["a"], "mode": "fast", "limits": {"w": 3},
                                      "note": ""}
    assert json.loads(run(pack, stdin=b'{"name": "text", "count": 1}').stdout) == {
        "output": "just text"}


def test_an_operation_error_is_data(pack):
    ran = run(pack, stdin=b'{"name": "box", "count": -1}')
    assert ran.returncode == 0
    assert json.loads(ran.stdout) == {"error": "count is negative", "error_code": "NEGATIVE"}


@pytest.mark.parametrize("stdin, line", [
    (b"", "pack: expected a JSON object on stdin, got nothing"),
    (b"[1]", "pack: expected a JSON object on stdin, got list"),
    (b"{nope", "pack: invalid JSON on stdin: Expecting property name enclosed in double quotes"),
    (b'{"count": 1}', "pack: missing required field 'name'"),
    (b'{"name": null, "count": 1}', "pack: missing required field 'name'"),
    (b'{"name": "a", "count": true}', "pack: field 'count' must be an integer, got true"),
    (b'{"name": "a", "count": 1.5}', "pack: field 'count' must be an integer, got 1.5"),
    (b'{"name": "a", "count": 1, "mode": "warp"}',
     'pack: field \'mode\' must be one of "fast", "slow", got "warp"'),
    (b'{"name": "a", "count": 1, "tags": ["x", 2]}', "pack: field 'tags[1]' must be a string, got 2"),
    (b'{"name": "a", "count": 1, "limits": {"w": "3"}}',
     "pack: field 'limits.w' must be an integer, got \"3\""),
])
def test_a_bad_argument_exits_1_with_one_line(pack, stdin, line):
    ran = run(pack, stdin=stdin)
    assert ran.returncode == 1
    assert ran.stdout == b""
    assert ran.stderr.decode().startswith(line)
    assert ran.stderr.decode().count("\n") == 1


def test_help_and_stray_arguments(pack):
    helped = run(pack, "--help")
    assert helped.returncode == 0
    assert helped.stdout.decode().startswith("usage: pack-tool [--schema] < ARGUMENTS.json\n"
                                             "Pack things up.\n")
    stray = run(pack, "--verbose")
    assert stray.returncode == 2
    assert stray.stderr.decode().startswith("pack: unexpected argument '--verbose'\nusage: ")


def test_an_unexpected_exception_is_a_crash_with_its_traceback(pack):
    ran = run(pack, stdin=b'{"name": "crash", "count": 1}')
    assert ran.returncode == 1
    assert ran.stderr.decode().rstrip().endswith("RuntimeError: boom")


def test_a_python_tool_is_five_lines(tmp_path, ikigai_tool):
    tool = tmp_path / "shout-tool"
    tool.write_text(f"#!{sys.executable}\n" + textwrap.dedent('''\
        from ikigai_toolkit import tool
        @tool
        def shout(text: str) -> str:
            """Shout TEXT back in capitals."""
            return text.upper()
        '''))
    tool.chmod(0o755)
    assert len(tool.read_text().splitlines()) == 6  # the shebang and five lines
    assert ikigai_tool(tool)({"text": "hi"}) == {"tool_success": True,
                                                  "result": {"output": "HI"}}


def test_imported_the_function_is_left_as_it_is():
    from ikigai_toolkit import tool

    @tool
    def add(a: int, b: int = 2) -> int:
        """Add.

        Args:
            a: the first.
            b (int): the second,
                two by default.
        """
        return a + b

    assert add(1) == 3
    assert add.schema["parameters"]["properties"]["b"] == {  # type: ignore[attr-defined]
        "type": "integer", "description": "the second, two by default.", "default": 2}


def test_an_annotation_json_cannot_carry_is_refused_with_what_to_use():
    def bad(items: set[str]) -> dict:
        return {}

    with pytest.raises(TypeError, match=r"cannot describe set\[str\] in JSON Schema; use str"):
        build_schema(bad)

    def untyped(x) -> dict:  # type: ignore[no-untyped-def]
        return {}

    with pytest.raises(TypeError, match="parameter 'x' needs a type annotation"):
        build_schema(untyped)


def test_docstring_without_parameters():
    assert docstring_parts(None) == ("", {})
    assert docstring_parts("One line.") == ("One line.", {})
    assert docstring_parts("Two\nlines.\n:returns: x") == ("Two lines.", {})


def test_the_package_imports_nothing_of_ikigai_core_nor_pluggy():
    """Nor json (9-11 ms of a tool's start: it imports re and enum; ikigai_toolkit.jsonio
    calls the C codec), typing or inspect: a toolkit tool starts as fast as a bare one."""
    code = ("import sys, ikigai_toolkit; ikigai_toolkit.tool; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('pluggy', 'ikigai_core', 'typing', 'inspect', 'json')))")
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=30)
    assert ran.stdout.strip() == "[]", ran.stderr
