"""bash-tool: /bin/sh -c, merged stderr, stdin closed, exit codes as data."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

from ikigai_tools_builtin import bash_tool
from ikigai_tools_builtin._protocol import respond


def bash(run_tool, command, **kwargs):
    """Run the installed bash-tool and return its result object."""
    run = run_tool("bash", {"command": command}, **kwargs)
    assert run.returncode == 0, run.stderr
    return run.result


def test_output_and_exit_code(run_tool):
    assert bash(run_tool, "echo hello") == {"output": "hello", "exit_code": 0}


def test_multi_line_output_keeps_newlines_and_strips_only_one(run_tool):
    assert bash(run_tool, "printf 'a\\nb\\n\\n'")["output"] == "a\nb\n"


def test_stderr_is_merged_into_output(run_tool):
    result = bash(run_tool, "echo out; echo err >&2; exit 3")
    assert result == {"output": "out\nerr", "exit_code": 3}


def test_failed_command_reports_its_exit_code(run_tool):
    result = bash(run_tool, "ls /nonexistent-ikigai-dir")
    assert result["exit_code"] == 2
    assert "nonexistent-ikigai-dir" in result["output"]


def test_command_not_found_is_127(run_tool):
    result = bash(run_tool, "nonexistent-ikigai-command")
    assert result["exit_code"] == 127
    assert "not found" in result["output"]


@pytest.mark.parametrize("command", ["", "   ", "\n"])
def test_empty_command_is_127(run_tool, command):
    assert bash(run_tool, command) == {"output": "sh: empty command", "exit_code": 127}


@pytest.mark.parametrize("signal_number", [9, 15])
def test_signal_killed_command_reports_128_plus_n(run_tool, signal_number):
    result = bash(run_tool, f"echo before; kill -{signal_number} $$")
    assert result["exit_code"] == 128 + signal_number


def test_runs_in_the_callers_directory(run_tool, tmp_path):
    assert bash(run_tool, "pwd", cwd=tmp_path)["output"] == str(tmp_path)


def test_stdin_is_closed(run_tool):
    started = time.monotonic()
    assert bash(run_tool, "cat; echo done") == {"output": "done", "exit_code": 0}
    assert time.monotonic() - started < 20


def test_returns_when_the_shell_exits_despite_a_background_job_holding_the_pipe(run_tool):
    started = time.monotonic()
    result = bash(run_tool, "sleep 30 & echo started")
    assert result == {"output": "started", "exit_code": 0}
    assert time.monotonic() - started < 15


def test_background_job_writing_forever_does_not_hold_the_tool(run_tool, tmp_path):
    started = time.monotonic()
    env = {"IKIGAI_MAX_OUTPUT_BYTES": "4096"}
    try:
        result = bash(run_tool, "yes & echo $! > yes.pid; echo started", cwd=tmp_path, env=env)
    finally:
        os.kill(int((tmp_path / "yes.pid").read_text()), signal.SIGKILL)
    assert result["exit_code"] == 0
    assert time.monotonic() - started < 15


def test_invalid_utf8_output_is_replaced_not_a_crash(run_tool):
    result = bash(run_tool, "printf 'ok \\377\\376 end'")
    assert result == {"output": "ok \ufffd\ufffd end", "exit_code": 0}


def test_binary_output_with_nul_bytes_is_escaped(run_tool):
    run = run_tool("bash", {"command": "printf 'a\\000b'"})
    assert b"\\u0000" in run.stdout
    assert run.result["output"] == "a\x00b"


def test_large_output_is_whole_without_budget(run_tool):
    result = bash(run_tool, "seq 1 200000")
    assert result["output"].split("\n") == [str(n) for n in range(1, 200001)]
    assert "truncated" not in result


def test_output_budget_keeps_head_and_tail(run_tool):
    run = run_tool("bash", {"command": "seq 1 200000"}, env={"IKIGAI_MAX_OUTPUT_BYTES": "4096"})
    assert len(run.stdout) <= 4096
    result = run.result
    assert result["output"].startswith("1\n2\n3\n")
    assert result["output"].endswith("199999\n200000")
    assert "bytes omitted" in result["output"]
    total = len("\n".join(str(n) for n in range(1, 200001)))
    assert result["truncated"]["total_bytes"] == total
    assert result["truncated"]["kept_bytes"] >= 2048
    assert result["exit_code"] == 0


def test_commands_reading_pipes_see_default_sigpipe(run_tool):
    assert bash(run_tool, "yes | head -n 2") == {"output": "y\ny", "exit_code": 0}


def test_handle_in_process():
    result = respond(bash_tool.handle, {"command": "echo $((6 * 7))"})
    assert result == {"output": "42", "exit_code": 0}


def test_missing_shell_is_127(monkeypatch):
    monkeypatch.setattr(bash_tool, "SHELL", "/nonexistent/sh")
    result = respond(bash_tool.handle, {"command": "true"})
    assert result["exit_code"] == 127
    assert "cannot run /nonexistent/sh" in json.dumps(result)
