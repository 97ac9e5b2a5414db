"""Discovery: directory scanning, --schema in parallel, failure reasons, precedence, cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ikigai_core import (
    ProcessSpec,
    SkippedTool,
    ToolCandidate,
    ToolOutcome,
    ToolScan,
    discovery,
    hookimpl,
    process,
)
from ikigai_core.app import App
from ikigai_core.config import Settings
from ikigai_core.discovery import (
    DirectorySource,
    Discovery,
    DiscoveryState,
    discover,
)
from ikigai_core.notices import Notices
from ikigai_core.plugins import get_plugin_manager
from ikigai_core.tool_schema import validate_schema
from ikigai_core.trust import TrustStore
from tests.support.procs import wait_gone
from tests.support.tools import schema_for


@pytest.fixture
def pm():
    """Defaults only: built-in, user and project sources, the envelope."""
    return get_plugin_manager(load_entry_points=False, environ={})


@pytest.fixture
def project(tmp_path):
    """A trusted project directory."""
    root = tmp_path / "project"
    (root / ".ikigai" / "tools").mkdir(parents=True)
    return root


def run(pm, home, cwd, notices=None, **settings):
    return discover(pm, home=home, cwd=cwd, settings=Settings(**settings), notices=notices)


def user_tools(home: Path) -> Path:
    return home / "tools"


def test_user_tool_is_discovered_with_name_from_filename(pm, isolated_home, make_tool, tmp_path):
    make_tool(user_tools(isolated_home), "word-count-tool", schema=schema_for("anything_else"))
    registry = run(pm, isolated_home, tmp_path)
    tool = registry["word_count"]
    assert tool.source == "user"
    assert tool.path == user_tools(isolated_home) / "word-count-tool"
    assert tool.description == "The anything_else test tool"


def test_precedence_project_over_user_over_system(pm, isolated_home, make_tool, project):
    make_tool(user_tools(isolated_home), "bash-tool", schema=schema_for("bash"))
    make_tool(user_tools(isolated_home), "mine-tool")
    make_tool(project / ".ikigai" / "tools", "mine-tool")
    TrustStore(isolated_home).trust(project)
    registry = run(pm, isolated_home, project)
    assert registry["bash"].source == "user"
    assert registry["mine"].source == "project"
    overridden = [s for s in registry.skipped if s.name == "mine"]
    assert overridden[0].kind == "ignored" and "overridden by the project tool" in overridden[0].reason


def test_registry_is_sorted_by_name(pm, isolated_home, make_tool, tmp_path):
    for name in ("zeta", "alpha", "mid"):
        make_tool(user_tools(isolated_home), f"{name}-tool")
    names = [n for n in run(pm, isolated_home, tmp_path) if n in ("zeta", "alpha", "mid")]
    assert names == ["alpha", "mid", "zeta"]


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        ({"schema_body": "time.sleep(5)"}, "--schema timed out after 0.5 s"),
        ({"schema_body": "sys.exit(3)"}, "--schema crashed with exit code 3"),
        ({"schema_body": "os.kill(os.getpid(), signal.SIGSEGV)"}, "crashed with exit code 139"),
        ({"schema": "not json"}, "--schema output is not valid JSON"),
        ({"schema": "[1, 2]"}, "--schema output is a JSON array, not an object"),
        ({"schema": "{}{}"}, "--schema output has data after the JSON value"),
        ({"schema": '{"name": "x", "description": "d", "parameters": {"type": "object", "x": NaN}}'},
         "NaN"),
        ({"schema": {"name": "x", "parameters": {"type": "object"}}}, "no string 'description'"),
        ({"schema": {"name": "x", "description": "d"}}, "'parameters' must be a JSON Schema object"),
        ({"schema": {"name": "x", "description": "d", "parameters": {"type": "array"}}},
         "'parameters' must be a JSON Schema object"),
        ({"schema": {"name": "x", "description": "d",
                     "parameters": {"type": "object", "properties": {"a": {"type": "nope"}}}}},
         "not valid JSON Schema at properties/a/type"),
        ({"schema": "x" * 9000}, "--schema printed more than 8192 bytes"),
    ],
)
def test_broken_tool_is_skipped_with_reason_and_others_survive(
    pm, isolated_home, make_tool, tmp_path, kwargs, reason
):
    make_tool(user_tools(isolated_home), "bad-tool", **kwargs)
    make_tool(user_tools(isolated_home), "good-tool")
    registry = run(pm, isolated_home, tmp_path, schema_timeout=0.5)
    assert "good" in registry and "bad" not in registry
    [skipped] = [s for s in registry.skipped if s.name == "bad"]
    assert reason in skipped.reason
    assert skipped.kind == "invalid" and skipped.source == "user"


def test_a_crashed_schema_names_the_last_line_it_wrote_on_stderr(
    pm, isolated_home, make_tool, tmp_path
):
    make_tool(user_tools(isolated_home), "dep-tool", schema_body="""
        sys.stderr.write("Traceback ...\\nImportError: missing dependency foo\\n\\n")
        sys.exit(1)
    """)
    [skipped] = run(pm, isolated_home, tmp_path).skipped
    assert skipped.reason == "--schema crashed with exit code 1: ImportError: missing dependency foo"


def test_a_missing_interpreter_is_named(pm, isolated_home, make_shell_tool, tmp_path, make_tool):
    tool = make_shell_tool(user_tools(isolated_home), "old-tool", "echo hi\n")
    tool.write_text("#!/usr/bin/no-such-python3 -u\nprint('hi')\n")
    [skipped] = run(pm, isolated_home, tmp_path).skipped
    assert skipped.reason == ("cannot run --schema: its interpreter /usr/bin/no-such-python3 "
                              f"(the #! line of {tool}) does not exist")


def test_a_missing_interpreter_found_through_env_is_named(pm, isolated_home, make_shell_tool,
                                                          tmp_path):
    tool = make_shell_tool(user_tools(isolated_home), "envy-tool", "echo hi\n")
    tool.write_text("#!/usr/bin/env no-such-python3\nprint('hi')\n")
    [skipped] = run(pm, isolated_home, tmp_path).skipped
    assert skipped.reason.startswith("--schema crashed with exit code 127: ")
    assert "no-such-python3" in skipped.reason and "No such file or directory" in skipped.reason


def test_a_tools_directory_that_is_a_file_is_reported(pm, isolated_home, tmp_path):
    user_tools(isolated_home).write_text("I am not a directory")
    [skipped] = run(pm, isolated_home, tmp_path).skipped
    assert skipped.source == "user" and skipped.kind == "invalid"
    assert skipped.reason == (f"{user_tools(isolated_home)} is a file, not a directory; "
                              "tools go in a directory of that name")


def test_a_directory_source_says_why_each_file_is_not_a_tool(tmp_path, make_tool):
    """The public ``DirectorySource`` on its own (a plugin's tool folder), no trust checks."""
    folder = tmp_path / "tools"
    make_tool(folder, "good-tool")
    make_tool(folder, ".hidden-tool")
    (folder / "loop-tool").symlink_to(folder / "loop-tool")
    source = DirectorySource(folder, name="plugin", precedence=5)
    assert repr(source) == f"DirectorySource({str(folder)!r}, name='plugin')"
    scan = source.scan()
    assert [c.name for c in scan.candidates] == ["good"]
    reasons = {s.name: (s.kind, s.reason) for s in scan.skipped}
    assert reasons == {".hidden": ("ignored", "hidden file"),
                       "loop": ("invalid", "cannot stat: Too many levels of symbolic links")}
    as_file = tmp_path / "not-a-folder"
    as_file.write_text("")
    [skipped] = DirectorySource(as_file, name="plugin", precedence=5).scan().skipped
    assert skipped.reason == (f"{as_file} is a file, not a directory; tools go in a directory "
                              "of that name")


def test_schema_size_limit_is_exact(pm, isolated_home, make_tool, tmp_path):
    def padded(size: int) -> str:
        base = json.dumps({**schema_for("x"), "pad": ""})
        return base[:-2] + "x" * (size - len(base)) + '"}'

    assert len(padded(8192)) == 8192
    make_tool(user_tools(isolated_home), "fits-tool", schema=padded(8192))
    make_tool(user_tools(isolated_home), "over-tool", schema=padded(8193))
    registry = run(pm, isolated_home, tmp_path)
    assert "fits" in registry
    assert "over" not in registry


def test_schema_request_gets_empty_stdin_and_hidden_stderr(pm, isolated_home, make_tool, tmp_path):
    make_tool(
        user_tools(isolated_home), "quiet-tool",
        schema_body="sys.stderr.write('noise' * 10000)\n"
                    "data = sys.stdin.read()\n"
                    "s = {'name': 'q', 'description': repr(data), 'parameters': {'type': 'object'}}\n"
                    "print(json.dumps(s))",
    )
    # what is proved is what the call is given, not its time: a loaded machine may take
    # over the 1 s limit to start a tool that writes 100 KB to stderr (seen once, under a
    # suite run beside three engineers' tests)
    registry = run(pm, isolated_home, tmp_path, schema_timeout=30)
    assert registry["quiet"].description == "''"


def test_files_that_are_not_tools_are_skipped_with_reasons(pm, isolated_home, make_tool, tmp_path):
    tools = user_tools(isolated_home)
    make_tool(tools, "good-tool")
    make_tool(tools, "noexec-tool", mode=0o644)
    (tools / "dir-tool").mkdir()
    (tools / "dangling-tool").symlink_to(tools / "missing")
    os.mkfifo(tools / "fifo-tool")
    make_tool(tools, "README")
    make_tool(tools, "bad.name-tool")
    registry = run(pm, isolated_home, tmp_path)
    reasons = {s.name: (s.kind, s.reason) for s in registry.skipped if s.source == "user"}
    assert list(k for k in registry if k not in ("bash", "file_edit", "file_read", "file_write",
                                                   "glob", "grep")) == ["good"]
    assert reasons["noexec"] == ("invalid", f"not executable; run chmod +x {tools / 'noexec-tool'}")
    assert reasons["dir"] == ("invalid", "not a regular file")
    assert reasons["fifo"] == ("invalid", "not a regular file")
    assert reasons["dangling"][1] == "dangling symlink: its target does not exist"
    assert reasons["README"][0] == "ignored"
    assert "invalid tool name 'bad.name'" in reasons["bad.name"][1]


def test_symlinked_tool_is_followed(pm, isolated_home, make_tool, tmp_path):
    real = make_tool(tmp_path / "elsewhere", "real-tool")
    user_tools(isolated_home).mkdir()
    (user_tools(isolated_home) / "linked-tool").symlink_to(real)
    assert "linked" in run(pm, isolated_home, tmp_path)


def test_two_files_with_one_tool_name(pm, isolated_home, make_tool, tmp_path):
    make_tool(user_tools(isolated_home), "a-b-tool")
    make_tool(user_tools(isolated_home), "a_b-tool")
    registry = run(pm, isolated_home, tmp_path)
    assert "a_b" in registry
    assert any("same tool name" in s.reason for s in registry.skipped)


def test_unreadable_directory_is_reported(tmp_path, unprivileged):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0)
    scan = ("import sys; from ikigai_core.discovery import DirectorySource; "
            "print(DirectorySource(sys.argv[1], name='user', precedence=10).scan().skipped[0].reason)")
    ran = subprocess.run([*unprivileged, sys.executable, "-c", scan, str(locked)],
                         capture_output=True, text=True, timeout=60)
    assert ran.stdout.strip() == f"cannot read tool directory {locked}: Permission denied"


