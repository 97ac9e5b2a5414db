"""``ikigai tool list|show|run``, ``refresh``, ``trust``, ``untrust``, ``plugins``, ``--version``."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from ikigai_core import __version__
from ikigai_core.cli import cli, main
from tests.support.terminal import Terminal
from tests.support.tools import schema_for


@pytest.fixture
def invoke(tmp_path, monkeypatch):
    """Run the CLI in-process from ``tmp_path`` with separate stdout and stderr."""
    monkeypatch.chdir(tmp_path)

    def invoke(*args: str, input: str | None = None):
        return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)

    return invoke


@pytest.fixture
def tools_dir(isolated_home) -> Path:
    return isolated_home / "tools"


def ikigai(*args: str, cwd: Path, input: str | None = None) -> subprocess.CompletedProcess:
    """The installed ``ikigai`` as a real subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "ikigai_core.cli", *args], cwd=cwd, input=input,
        capture_output=True, text=True, timeout=60,
    )


def test_list_json_has_name_path_source_description(invoke, make_tool, tools_dir):
    make_tool(tools_dir, "echo-tool")
    result = invoke("tool", "list", "--json")
    assert result.exit_code == 0
    entries = {e["name"]: e for e in json.loads(result.stdout)}
    assert entries["echo"] == {
        "name": "echo", "path": str(tools_dir / "echo-tool"), "source": "user",
        "description": "The echo test tool",
    }


def test_list_text_shows_skipped_tools_on_stderr(invoke, make_tool, tools_dir):
    make_tool(tools_dir, "echo-tool")
    make_tool(tools_dir, "broken-tool", schema="oops")
    make_tool(tools_dir, "notes.txt")
    result = invoke("tool", "list")
    assert result.exit_code == 0
    assert "echo" in result.stdout and "The echo test tool" in result.stdout
    assert "skipped user tool 'broken'" in result.stderr
    assert "not valid JSON" in result.stderr
    assert "notes.txt" not in result.stderr
    verbose = invoke("tool", "list", "--verbose")
    assert str(tools_dir / "echo-tool") in verbose.stdout
    assert "notes.txt" in verbose.stderr


def test_list_text_shows_the_first_line_of_a_long_description(invoke, make_tool, tools_dir):
    schema = {**schema_for("multi"), "description": "\n  First line.\nSecond line.\n"}
    make_tool(tools_dir, "multi-tool", schema=schema)
    make_tool(tools_dir, "plain-tool")
    lines = invoke("tool", "list").stdout.splitlines()
    assert "Second line." not in "\n".join(lines)
    multi = next(line for line in lines if line.startswith("multi "))
    plain = next(line for line in lines if line.startswith("plain "))
    assert multi.endswith("user      First line.")
    assert multi.index("First") == plain.index("The plain")  # the columns line up
    full = {e["name"]: e for e in json.loads(invoke("tool", "list", "--json").stdout)}
    assert full["multi"]["description"] == "\n  First line.\nSecond line.\n"


def test_json_output_stays_pure_with_skipped_tools(invoke, make_tool, tools_dir):
    make_tool(tools_dir, "broken-tool", schema="oops")
    result = invoke("tool", "list", "--json")
    assert isinstance(json.loads(result.stdout), list)
    assert "broken" in result.stderr


def test_descriptions_cannot_drive_the_terminal(invoke, make_tool, tools_dir):
    make_tool(tools_dir, "evil-tool",
              schema={**schema_for("evil"), "description": "hi\x1b[2J\x07there"})
    result = invoke("tool", "list")
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "hi\\x1b[2J\\x07there" in result.stdout
    assert "\x1b" not in invoke("tool", "show", "evil").stdout


def test_show_text_and_json(invoke, make_tool, tools_dir):
    make_tool(tools_dir, "echo-tool")
    text = invoke("tool", "show", "echo")
    assert text.exit_code == 0
    assert "Tool: echo" in text.stdout and f"Path: {tools_dir / 'echo-tool'}" in text.stdout
    data = json.loads(invoke("tool", "show", "echo", "--json").stdout)
    assert data["schema"] == schema_for("echo") and data["source"] == "user"


