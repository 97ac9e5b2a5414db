"""execute / call_tool: real tools, every envelope code, exact limits, validation before start."""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ikigai_core import hookimpl
from ikigai_core.config import Settings
from ikigai_core.execution import execute, invalid_params, validate_arguments
from ikigai_core.outcome import (
    INVALID_OUTPUT,
    INVALID_PARAMS,
    TOOL_CRASHED,
    TOOL_NOT_FOUND,
    TOOL_TIMEOUT,
)
from ikigai_core.plugins import get_plugin_manager
from ikigai_core.tools import Tool
from tests.support.calls import call_tool
from tests.support.procs import open_fd_count

SETTINGS = Settings()
LIMIT = 64 * 1024
OBJECT = {"type": "object"}


def as_tool(path: Path, parameters=None, name: str | None = None) -> Tool:
    """The registry entry discovery would make for the executable at ``path``."""
    return Tool(
        name=name or path.name.removesuffix("-tool").replace("-", "_"),
        description="a test tool",
        parameters=parameters or OBJECT,
        command=(str(path),),
        source="user",
        path=path,
    )


def printing(make_tool, tmp_path, data: bytes, name: str = "print-tool", exit_code: int = 0):
    """A tool that prints ``data`` exactly (bytes) and exits with ``exit_code``."""
    body = f"sys.stdout.buffer.write({data!r}); sys.stdout.flush(); sys.exit({exit_code})"
    return as_tool(make_tool(tmp_path, name, body=body))


@pytest.fixture
def pm():
    """The default plugins only: the envelope comes from ikigai_core.envelope."""
    return get_plugin_manager(load_entry_points=False)


def test_success_returns_the_tools_object(tmp_path, make_tool, pm):
    tool = as_tool(make_tool(tmp_path, "echo-tool"))

    envelope = call_tool(pm, {"echo": tool}, "echo", {"text": "héllo"}, settings=SETTINGS)

    assert envelope == {"tool_success": True, "result": {"ok": True, "args": {"text": "héllo"}}}


def test_tool_gets_callers_cwd_and_env_plus_its_output_budget(tmp_path, make_tool, monkeypatch):
    body = (
        "print(json.dumps({'cwd': os.getcwd(), 'budget': os.environ['IKIGAI_MAX_OUTPUT_BYTES'],"
        " 'mark': os.environ.get('EXEC_TEST_MARK')}))"
    )
    tool = as_tool(make_tool(tmp_path / "bin", "env-tool", body=body))
    monkeypatch.setenv("EXEC_TEST_MARK", "inherited")
    settings = Settings(tool_max_output=5000)

    default = execute(tool, {}, settings=settings)
    given = execute(tool, {}, settings=settings, cwd=tmp_path, env={"EXEC_TEST_MARK": "given"})

    assert default.result == {"cwd": os.getcwd(), "budget": "5000", "mark": "inherited"}
    assert given.result == {"cwd": str(tmp_path), "budget": "5000", "mark": "given"}


def test_stdout_of_exactly_the_limit_is_accepted(tmp_path, make_tool):
    text = json.dumps({"d": "x" * (LIMIT - 9)}).encode()
    assert len(text) == LIMIT

    outcome = execute(printing(make_tool, tmp_path, text), {}, settings=SETTINGS)

    assert outcome.success and len(outcome.result["d"]) == LIMIT - 9


def test_one_byte_over_the_limit_is_invalid_output(tmp_path, make_tool, pm):
    text = json.dumps({"d": "x" * (LIMIT - 8)}).encode()
    tool = printing(make_tool, tmp_path, text)

    envelope = call_tool(pm, {"print": tool}, "print", {}, settings=SETTINGS)

    assert envelope["error_code"] == INVALID_OUTPUT
    assert envelope["error"] == (
        "Tool 'print' printed more than 65536 bytes (the output limit; raise it with "
        "IKIGAI_TOOL_MAX_OUTPUT or tool_max_output in config.json)"
    )
    assert envelope["stdout"] == text[:LIMIT].decode()
    assert {"exit_code", "stderr"} <= envelope.keys()