def test_missing_directory_holds_no_tools(tmp_path):
    assert DirectorySource(tmp_path / "nope", name="x", precedence=0).scan() == ToolScan()
    (tmp_path / "file").write_text("")
    assert DirectorySource(tmp_path / "file" / "sub", name="x", precedence=0).scan() == ToolScan()


def test_schema_calls_run_in_parallel(pm, isolated_home, make_tool, tmp_path, monkeypatch):
    """Proved by overlap, not by time: each tool logs when its half second of work starts and
    ends, and on a loaded machine the starved ones are asked again alone (by design)."""
    monkeypatch.setattr(discovery, "processors", lambda: 20)  # as on a 20-processor machine
    log = tmp_path / "spans.log"
    for i in range(20):
        body = (f"import os; f = open({str(log)!r}, 'a'); "
                "f.write(f'+ {time.monotonic()}\\n'); f.flush(); time.sleep(0.5); "
                "f.write(f'- {time.monotonic()}\\n'); f.flush(); "
                f"print(json.dumps({schema_for('s')!r}))")
        make_tool(user_tools(isolated_home), f"slow{i}-tool", schema_body=body)
    registry = run(pm, isolated_home, tmp_path)
    assert sum(name.startswith("slow") for name in registry) == 20
    events = sorted((float(stamp), sign == "+") for sign, stamp in
                    (line.split() for line in log.read_text().splitlines()))
    running = most = 0
    for _, starts in events:
        running += 1 if starts else -1
        most = max(most, running)
    assert most >= 5, f"at most {most} of 20 half-second --schema calls ran at once: not parallel"