def test_show_unknown_tool_is_one_line_exit_1(invoke):
    result = invoke("tool", "show", "nope")
    assert result.exit_code == 1
    assert result.stderr.strip() == "ikigai: unknown tool 'nope'; see `ikigai tool list`"


def test_run_prints_envelope_and_exit_code(invoke, make_tool, tools_dir):
    make_tool(tools_dir, "echo-tool")
    ok = invoke("tool", "run", "echo", '{"a": 1}')
    assert ok.exit_code == 0
    assert json.loads(ok.stdout) == {"tool_success": True, "result": {"ok": True, "args": {"a": 1}}}
    from_stdin = invoke("tool", "run", "echo", input='{"b": 2}')
    assert json.loads(from_stdin.stdout)["result"]["args"] == {"b": 2}


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (["nope", "{}"], "TOOL_NOT_FOUND", "nope"),
        (["echo", "{not json"], "INVALID_PARAMS", "not valid JSON"),
        (["echo", "[1, 2]"], "INVALID_PARAMS", "object"),
    ],
)
def test_run_failures_are_envelopes_exit_1(invoke, make_tool, tools_dir, args, code, words):
    make_tool(tools_dir, "echo-tool")
    result = invoke("tool", "run", *args)
    assert result.exit_code == 1
    envelope = json.loads(result.stdout)
    assert envelope["tool_success"] is False and envelope["error_code"] == code
    assert words in envelope["error"]


def test_run_missing_required_argument_names_the_field(invoke, make_tool, tools_dir):
    make_tool(tools_dir, "need-tool", schema={
        **schema_for("need", path={"type": "string"}),
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                       "required": ["path"]}})
    envelope = json.loads(invoke("tool", "run", "need", "{}").stdout)
    assert envelope["error_code"] == "INVALID_PARAMS" and "path" in envelope["error"]


@pytest.mark.parametrize("number", ["NaN", "1e999999", "-1e400"])
def test_tool_output_that_is_not_strict_json_still_gives_strict_json(invoke, make_tool, tools_dir,
                                                                     number):
    make_tool(tools_dir, "nan-tool", body=f"print('{{\"x\": {number}}}')")
    result = invoke("tool", "run", "nan", "{}")
    envelope = json.loads(result.stdout, parse_constant=lambda c: pytest.fail(c))
    assert envelope["error_code"] == "INVALID_OUTPUT"


def test_check_a_tool_every_provider_accepts(invoke):
    result = invoke("tool", "check", "bash")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("bash (system, ") and "--schema answer valid" in lines[0]
    verdicts = dict(line.split(None, 1) for line in lines[1:] if not line.startswith(" "))
    assert {name: verdicts[name] for name in ("anthropic", "google", "openai")} == {
        "anthropic": "as is", "google": "as is", "openai": "rewritten"}
    assert "    strict form: every property required (optional ones nullable), no other keys" in (
        result.stdout)


def test_check_a_tool_one_provider_rejects(invoke, make_tool, tools_dir):
    make_tool(tools_dir, "odata-tool", schema={
        "name": "odata", "description": "OData", "parameters": {
            "type": "object", "properties": {"$top": {"type": "integer"}}}})
    result = invoke("tool", "check", "odata")
    assert result.exit_code == 1
    assert "anthropic  excluded: property names must be 1-64 of a-z A-Z 0-9 _ . -: $top" in (
        result.stdout)
    alone = invoke("tool", "check", "odata", "--provider", "google", "--json")
    assert alone.exit_code == 0
    report = json.loads(alone.stdout)
    assert report["name"] == "odata" and list(report["providers"]) == ["google"]
    assert report["providers"]["google"] == {
        "status": "as is", "changes": [], "reason": None,
        "declaration": {"name": "odata", "description": "OData", "parameters": {
            "type": "object", "properties": {"$top": {"type": "integer"}}}}}
    excluded = json.loads(invoke("tool", "check", "odata", "--provider", "anthropic",
                                 "--json").stdout)["providers"]["anthropic"]
    assert excluded["status"] == "excluded" and excluded["declaration"] is None


