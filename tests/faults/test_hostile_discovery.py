"""Discovery under hostility: hanging, crashing, flooding and lying ``--schema`` calls.

Every bad candidate is skipped with its reason, the good ones are listed, and the
whole scan stays near the 1 s schema budget because the calls run in parallel and a
timed-out ``--schema`` is SIGKILLed at once.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from ikigai_core.config import Settings
from ikigai_core.discovery import discover
from tests.faults.support import group_members, user_tools_pm
from tests.support.procs import wait_gone
from tests.support.tools import schema_for, write_shell_tool

SCAN_BOUND = 2.5
"""Seconds a scan of hanging tools may take: the 1 s budget plus a wide margin (a 2 s
SIGTERM grace before SIGKILL would make it 3 s)."""


def shell_schema(directory: Path, name: str, schema_script: str) -> Path:
    """A /bin/sh tool whose ``--schema`` runs ``schema_script`` (cheap to start, 50 at once)."""
    return write_shell_tool(directory, f"{name}-tool", f"""\
        if [ "$1" = --schema ]; then
        {schema_script}
        fi
        echo '{{}}'
        """)


def hanger(directory: Path, name: str, pids: Path) -> Path:
    """A tool whose ``--schema`` ignores SIGTERM and sleeps, after writing its pid."""
    return shell_schema(directory, name, f"echo $$ > {pids}/{name}; trap '' TERM; exec sleep 30")


def good(directory: Path, name: str) -> Path:
    return shell_schema(directory, name, f"echo '{json.dumps(schema_for(name))}'; exit 0")


def scan(home: Path, cwd: Path):
    """Discover ``home/tools`` with the default 1 s budget; the registry and the seconds taken."""
    started = time.monotonic()
    registry = discover(user_tools_pm(), home=home, cwd=cwd, settings=Settings())
    return registry, time.monotonic() - started


def assert_groups_gone(pids: Path) -> None:
    for pidfile in pids.iterdir():
        pid = int(pidfile.read_text())
        assert wait_gone(pid), f"--schema of {pidfile.name} survived"
        assert group_members(pid) == []


def test_fifty_hanging_schemas_that_ignore_sigterm_stay_within_the_budget(
    isolated_home, tmp_path
):
    tools, pids = isolated_home / "tools", tmp_path / "pids"
    pids.mkdir()
    for i in range(50):
        hanger(tools, f"hang{i}", pids)
    good(tools, "fine")
    registry, elapsed = scan(isolated_home, tmp_path)
    print(f"\n[figure] discovery of 50 hanging --schema tools (SIGTERM ignored): {elapsed:.2f} s")
    assert list(registry) == ["fine"]
    reasons = {s.name: s.reason for s in registry.skipped}
    assert all("timed out after 1 s" in reasons[f"hang{i}"] for i in range(50))
    assert elapsed < SCAN_BOUND, f"50 hanging --schema calls took {elapsed:.1f} s"
    assert_groups_gone(pids)


INVALID_SCHEMAS = {
    "notjson": "not json at all",
    "array": "[1, 2]",
    "twoobjects": '{"a": 1} {"b": 2}',
    "nodescription": '{"name": "x", "parameters": {"type": "object"}}',
    "noparams": '{"name": "x", "description": "d"}',
    "paramsarray": '{"name": "x", "description": "d", "parameters": {"type": "array"}}',
    "badtype": '{"name": "x", "description": "d", "parameters": '
               '{"type": "object", "properties": {"a": {"type": "nope"}}}}',
    "schemalist": '{"name": "x", "description": "d", "parameters": '
                  '{"type": "object", "$schema": [1]}}',
    "badregex": '{"name": "x", "description": "d", "parameters": '
                '{"type": "object", "properties": {"a": {"type": "string", "pattern": "("}}}}',
    "nan": '{"name": "x", "description": "d", "parameters": {"type": "object", "minimum": NaN}}',
}


def test_hostile_directory_skips_everything_bad_with_a_reason_and_lists_the_good(
    isolated_home, tmp_path
):
    tools, pids = isolated_home / "tools", tmp_path / "pids"
    pids.mkdir()
    for i in range(10):
        hanger(tools, f"hang{i}", pids)
        shell_schema(tools, f"crash{i}", "exit 3" if i % 2 else "kill -SEGV $$")
        shell_schema(tools, f"big{i}", "head -c 102400 /dev/zero | tr '\\0' x; exit 0")
        good(tools, f"good{i}")
    for name, text in INVALID_SCHEMAS.items():
        shell_schema(tools, name, f"cat <<'END'\n{text}\nEND\nexit 0")
    (tools / "adir-tool").mkdir()
    (tools / "dangling-tool").symlink_to(tmp_path / "nowhere")
    shell_schema(tools, "noexec", "exit 0").chmod(0o644)
    (tools / "README").write_text("not a tool")
    good(tools, "notatool").rename(tools / "notatool")  # executable, but no -tool suffix
    shell_schema(tools, "bad name", "exit 0")

    registry, elapsed = scan(isolated_home, tmp_path)
    print(f"\n[figure] hostile directory of {len(os.listdir(tools))} entries: {elapsed:.2f} s")

    assert list(registry) == [f"good{i}" for i in range(10)]
    reasons = {s.name: s.reason for s in registry.skipped}
    for i in range(10):
        assert "timed out" in reasons[f"hang{i}"]
        assert f"crashed with exit code {139 if i % 2 == 0 else 3}" in reasons[f"crash{i}"]
        assert "more than 8192 bytes" in reasons[f"big{i}"]
    for name in INVALID_SCHEMAS:
        assert reasons[name].startswith("--schema") or "schema" in reasons[name], name
    assert "not a regular file" in reasons["adir"]
    assert "dangling symlink" in reasons["dangling"]
    assert "not executable" in reasons["noexec"]
    assert "does not end in -tool" in reasons["README"]
    assert "does not end in -tool" in reasons["notatool"]
    assert "invalid tool name" in reasons["bad name"]
    assert elapsed < SCAN_BOUND, f"the hostile scan took {elapsed:.1f} s"
    assert_groups_gone(pids)


@pytest.mark.parametrize("name, text", sorted(INVALID_SCHEMAS.items()))
def test_each_invalid_schema_has_its_own_reason(isolated_home, tmp_path, name, text):
    shell_schema(isolated_home / "tools", name, f"cat <<'END'\n{text}\nEND\nexit 0")
    registry, _ = scan(isolated_home, tmp_path)
    [skipped] = registry.skipped
    assert skipped.kind == "invalid"
    expected = {
        "notjson": "not valid JSON", "array": "JSON array, not an object",
        "twoobjects": "data after the JSON value", "nodescription": "no string 'description'",
        "noparams": "'parameters' must be", "paramsarray": "'parameters' must be",
        "badtype": "not valid JSON Schema", "schemalist": "$schema",
        "badregex": "not valid JSON Schema", "nan": "NaN",
    }[name]
    assert expected in skipped.reason


@pytest.mark.parametrize("parameters, words", [
    ({"type": "object", "$ref": "#"}, "refers to itself"),
    ({"type": "object", "$ref": "#/definitions/nowhere"}, "cannot be resolved"),
    ({"type": "object", "properties": {"a": {"$ref": "http://127.0.0.1:9/x.json"}}},
     "cannot be resolved"),
    ({"type": "object", "properties": {"a": {"$ref": "#"}}, "$schema": "http://example.com/s"},
     None),
    ({"type": "object", "additionalProperties": {"type": "string", "pattern": "("}},
     "invalid regular expression"),
])
def test_schema_whose_arguments_cannot_be_checked_is_a_clear_failure(tmp_path, parameters, words):
    """Schemas the meta-schema accepts (or a hand-edited schema cache lets through) but that
    break when an argument is checked: the call fails with INVALID_PARAMS naming the tool,
    never an exception (agent and CLI)."""
    from ikigai_core.execution import validate_arguments
    from tests.faults.support import as_tool

    tool = as_tool(tmp_path / "odd-tool", parameters)
    problem = validate_arguments(tool, {"a": {"a": {}}, "b": "text"})
    if words is None:
        assert problem is None
    else:
        assert problem is not None and "fix the tool's --schema" in problem and words in problem
        assert "\n" not in problem