def test_warm_cache_asks_no_schema_and_changed_files_are_asked_again(
    pm, isolated_home, make_tool, tmp_path
):
    log = tmp_path / "asked.log"
    body = f"open({str(log)!r}, 'a').write('x'); print(json.dumps({schema_for('c')!r}))"
    tool = make_tool(user_tools(isolated_home), "counted-tool", schema_body=body)
    run(pm, isolated_home, tmp_path)
    run(pm, isolated_home, tmp_path)
    assert log.read_text() == "x"
    tool.write_text(tool.read_text() + "\n# changed\n")
    run(pm, isolated_home, tmp_path)
    assert log.read_text() == "xx"
    discover(pm, home=isolated_home, cwd=tmp_path, settings=Settings(), refresh=True)
    assert log.read_text() == "xxx"


def test_a_schema_keeps_its_key_order_through_the_cache(pm, isolated_home, make_tool, tmp_path):
    """The model is sent a tool as the tool wrote it, on the first run and from the cache
    after: property order is the order a model fills arguments in, and the same bytes on
    every turn keep the provider's prompt cache."""
    schema = {"parameters": {"type": "object", "properties": {"zeta": {"type": "string"},
                                                              "alpha": {"type": "integer"}},
                             "required": ["zeta"]},
              "name": "ordered", "description": "Keys not in sorted order."}
    make_tool(user_tools(isolated_home), "ordered-tool", schema=schema)
    cold = json.dumps(run(pm, isolated_home, tmp_path)["ordered"].schema)
    warm = json.dumps(run(pm, isolated_home, tmp_path)["ordered"].schema)
    assert cold == warm == json.dumps(schema)