def test_configured_output_limit_is_named(tmp_path, make_tool):
    tool = printing(make_tool, tmp_path, b'{"d": "' + b"x" * 200 + b'"}')

    outcome = execute(tool, {}, settings=Settings(tool_max_output=100))

    assert outcome.error_code == INVALID_OUTPUT and "more than 100 bytes" in outcome.error
    assert outcome.stdout == '{"d": "' + "x" * 93


def test_stderr_flood_with_valid_json_succeeds(tmp_path, make_tool):
    body = "sys.stderr.write('e' * 5_000_000); sys.stderr.flush(); print('{\"ok\": true}')"
    tool = as_tool(make_tool(tmp_path, "noisy-tool", body=body))

    assert execute(tool, {}, settings=SETTINGS).result == {"ok": True}


@pytest.mark.parametrize(
    "body",
    ["print('{}')", "os.close(0); time.sleep(0.2); print('{}')"],
    ids=["never-reads-stdin", "closes-stdin-early"],
)
def test_big_argument_to_a_tool_that_does_not_read_it(tmp_path, make_tool, pm, body):
    tool = as_tool(make_tool(tmp_path, "deaf-tool", body=body))

    envelope = call_tool(pm, {"deaf": tool}, "deaf", {"data": "x" * 1_000_000}, settings=SETTINGS)

    assert envelope == {"tool_success": True, "result": {}}


def test_timeout_kills_the_tool_and_keeps_partial_output(tmp_path, make_shell_tool, pm):
    tool = as_tool(make_shell_tool(tmp_path, "slow-tool", "echo partial; echo hmm >&2; sleep 30\n"))

    envelope = call_tool(pm, {"slow": tool}, "slow", {}, settings=Settings(tool_timeout=0.5))

    assert envelope == {
        "tool_success": False,
        "error": "Tool 'slow' timed out after 0.5 s",
        "error_code": TOOL_TIMEOUT,
        "exit_code": 128 + signal.SIGTERM,
        "stdout": "partial\n",
        "stderr": "hmm\n",
    }


def test_non_zero_exit_is_a_crash_with_the_output(tmp_path, make_shell_tool, pm):
    script = "echo '{}'; echo bad input >&2; exit 3\n"
    tool = as_tool(make_shell_tool(tmp_path, "crash-tool", script))

    envelope = call_tool(pm, {"crash": tool}, "crash", {}, settings=SETTINGS)

    assert envelope == {
        "tool_success": False,
        "error": "Tool 'crash' crashed with exit code 3",
        "error_code": TOOL_CRASHED,
        "exit_code": 3,
        "stdout": "{}\n",
        "stderr": "bad input\n",
    }


def test_signal_is_exit_code_128_plus_n(tmp_path, make_shell_tool):
    tool = as_tool(make_shell_tool(tmp_path, "segv-tool", "kill -SEGV $$\n"))

    outcome = execute(tool, {}, settings=SETTINGS)

    assert outcome.error == "Tool 'segv' crashed with exit code 139"
    assert outcome.exit_code == 139


@pytest.mark.parametrize(
    ("stdout", "reason"),
    [
        (b"", "output is empty"),
        (b"  \n", "output is empty"),
        (b"hello", "output is not valid JSON"),
        (b"[1, 2]", "output is a JSON array, not an object"),
        (b'"text"', "output is a JSON string, not an object"),
        (b'{"a": 1}{"b": 2}', "output has data after the JSON value"),
        (b'{"a": 1}\n{"b": 2}\n', "output has data after the JSON value"),
        (b'{"a": NaN}', "output contains NaN"),
        (b'{"a": -Infinity}', "output contains -Infinity"),
        (b'{"a": "\xff"}', "output is not valid UTF-8 (byte 7)"),
        (b"[" * 50_000, "output is nested too deeply"),
    ],
)
def test_exit_0_without_exactly_one_json_object_is_invalid_output(
    tmp_path, make_tool, stdout, reason
):
    outcome = execute(printing(make_tool, tmp_path, stdout), {}, settings=SETTINGS)

    assert outcome.error_code == INVALID_OUTPUT
    assert outcome.error.startswith(f"Tool 'print' returned invalid output: {reason}")
    assert outcome.error.endswith("; a tool must print one JSON object")
    assert outcome.exit_code == 0
    assert outcome.stdout == stdout[:LIMIT].decode(errors="replace")


