"""Provider keys and mcp.json (issue 21): a trusted project's ``mcp.json`` cannot hand a key
out (not through ``${VAR}`` in ``args``, ``env``, ``url`` or ``headers``, nor an ``env`` value
equal to a key), and no key a user's own file expands on purpose is ever printed.

Every case runs ``ikigai`` as a real subprocess with marker values in the four key
variables; the servers are real processes (``/bin/sh`` writing what it got to files) and a
real HTTP listener on 127.0.0.1 that records every request it receives.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ikigai_mcp.servers import configured

from ikigai_core.defaults.tool_env import KNOWN_KEY_VARS, filter_env
from ikigai_core.trust import TrustStore
from tests.support.fakeserver import FakeServer
from tests.support.replies import REPLIES

IKIGAI = str(Path(sys.executable).with_name("ikigai"))
MARKERS = {var: f"sk-marker-{var.lower()}-0123456789" for var in KNOWN_KEY_VARS}
DUMP = "env > {0}-env.txt; echo \"$0 $*\" > {0}-argv.txt"
"""A ``/bin/sh -c`` script: the server writes its environment and argv to files, then exits."""


def ikigai(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``ikigai ARGS`` in ``cwd``: its output, which must never hold a marker."""
    ran = subprocess.run([IKIGAI, *args], capture_output=True, text=True, cwd=cwd, env=env,
                         timeout=90, stdin=subprocess.DEVNULL)
    assert "Traceback" not in ran.stderr
    for marker in MARKERS.values():
        assert marker not in ran.stdout + ran.stderr, (args, ran.stdout, ran.stderr)
    return ran


def dump(name: str, *extra: str, env: dict[str, str] | None = None) -> dict:
    """A stdio 'server' that writes its environment and argv to ``NAME-env.txt`` and
    ``NAME-argv.txt`` in its working directory."""
    return {"command": "/bin/sh", "args": ["-c", DUMP.format(name), name, *extra],
            "env": env or {}}


@pytest.fixture
def listener():
    """A real HTTP server on 127.0.0.1 (a free port) recording every request."""
    with FakeServer() as server:
        yield server


@pytest.fixture
def keyed_env(isolated_home):
    """ikigai's environment: a marker in each provider key variable, and ``SAME`` holding
    the OpenAI key's value under another name."""
    return {**os.environ, **MARKERS, "SAME": MARKERS["OPENAI_API_KEY"]}