def test_cached_failure_is_not_asked_again_but_signals_are(
    pm, isolated_home, make_tool, tmp_path
):
    log = tmp_path / "asked.log"
    make_tool(user_tools(isolated_home), "broken-tool",
              schema_body=f"open({str(log)!r}, 'a').write('b'); print('nope')")
    make_tool(user_tools(isolated_home), "exits-tool",
              schema_body=f"open({str(log)!r}, 'a').write('e'); sys.exit(2)")
    make_tool(user_tools(isolated_home), "killed-tool",
              schema_body=f"open({str(log)!r}, 'a').write('k'); os.kill(os.getpid(), 9)")
    for _ in range(2):
        registry = run(pm, isolated_home, tmp_path)
        assert not {"broken", "exits", "killed"} & set(registry)
    assert sorted(log.read_text()) == ["b", "e", "k", "k"]


def test_a_timeout_starved_of_processor_time_is_asked_again_alone(
    pm, isolated_home, make_tool, tmp_path, monkeypatch
):
    log = tmp_path / "asked.log"
    make_tool(user_tools(isolated_home), "unlucky-tool", schema_body=f"""
        open({str(log)!r}, 'a').write('u')
        if len(open({str(log)!r}).read()) == 1:
            time.sleep(5)
        print(json.dumps({schema_for("unlucky")!r}))""")
    make_tool(user_tools(isolated_home), "other-tool")
    monkeypatch.setattr(process, "_cpu_wait", lambda pid, elapsed: 0.4)  # as if it waited
    assert "unlucky" in run(pm, isolated_home, tmp_path, schema_timeout=0.5)
    assert log.read_text() == "uu"