def test_whitespace_around_the_object_is_fine(tmp_path, make_tool):
    tool = printing(make_tool, tmp_path, b'\n {"a": [1, 2.5, null]} \r\n')

    outcome = execute(tool, {}, settings=SETTINGS)

    assert outcome.result == {"a": [1, 2.5, None]}


def test_envelope_output_is_capped_with_a_marker(tmp_path, make_tool):
    body = (
        "sys.stdout.write('o' * 100_000); sys.stdout.flush()\n"
        "sys.stderr.buffer.write(b'\\xff' + b'e' * 99_999 + b'END'); sys.exit(1)"
    )
    tool = as_tool(make_tool(tmp_path, "loud-tool", body=body))

    outcome = execute(tool, {}, settings=Settings(tool_max_output=1_000_000))

    assert outcome.stdout == "o" * LIMIT + f"\n[... {100_000 - LIMIT} bytes cut ...]"
    assert outcome.stderr == "[... earlier bytes cut ...]\n" + "e" * (LIMIT - 3) + "END"


def test_invalid_utf8_in_output_is_replaced(tmp_path, make_tool):
    outcome = execute(printing(make_tool, tmp_path, b"caf\xe9", exit_code=2), {}, settings=SETTINGS)

    assert (outcome.error_code, outcome.stdout) == (TOOL_CRASHED, "caf\ufffd")


def test_tool_deleted_after_discovery_is_not_found(tmp_path, make_tool, pm):
    tool = as_tool(make_tool(tmp_path, "gone-tool"))
    tool.path.unlink()

    envelope = call_tool(pm, {"gone": tool}, "gone", {}, settings=SETTINGS)

    assert envelope == {
        "tool_success": False,
        "error": f"Tool 'gone' is no longer at {tool.path}; run `ikigai refresh`",
        "error_code": TOOL_NOT_FOUND,
    }


def test_tool_no_longer_executable_cannot_start(tmp_path, make_tool):
    tool = as_tool(make_tool(tmp_path, "plain-tool"))
    tool.path.chmod(0o644)  # exec needs an x bit, even for root

    outcome = execute(tool, {}, settings=SETTINGS)

    assert outcome.error_code == TOOL_CRASHED and outcome.exit_code == 126
    assert outcome.error == f"Tool 'plain' could not be started: Permission denied ({tool.path})"
    assert (outcome.stdout, outcome.stderr) == ("", "")


def test_missing_interpreter_is_not_a_missing_tool(tmp_path, make_shell_tool):
    path = make_shell_tool(tmp_path, "orphan-tool", "echo '{}'\n")
    path.write_text("#!/nonexistent/interpreter\n")
    tool = as_tool(path)

    outcome = execute(tool, {}, settings=SETTINGS)

    assert outcome.error_code == TOOL_CRASHED and outcome.exit_code == 126
    assert outcome.error == (
        f"Tool 'orphan' could not be started: its interpreter /nonexistent/interpreter "
        f"(the #! line of {path}) does not exist"
    )


def test_file_that_is_not_a_program_cannot_start(tmp_path):
    path = tmp_path / "garbage-tool"
    path.write_bytes(b"\x7fELF but not really")
    path.chmod(0o755)

    outcome = execute(as_tool(path), {}, settings=SETTINGS)

    assert outcome.error == f"Tool 'garbage' could not be started: Exec format error ({path})"


def test_missing_working_directory_is_named(tmp_path, make_tool):
    tool = as_tool(make_tool(tmp_path, "echo-tool"))

    outcome = execute(tool, {}, settings=SETTINGS, cwd=tmp_path / "nowhere")

    assert outcome.error_code == TOOL_CRASHED
    assert outcome.error.endswith(f"No such file or directory ({tmp_path / 'nowhere'})")


def test_tool_without_a_file_is_named_by_its_command(pm):
    tool = Tool(name="ghost", description="", parameters=OBJECT,
                command=("ikigai-no-such-program-tool", "--flag"), source="acme")

    envelope = call_tool(pm, {"ghost": tool}, "ghost", {}, settings=SETTINGS)

    assert envelope["error_code"] == TOOL_NOT_FOUND
    assert envelope["error"] == (
        "Tool 'ghost' is no longer at ikigai-no-such-program-tool --flag; run `ikigai refresh`"
    )


