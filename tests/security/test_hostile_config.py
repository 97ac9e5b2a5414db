"""The hostile-configuration suite (issue 21): every file ikigai reads, damaged every way an
attacker or an accident could, through the real ``ikigai`` process.

Whatever the damage: no traceback; one stderr line names the file (or, for a damaged
conversation, the session); and it fails closed. What "closed" is depends on the file:

- ``stops``: a file the command cannot do without (``config.json``, ``trust.json``,
  ``sessions.db``, ``AGENTS.md``): exit 1;
- ``denies``: the rules (``permissions.json``, the user's and a project's): the model's call is
  denied even with ``--yes``, never run;
- ``skips``: a file of optional things (``mcp.json``, a skill): exit 0, nothing from it is
  started or offered;
- ``records``: ``approvals.jsonl`` is only ever appended to: damaged content does not matter
  (the call runs and its record is a line of its own); a record that cannot be written, or
  that others could write, ``denies``;
- ``ignored``: a directory named ``AGENTS.md`` or ``SKILL.md`` is no such file (as
  ``find_project`` has it): nothing is read from it, nothing said.

Root reads a mode-000 file anyway: the ``unreadable`` cases run ikigai without the
capabilities that bypass permission bits (the ``unprivileged`` fixture).
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ikigai_core.sqlite_store import SqliteStore
from ikigai_core.statefiles import MAX_STATE_BYTES
from ikigai_core.trust import TrustStore
from tests.faults.support import ikigai
from tests.faults.test_security import llm
from tests.security.conftest import REPLY, touch
from tests.test_cli_agent import sent_results
from tests.test_sessions import a_turn

NESTED = b"[" * 100_000 + b"]" * 100_000
HUGE = MAX_STATE_BYTES + 1
DAMAGES = ("invalid JSON", "wrong types", "not UTF-8", "a directory", "unreadable",
           "world-writable", "huge", "deeply nested")


@dataclass(frozen=True)
class Subject:
    """One file ikigai reads: where it is, good content, its damaged forms, and what failing
    closed means for it (see the module's docstring)."""

    where: str
    valid: str
    damaged: dict[str, bytes]
    expect: str
    not_applicable: tuple[str, ...] = ()
    overrides: dict[str, str] = field(default_factory=dict)

    def expectation(self, damage: str) -> str:
        return self.overrides.get(damage, self.expect)


def json_damages(wrong_types: object, valid: str) -> dict[str, bytes]:
    """The content damages of a JSON file whose good content is ``valid``."""
    return {"invalid JSON": valid.encode()[:-1],
            "wrong types": json.dumps(wrong_types).encode(),
            "not UTF-8": b"\xff\xfe" + valid.encode(),
            "huge": valid.encode() + b" " * HUGE,
            "deeply nested": b'{"x": ' + NESTED + b"}"}


MCP = '{"mcpServers": {"srv": {"command": "/bin/sh", "args": ["-c", "touch {marker}"]}}}'
RULES = '{"rules": []}'
SKILL = "---\nname: demo\ndescription: A demo skill\n---\nDo the demo.\n"

SUBJECTS = {
    "config.json": Subject("home/config.json", "{}", json_damages(
        {"schema_timeout": "soon"}, "{}"), "stops"),
    "trust.json": Subject("home/trust.json", '{"trusted": ["{project}"]}', json_damages(
        {"trusted": [1]}, '{"trusted": ["{project}"]}'), "stops"),
    "permissions.json": Subject("home/permissions.json", RULES, json_damages(
        {"rules": [{"tool": "bash", "decision": "allow", "when": None}]}, RULES), "denies"),
    "project permissions.json": Subject("project/.ikigai/permissions.json", RULES,
                                        json_damages({"rules": {"bash": "ask"}}, RULES),
                                        "denies"),
    "mcp.json": Subject("home/mcp.json", MCP, json_damages(
        {"mcpServers": {"srv": {"command": ["/bin/sh"]}}}, MCP), "skips"),
    "project mcp.json": Subject("project/.ikigai/mcp.json", MCP, json_damages(
        {"mcpServers": {"srv": {"command": ["/bin/sh"]}}}, MCP), "skips"),
    "approvals.jsonl": Subject(
        "home/approvals.jsonl", '{"time": "2026-01-01T00:00:00Z", "tool": "bash"}\n',
        {"invalid JSON": b'{"time": "2026-01-01T00:00:00Z", "to',  # a write cut short
         "wrong types": b'[1, "two", null]\n', "not UTF-8": b'{"tool": "\xff\xfe"}\n',
         "huge": b'{"x": "' + b"a" * HUGE + b'"}\n', "deeply nested": NESTED + b"\n"},
        "records", overrides={"a directory": "denies", "unreadable": "denies",
                              "world-writable": "denies"}),
    "skill": Subject("home/skills/demo/SKILL.md", SKILL, {
        "invalid JSON": b"---\nname: [demo\ndescription: A demo skill\n---\n",
        "wrong types": b"---\nname: [1, 2]\ndescription: {a: b}\n---\n",
        "not UTF-8": SKILL.encode().replace(b"demo skill", b"demo \xff\xfe skill"),
        "huge": SKILL.encode() + b"x" * HUGE,
        "deeply nested": b"---\nname: demo\ndescription: " + NESTED + b"\n---\n"}, "skips",
        overrides={"a directory": "ignored"}),
    "AGENTS.md": Subject("project/AGENTS.md", "Be brief.\n", {
        "not UTF-8": b"Be \xff\xfe brief.\n", "huge": b"Be brief.\n" * (HUGE // 10 + 1)},
        "stops", not_applicable=("invalid JSON", "wrong types", "deeply nested"),
        overrides={"a directory": "ignored"}),
    "sessions.db": Subject("home/sessions.db", "", {
        "invalid JSON": b"UPDATE turns SET messages = '[{\"role\": '",
        "wrong types": b"UPDATE turns SET messages = '[null, 1, \"x\"]', input_tokens = 'many'",
        "not UTF-8": b"UPDATE turns SET messages = CAST(x'5b22fffe225d' AS TEXT)",
        "huge": b"UPDATE turns SET messages = '[\"' || zeroblob(%d) || '\"]'" % HUGE,
        "deeply nested": b"UPDATE turns SET messages = '" + NESTED + b"'"}, "stops"),
}

CASES = [pytest.param(name, damage, id=f"{name}: {damage}",
                      # config.json's tool settings are read when a tool first runs
                      marks=[pytest.mark.cold_home] if name == "config.json" else [])
         for name, subject in SUBJECTS.items() for damage in DAMAGES
         if damage not in subject.not_applicable]


@dataclass
class Scene:
    """The home, a trusted project, the marker a call or a server would leave, and how to
    run ikigai (with ``prefix``) there."""

    home: Path
    project: Path
    marker: Path
    fake_server: object
    prefix: tuple[str, ...] = ()
    session: str | None = None

    def path(self, subject: Subject) -> Path:
        base, _, rest = subject.where.partition("/")
        return (self.home if base == "home" else self.project) / rest

    def ikigai(self, *args: str) -> subprocess.CompletedProcess[str]:
        return ikigai(*args, cwd=self.project, env=llm(self.fake_server), prefix=self.prefix)

    def model_calls_bash(self, *args: str) -> subprocess.CompletedProcess[str]:
        self.fake_server.push(REPLY.reply(calls=[touch(self.marker)]), REPLY.reply("Done."))
        return self.ikigai("ask", "--provider", "openai", "--no-stream", "--no-log", *args,
                           "go")


@pytest.fixture
def scene(isolated_home, tmp_path, fake_server):
    project = tmp_path / "proj"
    (project / ".ikigai").mkdir(parents=True)
    TrustStore(isolated_home).trust(project)
    return Scene(isolated_home, project, tmp_path / "RAN", fake_server)


def write_valid(scene: Scene, name: str, subject: Subject) -> Path:
    """Put ``subject``'s good content in place (for ``sessions.db``, an ask recorded through
    the store as ``ask`` records it)."""
    path = scene.path(subject)
    if name == "sessions.db":
        scene.session = "0123abcd"
        SqliteStore(path).add_turn(scene.session, a_turn(), command="ask", cwd=scene.project,
                                   system=None)
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    text = subject.valid.replace("{marker}", str(scene.marker))
    path.write_text(text.replace("{project}", str(scene.project)))
    path.chmod(0o600)
    if name == "approvals.jsonl":
        (scene.home / "permissions.json").write_text(
            '{"rules": [{"id": 1, "tool": "bash", "decision": "allow"}]}')
    return path


def damage(scene: Scene, name: str, path: Path, how: str, request) -> None:
    content = SUBJECTS[name].damaged.get(how)
    if how == "a directory":
        path.unlink()
        path.mkdir()
    elif how == "unreadable":
        path.chmod(0)
        scene.prefix = tuple(request.getfixturevalue("unprivileged"))
    elif how == "world-writable":
        path.chmod(0o666)
    elif name == "sessions.db":
        with sqlite3.connect(path) as db:
            db.execute(content.decode("utf-8", "surrogateescape"))
    else:
        path.write_bytes(content)


def run(scene: Scene, name: str) -> subprocess.CompletedProcess[str]:
    """The command that reads ``name``."""
    if name in ("permissions.json", "project permissions.json", "approvals.jsonl"):
        return scene.model_calls_bash(*(() if name == "approvals.jsonl" else ("--yes",)))
    if name == "skill":
        return scene.ikigai("skill", "list")
    if name == "AGENTS.md":
        return scene.ikigai("request", "--provider", "openai", "hi")
    if name == "sessions.db":
        return scene.ikigai("sessions", "show", "--json", str(scene.session))
    return scene.ikigai("tool", "list")


def _stops(scene, proc, path):
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)


def _denies(scene, proc, path):
    assert proc.returncode == 0, proc.stderr
    assert not scene.marker.exists(), "a call ran that should have been asked or denied"
    [(_, envelope)] = sent_results("openai", scene.fake_server.requests[-1].json)
    assert envelope["error_code"] == "TOOL_DENIED"


def _skips(scene, proc, path):
    assert proc.returncode == 0, proc.stderr
    assert not scene.marker.exists(), "a server from a damaged mcp.json was started"
    assert "demo" not in proc.stdout.split()


def _ignored(scene, proc, path):
    assert proc.returncode == 0, proc.stderr
    assert "demo" not in proc.stdout.split()


def _records(scene, proc, path):
    assert proc.returncode == 0, proc.stderr
    assert scene.marker.exists()
    last = json.loads(path.read_bytes().splitlines()[-1])
    assert (last["tool"], last["decision"]) == ("bash", "allow")


EXPECTED: dict[str, Callable[[Scene, subprocess.CompletedProcess[str], Path], None]] = {
    "stops": _stops, "denies": _denies, "skips": _skips, "ignored": _ignored,
    "records": _records}


@pytest.mark.parametrize(("name", "how"), CASES)
def test_a_damaged_file_is_one_line_and_fails_closed(name, how, scene, request):
    subject = SUBJECTS[name]
    path = write_valid(scene, name, subject)
    damage(scene, name, path, how, request)
    proc = run(scene, name)
    assert "Traceback" not in proc.stderr, proc.stderr
    kind = subject.expectation(how)
    EXPECTED[kind](scene, proc, path)
    if kind not in ("records", "ignored"):
        names = [str(path), *([scene.session] if scene.session else [])]
        named = [line for line in proc.stderr.splitlines() if any(n in line for n in names)]
        assert len(named) == 1, proc.stderr