def test_a_tool_slow_on_its_own_is_skipped_once_and_not_asked_again(
    pm, isolated_home, make_tool, tmp_path, monkeypatch
):
    monkeypatch.setattr(process, "_cpu_wait", lambda pid, elapsed: 0.0)  # it never waited
    log = tmp_path / "asked.log"
    make_tool(user_tools(isolated_home), "slow-tool",
              schema_body=f"open({str(log)!r}, 'a').write('s'); time.sleep(5)")
    make_tool(user_tools(isolated_home), "other-tool")
    registry = run(pm, isolated_home, tmp_path, schema_timeout=0.3)
    assert "slow" not in registry and "other" in registry
    assert log.read_text() == "s"  # it slept: no processor was wanting, no retry
    registry = run(pm, isolated_home, tmp_path, schema_timeout=0.3)  # warm: asks nothing
    assert log.read_text() == "s"
    [skipped] = [s for s in registry.skipped if s.name == "slow"]
    assert "timed out after 0.3 s" in skipped.reason


def test_schema_calls_beyond_the_processors_wait_for_a_spare_one(
    pm, isolated_home, make_tool, tmp_path, monkeypatch
):
    monkeypatch.setattr(discovery, "processors", lambda: 2)
    log = tmp_path / "spans.log"
    for n in range(6):  # each keeps a processor busy for 0.3 s
        make_tool(user_tools(isolated_home), f"t{n}-tool", schema_body=f"""
            start = time.time()
            while time.time() < start + 0.3:
                pass
            open({str(log)!r}, 'a').write(f"{{start}} {{time.time()}}\\n")
            print(json.dumps({schema_for(f"t{n}")!r}))""")
    assert len([n for n in run(pm, isolated_home, tmp_path) if n.startswith("t")]) == 6
    spans = [tuple(map(float, line.split())) for line in log.read_text().splitlines()]
    busiest = max(sum(1 for s, e in spans if s <= start < e) for start, _ in spans)
    assert busiest <= 2


def test_a_sleeping_process_is_not_running_and_a_gone_one_neither():
    from ikigai_core.process import is_running

    sleeper = subprocess.Popen(["sleep", "5"])
    try:
        deadline = time.monotonic() + 10
        while is_running(sleeper.pid):
            assert time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert not is_running(sleeper.pid)
    assert is_running(os.getpid()) and discovery.processors() >= 1


def test_corrupt_cache_is_rebuilt(pm, isolated_home, make_tool, tmp_path):
    make_tool(user_tools(isolated_home), "ok-tool")
    cache = isolated_home / "cache" / "schemas.json"
    assert "ok" in run(pm, isolated_home, tmp_path)
    for garbage in (b"{not json", b"\xff", b"[]", b'{"version": 1, "entries": []}',
                    b'{"version": 99, "entries": {}}'):
        cache.write_bytes(garbage)
        assert "ok" in run(pm, isolated_home, tmp_path)
        assert json.loads(cache.read_text())["version"] == 1
    assert cache.stat().st_mode & 0o777 == 0o600
    assert cache.parent.stat().st_mode & 0o777 == 0o700