def test_python_module_tool_without_a_file_runs(pm):
    """A plugin's tool need not be a file: any argv that speaks the protocol works."""
    code = "import json, sys; print(json.dumps({'got': json.load(sys.stdin)}))"
    tool = Tool(name="inline", description="", parameters=OBJECT,
                command=(sys.executable, "-c", code), source="acme")

    envelope = call_tool(pm, {"inline": tool}, "inline", {"n": 1}, settings=SETTINGS)

    assert envelope == {"tool_success": True, "result": {"got": {"n": 1}}}


# -- Arguments ----------------------------------------------------------------

FILE_READ = {
    "type": "object",
    "properties": {
        "file_path": {"type": "string"},
        "limit": {"type": "integer", "minimum": 1},
        "items": {
            "type": "array",
            "items": {"type": "object", "properties": {"name": {"type": "string"}},
                      "required": ["name"]},
        },
    },
    "required": ["file_path"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"file_path": "a", "limit": "abc"}, "'limit': 'abc' is not of type 'integer'"),
        ({"file_path": "a", "limit": 0}, "'limit': 0 is less than the minimum of 1"),
        ({"limit": 5}, "missing required field 'file_path'"),
        ({"file_path": "a", "items": [{"name": "x"}, {"name": "y"}, {"name": 3}]},
         "'items[2].name': 3 is not of type 'string'"),
        ({"file_path": "a", "items": [{}]}, "missing required field 'items[0].name'"),
        ({"file_path": "a", "color": "red"},
         "Additional properties are not allowed ('color' was unexpected)"),
    ],
)
def test_invalid_arguments_name_the_field_and_the_rule(tmp_path, arguments, message):
    tool = as_tool(tmp_path / "file-read-tool", FILE_READ)

    assert validate_arguments(tool, arguments) == message
    assert invalid_params("file_read", message).error == (
        f"Invalid arguments for tool 'file_read': {message}")


def test_valid_arguments_pass(tmp_path):
    tool = as_tool(tmp_path / "file-read-tool", FILE_READ)

    arguments = {"file_path": "a", "limit": 3, "items": [{"name": "n"}]}
    assert validate_arguments(tool, arguments) is None


def test_long_rule_is_cut_to_one_short_line(tmp_path):
    tool = as_tool(tmp_path / "file-read-tool", FILE_READ)

    message = validate_arguments(tool, {"file_path": "a", "limit": "z\n" * 1000})

    assert "\n" not in message and message.endswith("...")
    assert len(message) < 400


@pytest.mark.parametrize(
    ("arguments", "kind"),
    [([1], "array"), ("x", "string"), (None, "null"), (3, "number"), (True, "boolean")],
)
def test_arguments_must_be_an_object(tmp_path, arguments, kind):
    tool = as_tool(tmp_path / "x-tool")

    assert validate_arguments(tool, arguments) == f"they must be a JSON object, got {kind}"


def test_invalid_arguments_never_start_the_tool(tmp_path, make_tool, pm):
    marker = tmp_path / "started"
    body = f"open({str(marker)!r}, 'w'); print('{{}}')"
    tool = as_tool(make_tool(tmp_path, "mark-tool", body=body),
                   {"type": "object", "properties": {"n": {"type": "integer"}}})

    bad = call_tool(pm, {"mark": tool}, "mark", {"n": "one"}, settings=SETTINGS)
    not_object = call_tool(pm, {"mark": tool}, "mark", ["n"], settings=SETTINGS)

    assert bad == {
        "tool_success": False,
        "error": "Invalid arguments for tool 'mark': 'n': 'one' is not of type 'integer'",
        "error_code": INVALID_PARAMS,
    }
    assert not_object["error_code"] == INVALID_PARAMS
    assert not marker.exists()
    assert call_tool(pm, {"mark": tool}, "mark", {"n": 1}, settings=SETTINGS)["tool_success"]
    assert marker.exists()


