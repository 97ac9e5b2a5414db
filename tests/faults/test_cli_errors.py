"""Every CLI error path through the real ``ikigai`` process: one line, the documented exit
code (README "Exit codes": 0/1/2/130), never a traceback.

``tool run`` failures are envelopes on stdout (what the model would get back) with exit 1
and nothing on stderr; every other failure is one ``ikigai:`` line on stderr.
"""

from __future__ import annotations

import json
import socket

import pytest

from tests.faults.support import assert_one_line_error, ikigai
from tests.support.tools import schema_for


@pytest.fixture
def tools(isolated_home, make_tool):
    """One user tool with a required argument; cwd for the CLI is a scratch directory."""
    schema = schema_for("need", path={"type": "string"})
    schema["parameters"]["required"] = ["path"]
    make_tool(isolated_home / "tools", "need-tool", schema=schema)
    return isolated_home / "tools"


def run_envelope(tmp_path, *args: str, input: str | None = None) -> dict:
    """``ikigai tool run ...`` that must fail: exit 1, a failure envelope, a silent stderr."""
    proc = ikigai("tool", "run", *args, cwd=tmp_path, input=input)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert proc.stderr == "", proc.stderr
    envelope = json.loads(proc.stdout)
    assert envelope["tool_success"] is False and "\n" not in envelope["error"]
    return envelope


def test_unknown_tool(tools, tmp_path):
    envelope = run_envelope(tmp_path, "nope", "{}")
    assert envelope["error_code"] == "TOOL_NOT_FOUND"
    assert "'nope' not found" in envelope["error"] and "need" in envelope["error"]
    assert_one_line_error(ikigai("tool", "show", "nope", cwd=tmp_path), 1, "unknown tool 'nope'")


@pytest.mark.parametrize("args_json, words", [
    ('{"path": ', "not valid JSON"),
    ('[' * 100_000, "nested too deeply"),
    ('{"a":' * 5000 + "1" + "}" * 5000, "nested too deeply"),
    ("[1, 2]", "must be a JSON object, got array"),
    ('"text"', "must be a JSON object, got string"),
    ("null", "must be a JSON object, got null"),
    ("{}", "missing required field 'path'"),
    ('{"path": 3}', "'path': 3 is not of type 'string'"),
])
def test_bad_arguments_are_invalid_params(tools, tmp_path, args_json, words):
    envelope = run_envelope(tmp_path, "need", input=args_json)
    assert envelope["error_code"] == "INVALID_PARAMS"
    assert words in envelope["error"]


def test_unknown_provider_is_a_usage_error(tmp_path):
    for command in ("ask", "request"):
        proc = ikigai(command, "--provider", "nope", "hi", cwd=tmp_path)
        assert_one_line_error(proc, 2, "Unknown provider 'nope'", "openai")


@pytest.mark.parametrize("provider, variable", [
    ("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY"),
    ("google", "GOOGLE_API_KEY"),
])
def test_missing_key_names_the_variable(tmp_path, provider, variable):
    proc = ikigai("ask", "--provider", provider, "hi", cwd=tmp_path)
    assert_one_line_error(proc, 1, f"No API key for provider '{provider}'", variable)


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_unreachable_base_url_is_one_line(tmp_path):
    url = f"http://127.0.0.1:{closed_port()}"
    env = {"OPENAI_API_KEY": "sk-unreachable", "OPENAI_BASE_URL": url}
    proc = ikigai("ask", "--provider", "openai", "hi", cwd=tmp_path, env=env, timeout=120)
    line = assert_one_line_error(proc, 1, "Cannot reach provider 'openai'", "OPENAI_BASE_URL")
    assert "sk-unreachable" not in line


@pytest.mark.parametrize("config, words", [
    ('{"tool_timeout": ', "not valid JSON"),
    ('["a"]', "must hold a JSON object"),
    ('{"tool_timeout": -1}', "'tool_timeout' must be a positive float"),
    ('{"tool_timeout": 1e400}', "'tool_timeout' must be a positive float"),
    ('{"nonsense": 1}', "unknown key 'nonsense'"),
    (b'{"model": "\xff"}', "not valid JSON"),
])
def test_bad_config_file_is_one_line(isolated_home, tmp_path, config, words):
    """A file ikigai cannot read stops every command; a bad value, those that use it."""
    path = isolated_home / "config.json"
    path.write_bytes(config if isinstance(config, bytes) else config.encode())
    proc = ikigai("tool", "run", "bash", '{"command": "true"}', cwd=tmp_path)
    assert_one_line_error(proc, 1, str(path), words)


def test_a_bad_setting_stops_only_the_commands_that_use_it(tmp_path):
    env = {"IKIGAI_MAX_TURNS": "many", "OPENAI_API_KEY": "sk-not-used-here"}
    listed = ikigai("tool", "list", cwd=tmp_path, env=env)
    assert listed.returncode == 0 and listed.stderr == "", listed.stderr
    asked = ikigai("ask", "--provider", "openai", "hi", cwd=tmp_path, env=env)
    assert_one_line_error(asked, 1, "environment variable IKIGAI_MAX_TURNS: 'max_turns' must be")


@pytest.mark.parametrize("value", ["Infinity", "1e10", "NaN", "-3", "soon"])
def test_extreme_or_bad_timeouts_are_one_line_or_work(tmp_path, value):
    """A timeout that is absurd but positive works; anything else is one clear line."""
    proc = ikigai("tool", "run", "bash", '{"command": "echo hi"}', cwd=tmp_path,
                  env={"IKIGAI_TOOL_TIMEOUT": value})
    if value in ("1e10",):
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["result"]["output"] == "hi"
    else:
        assert_one_line_error(proc, 1, "IKIGAI_TOOL_TIMEOUT")


def test_home_that_is_a_file_is_one_line(tmp_path):
    home = tmp_path / "home-file"
    home.write_text("not a directory")
    for args in (("trust", str(tmp_path)), ("tool", "list"), ("refresh",)):
        proc = ikigai(*args, cwd=tmp_path, env={"IKIGAI_HOME": str(home)})
        assert_one_line_error(proc, 1, str(home))


def test_home_that_is_a_file_in_process(tmp_path, capsys):
    """The same faults without a subprocess: clear errors, a warning for the snapshot."""
    from ikigai_core.config import load_settings
    from ikigai_core.errors import ConfigError
    from ikigai_core.notices import Notices
    from ikigai_core.registry import Registry
    from ikigai_core.snapshot import Snapshot
    from ikigai_core.tools import Tool
    from ikigai_core.trust import TrustStore

    home = tmp_path / "home-file"
    home.write_text("not a directory")
    with pytest.raises(ConfigError, match="cannot write .*trust.json"):
        TrustStore(home).trust(tmp_path)
    with pytest.raises(ConfigError, match="cannot read .*config.json"):
        load_settings(home, {})
    notices = Notices()
    Snapshot(home).record(Registry([Tool("t", "d", {"type": "object"}, ("/t",), "user")]),
                          notices)
    assert "cannot write" in [n.message for n in notices][0]