@pytest.mark.cold_home  # it makes the cache's place unwritable
def test_unwritable_cache_only_warns(pm, isolated_home, make_tool, tmp_path, capsys):
    make_tool(user_tools(isolated_home), "ok-tool")
    (isolated_home / "cache").write_text("a file where the cache directory should be")
    notices = Notices()
    assert "ok" in run(pm, isolated_home, tmp_path, notices)
    assert "cannot write the schema cache" in [n.message for n in notices][0]
    assert capsys.readouterr() == ("", "")  # the core reports; only the CLI prints


def test_untrusted_project_tools_never_run(pm, isolated_home, make_tool, project):
    marker = project / "ran"
    make_tool(project / ".ikigai" / "tools", "evil-tool",
              schema_body=f"open({str(marker)!r}, 'w').write('pwned')")
    registry = run(pm, isolated_home, project)
    assert "evil" not in registry
    assert not marker.exists()
    [skipped] = [s for s in registry.skipped if s.name == "evil"]
    assert skipped.kind == "untrusted"
    assert f"ikigai trust {project}" in skipped.reason


def test_trust_is_per_resolved_directory(pm, isolated_home, make_tool, project, tmp_path):
    make_tool(project / ".ikigai" / "tools", "proj-tool")
    link = tmp_path / "link"
    link.symlink_to(project)
    TrustStore(isolated_home).trust(link)
    assert "proj" in run(pm, isolated_home, project)
    other = tmp_path / "other"
    make_tool(other / ".ikigai" / "tools", "other-tool")
    assert "other" not in run(pm, isolated_home, project / ".." / "other")


class FixedSource:
    """A plugin that is its own tool source, returning a fixed scan (precedence 30)."""

    name, precedence = "acme", 30

    def __init__(self, *candidates: ToolCandidate, skipped: tuple[SkippedTool, ...] = ()) -> None:
        self.result = ToolScan(candidates, skipped)

    def scan(self):
        return self.result

    @hookimpl
    def ikigai_tool_sources(self):
        return [self]


def test_plugin_source_with_known_schema_and_own_precedence(pm, isolated_home, tmp_path):
    pm.register(FixedSource(
        ToolCandidate("bash", ("/bin/true",), schema=schema_for("bash")),
        ToolCandidate("broken", ("/bin/true",), schema={"name": "broken"}),
        skipped=(SkippedTool("gone", "acme", "went away"),),
    ), name="acme")
    registry = run(pm, isolated_home, tmp_path)
    assert registry["bash"].source == "acme"
    assert registry["bash"].location == "/bin/true"
    reasons = {s.name: s.reason for s in registry.skipped}
    assert reasons["gone"] == "went away"
    assert "no string 'description'" in reasons["broken"]


def test_plugin_tool_with_a_name_providers_reject_is_skipped(pm, isolated_home, tmp_path):
    pm.register(FixedSource(
        ToolCandidate("no spaces!", ("/bin/true",), schema=schema_for("x")),
        ToolCandidate("x" * 65, ("/bin/true",), schema=schema_for("x")),
    ), name="acme")
    registry = run(pm, isolated_home, tmp_path)
    reasons = {s.name: s.reason for s in registry.skipped if s.source == "acme"}
    assert reasons == {"no spaces!": "invalid tool name 'no spaces!': use 1-64 of A-Z a-z 0-9 _ -",
                       "x" * 65: f"invalid tool name '{'x' * 65}': use 1-64 of A-Z a-z 0-9 _ -"}


def test_tool_that_cannot_be_started_is_skipped(pm, isolated_home, tmp_path):
    pm.register(FixedSource(ToolCandidate("ghost", (str(tmp_path / "no-such-file"),))),
                name="acme")
    registry = run(pm, isolated_home, tmp_path)
    assert "cannot run --schema" in {s.name: s.reason for s in registry.skipped}["ghost"]