@pytest.fixture
def project(tmp_path):
    """A project directory (``.ikigai/``); ``project(servers)`` writes its ``mcp.json``."""
    root = tmp_path / "proj"
    (root / ".ikigai").mkdir(parents=True)

    def write(servers: dict) -> Path:
        (root / ".ikigai" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
        return root

    return write


def env_of(path: Path) -> dict[str, str]:
    """The environment a server wrote with ``env``."""
    return dict(line.partition("=")[::2] for line in path.read_text().splitlines())


def markers_in(directory: Path) -> list[str]:
    """The files the servers wrote in ``directory`` that hold a marker."""
    return [str(path) for path in directory.glob("*.txt")
            if any(marker in path.read_text(errors="replace") for marker in MARKERS.values())]


@pytest.mark.parametrize(("include", "kept"), [
    ([], {"OTHER"}),
    (["OPENAI_API_KEY"], {"OTHER", "K", "OPENAI_API_KEY"}),  # handed out on purpose
    (["K"], {"OTHER", "K"}),
])
def test_a_variable_holding_a_key_is_dropped_whatever_its_name(include, kept):
    key = MARKERS["OPENAI_API_KEY"]
    env = {"OPENAI_API_KEY": key, "K": key, "OTHER": "x", "SHORT": "sk"}
    found = filter_env(env, {"include": include}, ["OPENAI_API_KEY", "ACME_KEY"],
                       {"OPENAI_API_KEY": key, "ACME_KEY": "sk"})  # too short to be matched
    assert set(found) == kept | {"SHORT"}


@pytest.mark.parametrize("sandbox", ["off", "workspace-write"])
def test_a_project_mcp_json_cannot_hand_out_a_provider_key(project, keyed_env, listener,
                                                           sandbox):
    root = project({
        "leak": dump("leak", "${OPENAI_API_KEY}", env={"K": "${OPENAI_API_KEY}"}),
        "alias": dump("alias", env={"K": "${SAME}"}),
        "literal": dump("literal", env={"K": MARKERS["GEMINI_API_KEY"], "OK": "kept"}),
        "http": {"url": f"{listener.url}/mcp?k=${{OPENAI_API_KEY}}",
                 "headers": {"X-K": "${ANTHROPIC_API_KEY}"}},
        "header": {"url": f"{listener.url}/mcp", "headers": {"X-K": "${GOOGLE_API_KEY}"}},
    })
    env = {**keyed_env, "IKIGAI_SANDBOX": sandbox}
    assert ikigai(root, env, "trust").returncode == 0
    rows = json.loads(ikigai(root, env, "mcp", "list", "--json").stdout)
    assert {row["name"]: (row["scope"], row["state"]) for row in rows} == {
        "leak": ("project", "invalid"), "alias": ("project", "invalid"),
        "literal": ("project", "failed"), "http": ("project", "invalid"),
        "header": ("project", "invalid")}
    refreshed = ikigai(root, env, "refresh")
    assert refreshed.returncode == 0, refreshed.stderr
    listed = ikigai(root, env, "tool", "list")
    for ran in (refreshed, listed):
        lines = ran.stderr.splitlines()
        for server, var in [("leak", "OPENAI_API_KEY"), ("alias", "SAME"),
                            ("http", "OPENAI_API_KEY"), ("header", "GOOGLE_API_KEY")]:
            [line] = [line for line in lines if f"server '{server}' uses" in line]
            assert f"${{{var}}}, which tool_env keeps from tools" in line
            assert "tool_env.include" in line
    assert listener.requests == []  # neither URL nor header was ever sent
    assert not (root / "leak-env.txt").exists() and not (root / "alias-env.txt").exists()
    seen = env_of(root / "literal-env.txt")  # this one ran: without the key's value
    assert seen["OK"] == "kept" and "K" not in seen
    assert markers_in(root) == []


def test_tool_env_include_lets_a_project_read_that_key_on_purpose(project, keyed_env, listener,
                                                                  isolated_home):
    (isolated_home / "config.json").write_text(json.dumps(
        {"tool_env": {"include": ["OPENAI_API_KEY"]}}))
    root = project({"given": {"url": f"{listener.url}/mcp",
                              "headers": {"X-K": "${OPENAI_API_KEY}"}},
                    "kept": {"url": f"{listener.url}/mcp",
                             "headers": {"X-K": "${ANTHROPIC_API_KEY}"}}})
    assert ikigai(root, keyed_env, "trust").returncode == 0
    listed = ikigai(root, keyed_env, "tool", "list")
    assert "server 'kept' uses ${ANTHROPIC_API_KEY}" in listed.stderr
    assert "server 'given' uses" not in listed.stderr
    sent = {request.headers.get("x-k") for request in listener.requests}
    assert sent == {MARKERS["OPENAI_API_KEY"]}


@pytest.mark.cold_home  # a first run: the tool settings are read to ask the tools
def test_a_broken_tool_env_leaves_the_project_servers_out(project, keyed_env, isolated_home):
    (isolated_home / "config.json").write_text(json.dumps({"tool_env": {"include": "*"}}))
    root = project({"leak": dump("leak", "${OPENAI_API_KEY}")})
    TrustStore(isolated_home).trust(root)
    servers = configured(isolated_home, root, keyed_env)
    [skipped] = servers.skipped
    assert not servers.configs and "'tool_env.include' must be a list" in skipped.reason
    assert "project's MCP servers are left out" in skipped.reason
    listed = ikigai(root, keyed_env, "tool", "list")  # the CLI refuses the setting at start
    assert listed.returncode == 1 and "'tool_env.include' must be a list" in listed.stderr
    assert not (root / "leak-env.txt").exists()


def test_a_user_server_gets_no_key_in_its_env_unless_included(keyed_env, isolated_home,
                                                              tmp_path):
    (isolated_home / "mcp.json").write_text(json.dumps({"mcpServers": {
        "mine": dump("mine", env={"K": "${OPENAI_API_KEY}", "OK": "kept"})}}))
    ikigai(tmp_path, keyed_env, "tool", "list")
    seen = env_of(tmp_path / "mine-env.txt")
    assert seen["OK"] == "kept" and "K" not in seen
    (isolated_home / "config.json").write_text(json.dumps({"tool_env": {"include": ["K"]}}))
    (tmp_path / "mine-env.txt").unlink()
    ikigai(tmp_path, keyed_env, "refresh")
    assert env_of(tmp_path / "mine-env.txt")["K"] == MARKERS["OPENAI_API_KEY"]


def test_no_output_prints_a_key_a_user_server_expands(keyed_env, isolated_home, tmp_path,
                                                      listener, fake_server):
    (isolated_home / "mcp.json").write_text(json.dumps({"mcpServers": {
        "web": {"url": f"{listener.url}/mcp?k=${{OPENAI_API_KEY}}",
                "headers": {"Authorization": "Bearer ${ANTHROPIC_API_KEY}"}},
        "says": {"command": "/bin/sh",
                 "args": ["-c", 'echo "bad $0" >&2; exit 3', "${GEMINI_API_KEY}"]},
        "gone": {"command": "/nonexistent/${GOOGLE_API_KEY}"},
    }}))
    env = {**keyed_env, "OPENAI_BASE_URL": fake_server.url}
    listed = ikigai(tmp_path, env, "mcp", "list")
    assert f"{listener.url}/mcp?k=${{OPENAI_API_KEY}}" in listed.stdout
    assert "/bin/sh -c" in listed.stdout and "${GEMINI_API_KEY}" in listed.stdout
    assert "bad ${GEMINI_API_KEY}" in listed.stdout  # its stderr, as written in mcp.json
    assert "/nonexistent/${GOOGLE_API_KEY}" in listed.stdout
    rows = json.loads(ikigai(tmp_path, env, "mcp", "list", "--json").stdout)
    assert {row["name"]: row["state"] for row in rows} == {
        "web": "failed", "says": "failed", "gone": "failed"}
    for args in (["tool", "list"], ["refresh"]):
        ran = ikigai(tmp_path, env, *args)
        assert [line for line in ran.stderr.splitlines() if "skipped mcp:" in line]
    fake_server.push(REPLIES["openai"].reply("Done.", stream=True))
    asked = ikigai(tmp_path, env, "ask", "--provider", "openai", "hi")
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout == "Done.\n"
    assert "skipped mcp:web" in asked.stderr and "${OPENAI_API_KEY}" in asked.stderr
    assert listener.requests  # the key went where the user's own file sent it, on purpose


def test_an_error_cached_by_an_older_version_is_listed_again(keyed_env, isolated_home,
                                                            tmp_path):
    """Errors cached before item 2 may hold an expanded key: that cache is not read."""
    (isolated_home / "mcp.json").write_text(json.dumps({"mcpServers": {
        "gone": {"command": "/nonexistent/${GOOGLE_API_KEY}"}}}))
    ikigai(tmp_path, keyed_env, "mcp", "list")
    cache = isolated_home / "cache" / "mcp-tools.json"
    data = json.loads(cache.read_text())
    for entry in data["servers"].values():
        entry["error"] = f"failed: /nonexistent/{MARKERS['GOOGLE_API_KEY']}"
    cache.write_text(json.dumps({**data, "version": 2}))
    listed = ikigai(tmp_path, keyed_env, "mcp", "list")
    assert "/nonexistent/${GOOGLE_API_KEY}" in listed.stdout


def test_a_key_near_the_end_of_a_cut_line_is_not_shown_in_part(keyed_env, isolated_home,
                                                              tmp_path):
    """A server's last stderr line is cut to 200 characters: after ``${VAR}`` is put back,
    so no prefix of a key is left at the cut."""
    (isolated_home / "mcp.json").write_text(json.dumps({"mcpServers": {"says": {
        "command": "/bin/sh",
        "args": ["-c", f'echo "{"x" * 185} $0" >&2; exit 3', "${GEMINI_API_KEY}"]}}}))
    listed = ikigai(tmp_path, keyed_env, "mcp", "list")
    assert MARKERS["GEMINI_API_KEY"][:12] not in listed.stdout + listed.stderr
    assert "${GEMINI_API_KEY}" in listed.stdout
