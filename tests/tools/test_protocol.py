"""The protocol every built-in tool follows: --schema, one JSON object in, one out, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ikigai_toolkit.protocol import InvalidInput, parse_arguments
from tests.support.schemas import BUILTIN

# Seed 001's schemas, value for value, keyed by the script's stem.
SEED_SCHEMAS = {name.replace("_", "-"): schema for name, schema in BUILTIN.items()}
TOOLS = sorted(SEED_SCHEMAS)
# A valid argument object per tool, used to break one field at a time.
VALID = {
    "bash": {"command": "true"},
    "file-read": {"file_path": "x"},
    "file-write": {"file_path": "x", "content": ""},
    "file-edit": {"file_path": "x", "old_string": "a", "new_string": "b"},
    "glob": {"pattern": "*"},
    "grep": {"pattern": "x"},
}


@pytest.mark.parametrize("tool", TOOLS)
def test_schema_is_seed_001s(run_tool, tool):
    run = run_tool(tool, argv=("--schema",))
    assert run.returncode == 0
    assert json.loads(run.stdout) == SEED_SCHEMAS[tool]


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_prints_the_usage_without_reading_stdin(tool, flag):
    """``bash-tool --help`` was a tool call: it waited for arguments on stdin."""
    exe = Path(sys.executable).with_name(f"{tool}-tool")
    with subprocess.Popen([str(exe), flag], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as proc:  # stdin never closed
        assert proc.wait(timeout=20) == 0
        out = proc.stdout.read()
    assert out.startswith(f"usage: {tool}-tool [--schema] < ARGUMENTS.json\n")
    assert SEED_SCHEMAS[tool]["description"].splitlines()[0] in out


@pytest.mark.parametrize("tool", ["bash", "glob"])
def test_an_unknown_argument_is_a_usage_error(run_tool, tool):
    run = run_tool(tool, VALID[tool], argv=("--verbose",))
    assert run.returncode == 2 and run.stdout == b""
    assert run.stderr.startswith(f"{tool}: unexpected argument '--verbose'\nusage: {tool}-tool ")


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize(
    "raw, message",
    [
        (b"", "got nothing"),
        (b"  \n", "got nothing"),
        (b"{not json", "invalid JSON"),
        (b"[1, 2]", "got list"),
        (b'"text"', "got str"),
        (b"\xff\xfe{}", "invalid JSON"),
    ],
)
def test_unusable_stdin_exits_1_with_one_line(run_tool, tmp_path, tool, raw, message):
    run = run_tool(tool, raw=raw, cwd=tmp_path)
    assert run.returncode == 1
    assert run.stdout == b""
    assert message in run.stderr
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr


@pytest.mark.parametrize(
    "tool, field",
    [(tool, field) for tool in TOOLS for field in SEED_SCHEMAS[tool]["parameters"]["required"]],
)
def test_missing_required_field_is_named(run_tool, tmp_path, tool, field):
    args = {k: v for k, v in VALID[tool].items() if k != field}
    run = run_tool(tool, args, cwd=tmp_path)
    assert run.returncode == 1
    assert run.stderr.strip() == f"{SEED_SCHEMAS[tool]['name']}: missing required field '{field}'"


@pytest.mark.parametrize(
    "tool, field",
    [(tool, field) for tool in TOOLS for field in SEED_SCHEMAS[tool]["parameters"]["properties"]],
)
def test_wrong_typed_field_is_named(run_tool, tmp_path, tool, field):
    kind = SEED_SCHEMAS[tool]["parameters"]["properties"][field]["type"]
    wrong = {"string": 5, "integer": "5", "boolean": "yes"}[kind]
    run = run_tool(tool, {**VALID[tool], field: wrong}, cwd=tmp_path)
    assert run.returncode == 1
    assert f"field '{field}' must be" in run.stderr
    assert run.stderr.count("\n") == 1


def test_required_null_counts_as_missing():
    with pytest.raises(InvalidInput, match="missing required field 'command'"):
        parse_arguments(b'{"command": null}', json.loads(json.dumps(SEED_SCHEMAS["bash"])))


def test_booleans_are_not_integers_and_floats_are_not_integers():
    schema = SEED_SCHEMAS["file-read"]
    for bad in ("true", "1.5"):
        with pytest.raises(InvalidInput, match="field 'offset' must be an integer"):
            parse_arguments(f'{{"file_path": "x", "offset": {bad}}}'.encode(), schema)


def test_unknown_fields_are_ignored_and_optional_null_is_absent(run_tool, tmp_path):
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    run = run_tool(
        "file-read",
        {"file_path": "a.txt", "offset": None, "limit": None, "colour": "blue"},
        cwd=tmp_path,
    )
    assert run.result == {"output": "one\ntwo\n"}


def test_operation_error_exits_0_with_error_object(run_tool, tmp_path):
    run = run_tool("file-read", {"file_path": "missing.txt"}, cwd=tmp_path)
    assert run.returncode == 0
    assert run.result == {"error": "File not found: missing.txt", "error_code": "FILE_NOT_FOUND"}


def test_output_is_one_object_without_trailing_data(run_tool):
    run = run_tool("bash", {"command": "echo hi"})
    assert run.stdout == b'{"output": "hi", "exit_code": 0}'


def test_lone_surrogate_in_input_never_breaks_utf8_output(run_tool, tmp_path):
    run = run_tool("file-read", raw=b'{"file_path": "bad\\udcffname"}', cwd=tmp_path)
    assert run.result == {"error": "File not found: bad\ufffdname", "error_code": "FILE_NOT_FOUND"}


@pytest.mark.parametrize("tool", TOOLS)
def test_tool_imports_only_the_standard_library(tool):
    module = f"ikigai_tools_builtin.{tool.replace('-', '_')}_tool"
    probe = (
        f"import sys; import {module}; "
        "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    loaded = set(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                                check=True).stdout.split())
    assert not loaded & {"pluggy", "click", "httpx", "jsonschema", "ikigai_core", "typing"}
