"""Security: untrusted code never runs, trust cannot be borrowed, keys never print,
arguments reach tools only on stdin, ``$IKIGAI_HOME`` is private and corruption is handled.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest
from click.testing import CliRunner

from ikigai_core.cli import cli
from ikigai_core.config import Settings
from ikigai_core.discovery import discover
from ikigai_core.trust import TrustStore
from tests.faults.support import ikigai, user_tools_pm
from tests.support.fakeserver import json_reply, sse_reply
from tests.support.replies import REPLIES
from tests.support.tools import schema_for

SECRET = "sk-fault-SECRET-0123456789abcdef"


@pytest.fixture
def project(tmp_path, make_shell_tool):
    """A cloned repository whose ``.ikigai/tools/evil-tool`` leaves a marker whenever it runs,
    ``--schema`` included; the marker path is ``project / "RAN"``."""
    root = tmp_path / "cloned"
    make_shell_tool(root / ".ikigai" / "tools", "evil-tool", f"""\
        echo "$@" >> {root / "RAN"}
        echo '{json.dumps(schema_for("evil"))}'
        """)
    return root


def llm(fake_server, provider: str = "openai") -> dict[str, str]:
    """Environment pointing ``provider`` at the fake server with the secret key."""
    var = {"openai": "OPENAI", "anthropic": "ANTHROPIC", "google": "GOOGLE_GEMINI"}[provider]
    key = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY",
           "google": "GOOGLE_API_KEY"}[provider]
    return {key: SECRET, f"{var}_BASE_URL": fake_server.url}


COMMANDS = [
    ("tool", "list"), ("tool", "list", "--verbose", "--json"), ("refresh",),
    ("tool", "show", "evil"), ("tool", "run", "evil", "{}"),
    ("request", "--provider", "openai", "hi"),
]


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_untrusted_project_tool_is_never_run(project, args):
    proc = ikigai(*args, cwd=project)
    assert "Traceback" not in proc.stderr
    if args[-1] != "evil" and args[-1] != "{}":
        assert "1 project tool not loaded" in proc.stderr
    assert not (project / "RAN").exists(), f"`ikigai {' '.join(args)}` ran an untrusted tool"


def test_untrusted_tool_is_not_run_when_the_model_asks_for_it(project, fake_server):
    replies = REPLIES["openai"]
    fake_server.push(replies.reply("", [("c1", "evil", {})]), replies.reply("done"))
    ask = ikigai("ask", "--provider", "openai", "--no-stream", "go", cwd=project,
                 env=llm(fake_server))
    assert ask.returncode == 0, ask.stderr
    assert "← evil TOOL_NOT_FOUND" in ask.stderr
    fake_server.push(replies.reply("", [("c2", "evil", {})]), replies.reply("done"))
    chat = ikigai("chat", "--provider", "openai", "--no-stream", cwd=project,
                  input="/tool\n/tool evil\n/refresh\nplease run evil\n/quit\n",
                  env=llm(fake_server))
    assert chat.returncode == 0, chat.stderr
    assert "unknown tool 'evil'" in chat.stderr and "← evil TOOL_NOT_FOUND" in chat.stderr
    assert not (project / "RAN").exists()


def test_trusted_project_tool_does_run(project):
    """The control: the marker does appear once the directory is trusted."""
    assert ikigai("trust", cwd=project).returncode == 0
    ran = ikigai("tool", "run", "evil", "{}", cwd=project)
    assert (project / "RAN").read_text().splitlines() == ["--schema", ""]
    assert json.loads(ran.stdout)["tool_success"] is True


def test_trust_cannot_be_borrowed_through_dotdot_or_symlinks(isolated_home, tmp_path, project,
                                                            make_tool):
    trusted = tmp_path / "trusted"
    make_tool(trusted / ".ikigai" / "tools", "mine-tool")
    TrustStore(isolated_home).trust(trusted)
    (trusted / "inside").symlink_to(project)  # a link inside the trusted tree
    for cwd in (trusted / ".." / "cloned", trusted / "inside"):
        registry = discover(user_tools_pm(), home=isolated_home, cwd=cwd, settings=Settings())
        assert "evil" not in registry and "mine" not in registry
    registry = discover(user_tools_pm(), home=isolated_home, cwd=tmp_path / "." / "trusted",
                        settings=Settings())
    assert "mine" in registry
    assert not (project / "RAN").exists()


# --- API keys ---------------------------------------------------------------------------

@pytest.mark.parametrize("provider", ["openai", "anthropic", "google"])
@pytest.mark.parametrize("status", [400, 401, 403, 404, "stream"])
def test_key_echoed_back_by_a_provider_error_never_prints(fake_server, tmp_path, monkeypatch,
                                                          provider, status):
    echoed = f"Incorrect API key provided: {SECRET} (url-quoted: {quote(SECRET, safe='')})"
    replies = REPLIES[provider]
    if status == "stream":
        fake_server.push(sse_reply([replies.error_event(echoed)]))
    else:
        fake_server.push(json_reply(replies.error_body(status, echoed), status=status))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["ask", "--provider", provider, "hi"],
                                env=llm(fake_server, provider))
    assert result.exit_code == 1 and result.exception is None or isinstance(
        result.exception, SystemExit), result.exception
    assert SECRET not in result.stdout + result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_key_never_in_request_output(tmp_path):
    proc = ikigai("request", "--provider", "anthropic", "hi", cwd=tmp_path,
                  env={"ANTHROPIC_API_KEY": SECRET})
    assert proc.returncode == 0 and SECRET not in proc.stdout + proc.stderr


# --- arguments only on stdin ------------------------------------------------------------

HOSTILE = {
    "a": "$(touch PWNED)", "b": "`touch PWNED`", "c": "x; touch PWNED", "d": "x\ntouch PWNED\n",
    "e": "' \" \\ | && || > PWNED < /etc/passwd & $HOME ${IFS} %s %n *", "f": "\u0000\u202e\x1b[2J",
    "g": ["-rf", "--schema", "/"],
}


@pytest.fixture
def recorder(isolated_home, make_tool, tmp_path):
    """A tool that records its argv, environment and exact stdin bytes."""
    record = tmp_path / "record"
    make_tool(isolated_home / "tools", "rec-tool", body=f"""\
        data = sys.stdin.buffer.read()
        with open({str(record)!r}, "w") as f:
            json.dump({{"argv": sys.argv, "env": dict(os.environ), "stdin": data.hex()}}, f)
        print("{{}}")
        """)
    return record


def assert_only_on_stdin(record: Path, cwd: Path, arguments: dict) -> None:
    seen = json.loads(record.read_text())
    assert bytes.fromhex(seen["stdin"]) == json.dumps(arguments).encode()
    assert seen["argv"][1:] == []
    assert not any("PWNED" in value for value in seen["env"].values())
    assert not (cwd / "PWNED").exists()


def test_hostile_arguments_arrive_byte_identical_on_stdin_only(recorder, tmp_path):
    proc = ikigai("tool", "run", "rec", json.dumps(HOSTILE), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout
    assert_only_on_stdin(recorder, tmp_path, HOSTILE)


def test_hostile_arguments_from_the_model_arrive_on_stdin_only(
    approve_all, recorder, tmp_path, fake_server
):
    replies = REPLIES["anthropic"]
    fake_server.push(replies.reply("", [("c1", "rec", HOSTILE)]), replies.reply("done"))
    proc = ikigai("ask", "--provider", "anthropic", "--no-stream", "go", cwd=tmp_path,
                  env=llm(fake_server, "anthropic"))
    assert proc.returncode == 0, proc.stderr
    assert_only_on_stdin(recorder, tmp_path, HOSTILE)


# --- $IKIGAI_HOME ---------------------------------------------------------------------------

def test_home_files_and_folders_are_user_only_even_with_umask_000(tmp_path, make_tool):
    home = tmp_path / "fresh" / "home"
    env = {**os.environ, "IKIGAI_HOME": str(home)}
    script = "umask 000; " + " && ".join(
        f"{sys.executable} -m ikigai_core.cli {args} >/dev/null"
        for args in ("trust .", "tool list", "refresh"))
    make_tool(tmp_path / ".ikigai" / "tools", "p-tool")
    subprocess.run(["sh", "-c", script], cwd=tmp_path, env=env, check=True, timeout=60)
    created = [home, *home.rglob("*")]
    assert {p.relative_to(home).as_posix() for p in created} >= {
        ".", "trust.json", "cache", "cache/schemas.json", "cache/registry.json"}
    for path in created:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode & 0o077 == 0, f"{path} is {oct(mode)}"


@pytest.mark.parametrize("entry", [
    5, "text", [], {"key": "x"}, {"key": None, "schema": {"name": "x"}},
    {"schema": 5}, {"schema": {"name": "x"}}, {"schema": {"description": 1, "parameters": []}},
    {"error": 7}, {"schema": None, "error": None},
])
def test_hand_edited_cache_entry_is_asked_again(isolated_home, make_tool, tmp_path, entry):
    tool = make_tool(isolated_home / "tools", "ok-tool")
    settings = Settings()
    assert "ok" in discover(user_tools_pm(), home=isolated_home, cwd=tmp_path, settings=settings)
    cache = isolated_home / "cache" / "schemas.json"
    data = json.loads(cache.read_text())
    key = data["entries"][str(tool)]["key"]
    data["entries"][str(tool)] = {"key": key, **entry} if isinstance(entry, dict) else entry
    cache.write_text(json.dumps(data))
    registry = discover(user_tools_pm(), home=isolated_home, cwd=tmp_path, settings=settings)
    assert registry["ok"].description == "The ok test tool"


@pytest.mark.cold_home  # it writes the cache itself
@pytest.mark.parametrize("content", ["", "[]", '{"version": 1, "entries": []}', "\xff\xfe",
                                     '{"version": "1", "entries": {"a": 1}}'])
def test_corrupt_cache_and_snapshot_are_rebuilt(isolated_home, make_tool, tmp_path, content):
    make_tool(isolated_home / "tools", "ok-tool")
    (isolated_home / "cache").mkdir()
    for name in ("schemas.json", "registry.json"):
        (isolated_home / "cache" / name).write_text(content, errors="surrogateescape")
    proc = ikigai("refresh", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert proc.stdout.startswith("Tools refreshed.")
    listed = ikigai("tool", "list", "--json", cwd=tmp_path)
    assert "ok" in {t["name"] for t in json.loads(listed.stdout)}


@pytest.mark.cold_home  # it makes the cache's place unwritable
def test_cache_that_cannot_be_written_only_warns(isolated_home, make_tool, tmp_path):
    make_tool(isolated_home / "tools", "ok-tool")
    (isolated_home / "cache").write_text("a file where the cache folder belongs")
    for args in (("tool", "list"), ("refresh",)):
        proc = ikigai(*args, cwd=tmp_path)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
        assert "ok" in proc.stdout or proc.stdout.startswith("Tools refreshed.")
        assert all(line.startswith("ikigai: cannot write") for line in proc.stderr.splitlines())


@pytest.mark.parametrize("content", [b'{"trusted": "x"}', b"[]", b"{", b'{"trusted": [1]}',
                                     b'{"trusted": ["/p\xff\xfe"]}'])
def test_corrupt_trust_file_is_one_line(isolated_home, project, content):
    (isolated_home / "trust.json").write_bytes(content)
    for args in (("tool", "list"), ("tool", "run", "x", "{}"), ("trust",), ("trust", "--list")):
        proc = ikigai(*args, cwd=project)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr
        assert len(proc.stderr.splitlines()) == 1 and "trust.json is corrupt" in proc.stderr
    assert not (project / "RAN").exists()