def test_check_an_unknown_or_broken_tool(invoke, make_tool, tools_dir):
    make_tool(tools_dir, "broken-tool", schema="not json")
    assert invoke("tool", "check", "nope").exit_code == 1
    broken = invoke("tool", "check", "broken")
    assert broken.exit_code == 1 and "was not loaded" in broken.stderr
    unknown = invoke("tool", "check", "bash", "--provider", "nope")
    assert unknown.exit_code != 0 and "Unknown provider 'nope'" in unknown.stderr


@pytest.mark.parametrize("args", [["tool", "bogus"], ["tool", "list", "--bogus"],
                                  ["tool", "show"], ["tool", "run"],
                                  ["tool", "run", "a", "{}", "extra"], ["nope"]])
def test_usage_errors_exit_2(args, capsys):
    with pytest.raises(SystemExit) as exc:
        main(args)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "Error" in err


def test_version():
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0 and __version__ in result.stdout


def test_refresh_reports_count_and_changes(invoke, make_tool, tools_dir):
    make_tool(tools_dir, "one-tool")
    first = invoke("refresh")
    assert first.exit_code == 0
    count = len(json.loads(invoke("tool", "list", "--json").stdout))
    assert first.stdout.splitlines() == [f"Tools refreshed. {count} tools available."]
    make_tool(tools_dir, "two-tool")
    make_tool(tools_dir, "one-tool", schema={**schema_for("one"), "description": "new"})
    make_tool(tools_dir, "bad-tool", schema="nope")
    second = invoke("refresh").stdout.splitlines()
    assert second[0] == f"Tools refreshed. {count + 1} tools available."
    assert "Added: two" in second and "Changed: one" in second
    [skipped] = [line for line in second if line.startswith("Skipped: ")]
    assert "user bad-tool broken" in skipped.removeprefix("Skipped: ").split(", ")
    (tools_dir / "two-tool").unlink()
    assert "Removed: two" in invoke("refresh").stdout


def test_untrusted_notice_and_trust_commands(invoke, make_tool, tmp_path):
    make_tool(tmp_path / ".ikigai" / "tools", "proj-tool")
    make_tool(tmp_path / ".ikigai" / "tools", "proj2-tool")
    before = invoke("tool", "list")
    assert "proj" not in before.stdout
    notice = [line for line in before.stderr.splitlines() if "not loaded" in line]
    assert notice == [f"ikigai: 2 project tools not loaded: project directory not trusted; "
                      f"run `ikigai trust {tmp_path.resolve()}`"]
    trusted = invoke("trust")
    assert trusted.exit_code == 0
    assert trusted.stdout == f"Trusted {tmp_path.resolve()}: its .ikigai/tools will be loaded.\n"
    assert "proj" in invoke("tool", "list").stdout
    assert invoke("trust", "--list").stdout.splitlines() == [str(tmp_path.resolve())]
    untrusted = invoke("untrust", str(tmp_path))
    assert untrusted.exit_code == 0
    assert untrusted.stdout == f"No longer trusted: {tmp_path.resolve()}\n"
    assert "proj" not in invoke("tool", "list").stdout
    assert invoke("trust", "--list").stdout == "No trusted directories.\n"