def test_background_discovery_states(pm, isolated_home, make_tool, tmp_path):
    make_tool(user_tools(isolated_home), "slow-tool",
              schema_body=f"time.sleep(0.5); print(json.dumps({schema_for('s')!r}))")
    discovery = Discovery(pm, home=isolated_home, cwd=tmp_path, settings=Settings())
    assert discovery.state is DiscoveryState.NOT_STARTED
    discovery.start()
    discovery.start()
    assert discovery.state is DiscoveryState.IN_PROGRESS
    assert discovery.wait(timeout=0.01) is None
    registry = discovery.wait()
    assert discovery.state is DiscoveryState.COMPLETE
    assert "slow" in registry


class Raising:
    """A plugin whose tool-source hook, or its source's scan, raises."""

    def __init__(self, where: str) -> None:
        self.where = where

    @hookimpl
    def ikigai_tool_sources(self):
        if self.where == "hook":
            raise RuntimeError("plugin bug")
        return [self]

    name, precedence = "raising", 5

    def scan(self):
        raise OSError("scan bug")


@pytest.mark.parametrize(("where", "what"), [("hook", "in ikigai_tool_sources: RuntimeError: plugin bug"),
                                             ("scan", "scanning tool source 'raising': OSError")])
def test_third_party_source_that_raises_is_reported_and_skipped(
    pm, isolated_home, make_tool, tmp_path, capsys, where, what
):
    make_tool(user_tools(isolated_home), "ok-tool")
    pm.register(Raising(where), name="acme")
    notices = Notices()
    assert "ok" in run(pm, isolated_home, tmp_path, notices)
    [notice] = notices
    assert f"plugin 'acme' failed {what}" in notice.message and notice.plugin == "acme"
    assert "IKIGAI_DISABLE_PLUGINS=acme" in notice.message
    assert capsys.readouterr() == ("", "")


def test_background_discovery_failure_is_raised_on_wait(isolated_home, tmp_path):
    pm = get_plugin_manager(load_entry_points=False,
                            environ={"IKIGAI_DISABLE_PLUGINS": "ikigai_core.defaults.scanner"})
    pm.unblock("ikigai_core.defaults.scanner")
    pm.register(Raising("hook"), name="ikigai_core.defaults.scanner")
    discovery = Discovery(pm, home=isolated_home, cwd=tmp_path, settings=Settings())
    with pytest.raises(RuntimeError, match="plugin bug"):
        discovery.wait()
    assert discovery.state is DiscoveryState.FAILED


def test_validate_schema_accepts_returns_and_rich_parameters():
    schema = {**schema_for("x", a={"type": "array", "items": {"type": "string"}}),
              "returns": {"type": "object"}}
    assert validate_schema(schema) is None


def test_a_fresh_home_and_everything_in_it_is_user_only(pm, tmp_path, make_tool):
    home = tmp_path / "fresh" / "home"
    make_tool(tmp_path / "t", "x-tool")
    discover(pm, home=home, cwd=tmp_path, settings=Settings())
    TrustStore(home).trust(tmp_path)
    for path in (tmp_path / "fresh", home, home / "cache"):
        assert path.stat().st_mode & 0o777 == 0o700, path
    for path in (home / "trust.json", home / "cache" / "schemas.json"):
        assert path.stat().st_mode & 0o777 == 0o600, path