def test_a_new_tool_object_gets_its_own_schema(tmp_path):
    """After a refresh the same name may carry a new schema; no stale validator is used."""
    old = as_tool(tmp_path / "x-tool", {"type": "object", "required": ["a"]})
    assert validate_arguments(old, {}) is not None
    assert validate_arguments(old, {"a": 1}) is None
    del old
    gc.collect()

    new = as_tool(tmp_path / "x-tool", {"type": "object", "required": ["b"]})

    assert validate_arguments(new, {"a": 1}) == "missing required field 'b'"


def test_validators_of_tools_rediscovered_many_times_do_not_pile_up(tmp_path):
    """A long chat refreshing its tools builds a new tool object each time: each gets its
    own validator, which leaves the cache with its tool (a weak reference: no memory
    growing without end, and a tool still in use keeps its validator, issue 23)."""
    from ikigai_core import execution

    kept = [as_tool(tmp_path / "k-tool", {"type": "object", "required": ["k"]})]
    validate_arguments(kept[0], {})
    for i in range(200):
        tool = as_tool(tmp_path / "x-tool", {"type": "object", "required": [f"f{i}"]})
        assert validate_arguments(tool, {}) == f"missing required field 'f{i}'"
    del tool
    gc.collect()
    mine = [ref() for ref, _ in execution._validators.values()
            if getattr(ref(), "path", None) in (kept[0].path, tmp_path / "x-tool")]
    assert mine == kept


def test_listing_tools_does_not_import_jsonschema():
    code = "import sys, ikigai_core.execution; print('jsonschema' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)

    assert out.stdout == "False\n"


# -- Lookup and envelope --------------------------------------------------------


def test_unknown_tool_lists_the_available_ones(tmp_path, pm):
    registry = {name: as_tool(tmp_path / f"{name}-tool") for name in ("glob", "bash", "grep")}

    envelope = call_tool(pm, registry, "bsh", {}, settings=SETTINGS)

    assert envelope == {
        "tool_success": False,
        "error": "Tool 'bsh' not found. Available tools: bash, glob, grep",
        "error_code": TOOL_NOT_FOUND,
    }


def test_unknown_tool_message_stays_short(tmp_path, pm):
    registry = {f"t{i:02}": as_tool(tmp_path / f"t{i:02}-tool") for i in range(25)}

    error = call_tool(pm, registry, "nope", {}, settings=SETTINGS)["error"]

    assert error.endswith("t18, t19 and 5 more")


def test_unknown_tool_with_no_tools_at_all(pm):
    error = call_tool(pm, {}, "bash", {}, settings=SETTINGS)["error"]

    assert error == (
        "Tool 'bash' not found. No tools are available; see `ikigai tool list --verbose`"
    )


def test_a_plugin_can_replace_the_envelope(tmp_path, make_tool, pm):
    class Envelope:
        @hookimpl
        def ikigai_wrap_result(self, outcome):
            return {"ok": outcome.success, "code": outcome.error_code, "data": outcome.result}

    pm.register(Envelope(), name="test-envelope")
    tool = as_tool(make_tool(tmp_path, "echo-tool"))

    assert call_tool(pm, {"echo": tool}, "echo", {"a": 1}, settings=SETTINGS) == {
        "ok": True, "code": None, "data": {"ok": True, "args": {"a": 1}}
    }
    assert call_tool(pm, {"echo": tool}, "nope", {}, settings=SETTINGS) == {
        "ok": False, "code": TOOL_NOT_FOUND, "data": None
    }


def test_many_calls_leak_no_fd(tmp_path, make_tool, make_shell_tool):
    ok = as_tool(make_tool(tmp_path, "echo-tool"))
    failing = [
        as_tool(make_shell_tool(tmp_path, "crash-tool", "exit 1\n")),
        as_tool(make_shell_tool(tmp_path, "bad-tool", "echo nope\n")),
        as_tool(tmp_path / "missing-tool"),
    ]
    execute(ok, {}, settings=SETTINGS)
    before = open_fd_count()

    for _ in range(10):
        assert execute(ok, {"i": 1}, settings=SETTINGS).success
        assert not any(execute(tool, {}, settings=SETTINGS).success for tool in failing)

    assert open_fd_count() == before