def test_trust_and_untrust_say_what_they_did_not_do(invoke, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert invoke("untrust", str(empty)).stdout == f"{empty} was not trusted; nothing changed.\n"
    assert invoke("trust", str(empty)).stdout == (
        f"Trusted {empty}; it has no .ikigai/tools yet (tools put there will be loaded).\n")


def test_refresh_names_the_ignored_untrusted_file_not_the_tool(invoke, make_tool, tmp_path):
    """An untrusted project bash-tool read as "Skipped: bash", as if the built-in were gone."""
    make_tool(tmp_path / ".ikigai" / "tools", "bash-tool")
    make_tool(tmp_path / ".ikigai" / "tools", "bad-tool", schema="nope")
    result = invoke("refresh")
    assert "Skipped: project bad-tool ignored (untrusted), project bash-tool ignored (untrusted)\n" in result.stdout
    assert "bash  " in invoke("tool", "list").stdout  # the built-in still there


def test_a_first_refresh_adds_nothing(invoke, make_tool, tools_dir):
    """A fresh home listed every tool as "Added": there was nothing to compare with."""
    make_tool(tools_dir, "one-tool")
    assert invoke("refresh").stdout.splitlines()[1:] == []


def test_trust_usage_errors(invoke, tmp_path):
    assert invoke("trust", str(tmp_path / "missing")).exit_code == 2
    assert invoke("trust", "--list", str(tmp_path)).exit_code == 2


def test_trust_store_is_private_and_corruption_is_one_line(invoke, isolated_home, tmp_path):
    invoke("trust")
    store = isolated_home / "trust.json"
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    assert stat.S_IMODE(isolated_home.stat().st_mode) in (0o700, 0o755)
    store.write_text("{corrupt")
    result = invoke("trust", "--list")
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1 and "trust.json is corrupt" in result.stderr


def test_concurrent_trust_calls_all_land(isolated_home, tmp_path):
    from ikigai_core.trust import TrustStore

    dirs = [tmp_path / f"p{i}" for i in range(20)]
    for d in dirs:
        d.mkdir()
    threads = [threading.Thread(target=TrustStore(isolated_home).trust, args=(d,)) for d in dirs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(TrustStore(isolated_home).directories()) == {d.resolve() for d in dirs}


def test_concurrent_trust_processes_all_land(isolated_home, tmp_path):
    dirs = [tmp_path / f"p{i}" for i in range(8)]
    procs = []
    for d in dirs:
        d.mkdir()
        procs.append(subprocess.Popen([sys.executable, "-m", "ikigai_core.cli", "trust", str(d)],
                                      stdout=subprocess.DEVNULL))
    assert all(p.wait(timeout=60) == 0 for p in procs)
    listed = ikigai("trust", "--list", cwd=tmp_path).stdout.splitlines()
    assert sorted(listed) == sorted(str(d.resolve()) for d in dirs)


def test_corrupt_config_is_one_line(invoke, isolated_home):
    (isolated_home / "config.json").write_text('{"tool_timeout": "soon"}')
    assert invoke("tool", "list").exit_code == 0  # a bad value stops only what reads it
    result = invoke("tool", "run", "bash", '{"command": "true"}')
    assert result.exit_code == 1
    assert "'tool_timeout' must be a positive float" in result.stderr
    assert result.stderr.count("\n") == 1


def test_plugins_lists_defaults(invoke):
    data = json.loads(invoke("plugins", "--json").stdout)
    by_name = {p["name"]: p for p in data}
    assert by_name["ikigai_core.envelope"] == {
        "name": "ikigai_core.envelope", "distribution": "ikigai-core", "version": __version__,
        "hooks": ["ikigai_wrap_result"], "builtin": True,
    }
    text = invoke("plugins").stdout
    assert "ikigai_core.defaults.scanner" in text and "ikigai_tool_sources" in text


def test_disabling_the_scanner_plugin_hides_user_tools(invoke, make_tool, tools_dir, monkeypatch):
    make_tool(tools_dir, "echo-tool")
    monkeypatch.setenv("IKIGAI_DISABLE_PLUGINS", "ikigai_core.defaults.scanner")
    assert "echo" not in invoke("tool", "list").stdout


def test_disabling_the_envelope_is_a_usage_error(monkeypatch, capsys):
    monkeypatch.setenv("IKIGAI_DISABLE_PLUGINS", "ikigai_core.envelope")
    with pytest.raises(SystemExit) as exc:
        main(["tool", "list"])
    assert exc.value.code == 2
    assert "essential" in capsys.readouterr().err


def test_subprocess_run_and_list(make_tool, tools_dir, tmp_path):
    make_tool(tools_dir, "echo-tool")
    listed = ikigai("tool", "list", "--json", cwd=tmp_path)
    assert listed.returncode == 0 and "echo" in {e["name"] for e in json.loads(listed.stdout)}
    ran = ikigai("tool", "run", "echo", cwd=tmp_path, input='{"x": "y"}')
    assert ran.returncode == 0 and json.loads(ran.stdout)["result"]["args"] == {"x": "y"}
    missing = ikigai("tool", "run", "nope", "{}", cwd=tmp_path)
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
    usage = ikigai("tool", "frobnicate", cwd=tmp_path)
    assert usage.returncode == 2 and "Traceback" not in usage.stderr


def test_sigterm_to_ikigai_kills_the_running_tool(make_tool, tools_dir, tmp_path):
    pidfile = tmp_path / "pid"
    make_tool(tools_dir, "sleepy-tool",
              body=f"open({str(pidfile)!r}, 'w').write(str(os.getpid())); time.sleep(60)")
    proc = subprocess.Popen([sys.executable, "-m", "ikigai_core.cli", "tool", "run", "sleepy", "{}"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for _ in range(200):
        if pidfile.exists() and pidfile.read_text():
            break
        threading.Event().wait(0.05)
    tool_pid = int(pidfile.read_text())
    proc.terminate()
    _, err = proc.communicate(timeout=30)
    assert proc.returncode != 0 and b"Traceback" not in err
    for _ in range(100):
        try:
            os.kill(tool_pid, 0)
        except ProcessLookupError:
            break
        threading.Event().wait(0.05)
    else:
        pytest.fail("the tool survived ikigai's SIGTERM")


def test_run_exit_code_follows_the_outcome_under_a_replacement_envelope(
    invoke, make_tool, tools_dir, monkeypatch
):
    from ikigai_core import hookimpl
    from ikigai_core.app import App

    class Plain:
        @hookimpl
        def ikigai_wrap_result(self, outcome):
            return {"ok": outcome.success}

    real_pm = App.pm.func

    def pm_with_plugin(self):
        pm = real_pm(self)
        pm.register(Plain(), name="plain")
        return pm

    monkeypatch.setattr(App, "pm", property(pm_with_plugin))
    make_tool(tools_dir, "echo-tool")
    ok = invoke("tool", "run", "echo", "{}")
    assert (ok.exit_code, json.loads(ok.stdout)) == (0, {"ok": True})
    bad = invoke("tool", "run", "nope", "{}")
    assert (bad.exit_code, json.loads(bad.stdout)) == (1, {"ok": False})


def test_show_and_run_say_why_a_found_tool_was_not_loaded(invoke, make_tool, tmp_path):
    make_tool(tmp_path / ".ikigai" / "tools", "proj-tool")
    shown = invoke("tool", "show", "proj")
    assert shown.exit_code == 1
    assert shown.stderr == (f"ikigai: tool 'proj' (project) was not loaded: project directory "
                            f"not trusted; run `ikigai trust {tmp_path.resolve()}`\n")
    ran = invoke("tool", "run", "proj", "{}")
    assert ran.exit_code == 1 and json.loads(ran.stdout)["error_code"] == "TOOL_NOT_FOUND"
    assert "was not loaded: project directory not trusted" in ran.stderr


def test_lone_surrogates_from_a_tool_are_invalid_output_not_a_crash(invoke, make_shell_tool,
                                                                    tools_dir):
    make_shell_tool(tools_dir, "sur-tool", """\
        if [ "$1" = "--schema" ]; then
          echo '{"name": "sur", "description": "d", "parameters": {"type": "object"}}'; exit 0
        fi
        echo '{"a": "\\ud800"}'
    """)
    make_shell_tool(tools_dir, "bad-schema-tool", """\
        echo '{"name": "b", "description": "\\udfff", "parameters": {"type": "object"}}'
    """)
    ran = invoke("tool", "run", "sur", "{}")
    assert ran.exit_code == 1
    assert "unpaired UTF-16 surrogate" in json.loads(ran.stdout)["error"]
    listed = invoke("tool", "list")
    assert listed.exit_code == 0 and "unpaired UTF-16 surrogate" in listed.stderr
    args = invoke("tool", "run", "sur", '{"x": "\\ud800"}')
    assert json.loads(args.stdout)["error_code"] == "INVALID_PARAMS"


@pytest.mark.parametrize("how", ["stdin", "argument"])
def test_arguments_that_are_not_utf8_are_invalid_params_and_start_nothing(make_tool, tools_dir,
                                                                         tmp_path, how):
    make_tool(tools_dir, "mark-tool", body=f"open({str(tmp_path / 'RAN')!r}, 'w')")
    data = b'{"x": "\xff\xfe"}'
    command = [sys.executable, "-m", "ikigai_core.cli", "tool", "run", "mark"]
    if how == "argument":
        command.append(os.fsdecode(data))
    ran = subprocess.run(command, cwd=tmp_path, input=data if how == "stdin" else b"",
                         capture_output=True, timeout=60)
    envelope = json.loads(ran.stdout)
    assert ran.returncode == 1 and envelope["error_code"] == "INVALID_PARAMS"
    assert "not valid UTF-8 (byte 7)" in envelope["error"]
    assert not (tmp_path / "RAN").exists()


def test_undecodable_file_names_in_a_tools_directory_still_list(make_tool, tools_dir, tmp_path):
    make_tool(tools_dir, "echo-tool")
    bad = os.fsencode(tools_dir) + b"/caf\xe9-tool"
    with open(bad, "w") as f:
        f.write("#!/bin/sh\n")
    os.chmod(bad, 0o755)
    for args in (("tool", "list"), ("tool", "list", "--json"), ("tool", "list", "--verbose")):
        ran = ikigai(*args, cwd=tmp_path)
        assert ran.returncode == 0 and "Traceback" not in ran.stderr, ran.stderr
        assert "echo" in ran.stdout


def test_deleted_current_directory_is_one_line(tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    script = f'cd "{gone}" && rmdir "{gone}" && exec "{sys.executable}" -m ikigai_core.cli tool list'
    ran = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 1
    assert ran.stderr == ("ikigai: the current directory no longer exists; "
                          "cd to an existing directory\n")


def test_run_on_a_terminal_says_it_reads_the_arguments(tmp_path):
    argv = [sys.executable, "-m", "ikigai_core.cli", "tool", "run", "glob"]
    with Terminal(argv, cwd=tmp_path) as term:
        term.read_until(b"end with Ctrl-D\r\n")
        term.write(b'{"pattern": "*.none"}\n\x04')
        seen = term.read_until(b"")
        assert term.wait() == 0
    assert b'"tool_success": true' in seen


def test_the_ikigai_script_loads_with_the_collector_off_then_turns_it_on():
    """The `ikigai` script turns the garbage collector off while the CLI loads, freezes what
    loaded and turns it on (a chat that runs for hours must not keep it off); the script
    does it, not main() (issue 23: tests/test_process_state.py)."""
    script = Path(sys.executable).parent / "ikigai"
    source = script.read_text()
    assert source.index("gc.disable()") < source.index("from ikigai_core.cli import run")
    probe = ("import gc, runpy, sys\nsys.argv = [sys.argv[1], '--version']\ntry:\n"
             "    runpy.run_path(sys.argv[0], run_name='__main__')\nexcept SystemExit:\n"
             "    pass\nprint(gc.isenabled(), gc.get_freeze_count() > 0)")
    ran = subprocess.run([sys.executable, "-c", probe, str(script)], capture_output=True,
                         text=True, timeout=60)
    assert ran.returncode == 0 and ran.stdout.split() == ["ikigai,", "version",
                                                          __version__, "True", "True"], ran