def test_cancel_kills_running_schema_calls_and_caches_none_of_them(
    pm, isolated_home, make_tool, tmp_path, monkeypatch
):
    pids = tmp_path / "pids"
    pids.mkdir()
    for i in range(3):
        make_tool(user_tools(isolated_home), f"hang{i}-tool",
                  schema_body=f"open({str(pids / str(i))!r}, 'w').write(str(os.getpid())); "
                              "time.sleep(60)")
    idle = Discovery(pm, home=isolated_home, cwd=tmp_path, settings=Settings())
    idle.cancel()  # never started: returns at once
    assert idle.state is DiscoveryState.NOT_STARTED
    running = Discovery(pm, home=isolated_home, cwd=tmp_path, settings=Settings(schema_timeout=30))
    running.start()
    deadline = time.monotonic() + 20
    while len([p for p in pids.iterdir() if p.read_text()]) < 3:  # created, then written
        assert time.monotonic() < deadline, "the --schema calls never started"
        time.sleep(0.05)
    started = time.monotonic()
    running.cancel()
    assert time.monotonic() - started < 10
    registry = running.wait(0)
    assert not {"hang0", "hang1", "hang2"} & set(registry)
    assert all(wait_gone(int(p.read_text())) for p in pids.iterdir())
    cache = isolated_home / "cache" / "schemas.json"
    cached = json.loads(cache.read_text())["entries"] if cache.exists() else {}
    assert not any("hang" in path for path in cached)
    running.cancel()  # done: nothing to do


def test_cancelled_discovery_starts_no_further_schema_call(pm, isolated_home, make_tool, tmp_path):
    import threading

    marker = tmp_path / "asked"
    make_tool(user_tools(isolated_home), "late-tool",
              schema_body=f"open({str(marker)!r}, 'w').write('x')")
    cancelled = threading.Event()
    cancelled.set()
    registry = discover(pm, home=isolated_home, cwd=tmp_path, settings=Settings(),
                        cancelled=cancelled)
    assert not marker.exists()
    assert {s.name: s.reason for s in registry.skipped}["late"] == "discovery was cancelled"


class Warmable:
    """A long-lived tool's runner that records being warmed, or fails to warm."""

    def __init__(self, fail: bool = False) -> None:
        self.fail, self.warmed = fail, threading.Event()

    def call(self, tool, arguments, *, timeout, cancelled):
        return ToolOutcome(tool.name, result={})

    def warm(self) -> None:
        if self.fail:
            raise RuntimeError("no server here")
        self.warmed.set()


def test_background_discovery_warms_long_lived_tools_once_found(pm, isolated_home, tmp_path):
    good, bad = Warmable(), Warmable(fail=True)
    pm.register(FixedSource(
        ToolCandidate("kept", ("kept",), schema=schema_for("kept"), runner=good),
        ToolCandidate("flaky", ("flaky",), schema=schema_for("flaky"), runner=bad)))
    notices = Notices()
    found = Discovery(pm, home=isolated_home, cwd=tmp_path, settings=Settings(),
                      notices=notices)
    assert {"kept", "flaky"} <= set(found.wait(30))
    assert good.warmed.wait(10)
    deadline = time.monotonic() + 10
    while not len(notices):
        assert time.monotonic() < deadline, "the failed warm-up was never reported"
        time.sleep(0.01)
    assert [n.message for n in notices] == [
        "tool 'flaky' (acme) could not start in the background: RuntimeError: no server here; "
        "it starts on first use"]


def test_sources_get_the_process_hook_and_the_notices(pm, isolated_home, tmp_path):
    seen = {}

    class Seeing:
        @hookimpl
        def ikigai_tool_sources(self, prepare_process, notices):
            seen.update(prepare=prepare_process, notices=notices)
            return []

    pm.register(Seeing())
    notices = Notices()
    discover(pm, home=isolated_home, cwd=tmp_path, settings=Settings(), notices=notices)
    assert seen["notices"] is notices
    spec = ProcessSpec("mcp:x", "server", ["srv"], {"OPENAI_API_KEY": "sk"})
    seen["prepare"](spec)  # no process hook given: the process starts as specified
    assert spec.env == {"OPENAI_API_KEY": "sk"}
    app = App(environ={}, cwd=tmp_path)
    app.pm.register(Seeing())
    app.registry()
    seen["prepare"](spec)  # the invocation's ikigai_tool_process: the default env policy
    assert spec.env == {}
