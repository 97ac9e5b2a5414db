"""Damaged rows of the session log (issue 21 item 13): a row edited with ``sqlite3`` is one
line naming the conversation and ``ikigai sessions rm ID``, exit 1, in ``sessions show``
(each form) and ``ask --continue`` (before anything is sent); ``sessions list`` keeps
working. A hypothesis property feeds random damage to every column through the same code."""

from __future__ import annotations

import json
import shutil
import sqlite3
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ikigai_core.cli import cli
from ikigai_core.commands.output import dumps
from ikigai_core.commands.sessions import transcript
from ikigai_core.errors import IkigaiError
from ikigai_core.plugins import get_plugin_manager
from ikigai_core.providers import collect_providers
from ikigai_core.sqlite_store import SqliteStore
from tests.faults.test_fuzz_parsers import json_values, mangled
from tests.test_sessions import a_turn, db_path, invoke, offline

pytestmark = pytest.mark.usefixtures(offline.__name__)

DEEP = "[" * 100_000 + "]" * 100_000
DAMAGES = {
    "messages not JSON": ("turns", "messages", "'not json'"),
    "messages 100,000 deep": ("turns", "messages", f"'{DEEP}'"),
    "messages of no objects": ("turns", "messages", """'[null, 1, "x"]'"""),
    "an unknown role": ("turns", "messages", """'[{"role": "robot", "text": "hi"}]'"""),
    "a call's arguments a list": (
        "turns", "messages", """'[{"role": "tool", "results": [{"call": {"id": "c", "name":
        "bash", "arguments": [1]}, "envelope": {}}]}]'"""),
    "a skill message naming a path": (
        "turns", "messages", """'[{"role": "user", "text": "x", "skill": "../evil"}]'"""),
    "NaN in messages": ("turns", "messages", """'[{"role": "user", "text": NaN}]'"""),
    "a number past a float": (
        "turns", "messages", """'[{"role": "tool", "results": [{"call": {"id": "c", "name":
        "bash", "arguments": {"n": 1e999}}, "envelope": {}}]}]'"""),
    "text in created": ("turns", "created", "'yesterday'"),
    "text in input_tokens": ("turns", "input_tokens", "'many'"),
    "text in the session's created": ("sessions", "created", "'yesterday'"),
    "a blob in system": ("sessions", "system", "x'00ff'"),
    "a prompt not UTF-8": ("turns", "prompt", "CAST(x'ff' AS TEXT)"),
    "bad tools JSON": ("turns", "tools", "'{\"bash\": '"),
    "an envelope not an object": ("tool_calls", "envelope", "'[1]'"),
    "a parent that is no turn": ("turns", "parent", "7"),
    "text in cache_read_tokens": ("turns", "cache_read_tokens", "'some'"),
    "text in cost": ("turns", "cost", "'cheap'"),
    "an unknown status": ("sessions", "status", "'asleep'"),
    "a negative fork_turn": ("sessions", "fork_turn", "-1"),
    "a line break for a turn's number": ("turns", "seq", "char(10)"),
    "a line break for a call's number": ("tool_calls", "seq", "'a' || char(10) || 'b'"),
}


def damage(home: Path, table: str, column: str, value: str) -> None:
    with closing(sqlite3.connect(db_path(home), isolation_level=None)) as db:
        db.execute(f"UPDATE {table} SET {column} = {value}")


def one_session(home: Path) -> str:
    """An ``ask`` here with a tool call, recorded through the store as ``ask`` records it
    (the commands under test only read it): its id."""
    turn = replace(a_turn("greet"), model="gpt-4o-mini")
    SqliteStore(db_path(home)).add_turn("0123abcd", turn, command="ask", cwd=Path.cwd(),
                                        system=None)
    return "0123abcd"


@pytest.mark.parametrize("what", DAMAGES)
def test_a_damaged_row_is_one_line_naming_the_session(what, fake_server, isolated_home):
    session = one_session(isolated_home)
    damage(isolated_home, *DAMAGES[what])
    sent = len(fake_server.requests)
    for args in (["sessions", "show", session], ["sessions", "show", session, "--markdown"],
                 ["sessions", "show", session, "--json"],
                 ["ask", "--continue", "--provider", "openai", "again"]):
        result = invoke(*args)
        assert result.exit_code == 1, (args, result.stdout)
        assert result.stdout == ""
        assert result.stderr.startswith(f"ikigai: session {session} is damaged (")
        assert result.stderr.endswith(f"; remove it with `ikigai sessions rm {session}`\n")
        assert result.stderr.count("\n") == 1
    assert len(fake_server.requests) == sent  # nothing was sent
    listed = invoke("sessions", "list")
    assert listed.exit_code == 0 and listed.stdout.startswith(session)
    assert invoke("sessions", "rm", session).exit_code == 0


@pytest.mark.parametrize("time", ["'soon'", "1e300"])
def test_a_time_that_is_none_lists_and_shows_as_a_question_mark(time, fake_server,
                                                                 isolated_home):
    session = one_session(isolated_home)
    damage(isolated_home, "sessions", "updated", time)
    (line,) = invoke("sessions", "list").stdout.splitlines()
    assert line.startswith(f"{session}  ?  gpt-4o-mini  1 turn  ")
    if time == "1e300":  # a number, so shown, as a time beyond the calendar
        damage(isolated_home, "sessions", "created", time)
        shown = invoke("sessions", "show", session, "--markdown")
        assert shown.exit_code == 0 and f"\n\nask in `{Path.cwd()}`, ?\n" in shown.stdout


# -- Random damage --------------------------------------------------------------------------

COLUMNS = {
    "sessions": ["created", "updated", "cwd", "command", "system", "parent", "fork_turn",
                 "agent", "status"],
    "turns": ["seq", "created", "provider", "model", "prompt", "input_tokens", "output_tokens",
              "messages", "tools", "parent", "skills", "cache_read_tokens",
              "cache_write_tokens", "cost"],
    "tool_calls": ["turn", "seq", "call_id", "name", "arguments", "envelope", "duration"],
}
JSON_COLUMNS = {"messages", "tools", "skills", "arguments", "envelope"}
PROVIDERS = collect_providers(get_plugin_manager())


def _replace_inside(data: Any, path: list[int], value: Any) -> Any:
    """``data`` with the node that ``path`` picks (indexes into lists and dict values)
    replaced by ``value``."""
    if not path or not isinstance(data, (list, dict)) or not data:
        return value
    keys = list(data) if isinstance(data, dict) else list(range(len(data)))
    key = keys[path[0] % len(keys)]
    data[key] = _replace_inside(data[key], path[1:], value)
    return data


@st.composite
def damaged_value(draw, column: str, original: Any) -> Any:
    """Something else where ``original`` was: another type, or for a JSON column mangled
    text or the same JSON with one value inside replaced."""
    kinds = ["scalar", "blob"] + (["mangled", "inside"] if column in JSON_COLUMNS else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "blob":
        return draw(st.binary(max_size=16))
    if kind == "mangled":
        return draw(mangled()).decode("utf-8", "surrogateescape").encode(
            "utf-8", "surrogateescape")
    if kind == "inside" and isinstance(original, str):
        path = draw(st.lists(st.integers(0, 7), max_size=6))
        return json.dumps(_replace_inside(json.loads(original), path, draw(json_values)))
    return draw(st.none() | st.integers(-2**63, 2**63 - 1) | st.floats(allow_nan=False)
                | st.text(max_size=12))


@pytest.fixture
def recorded(isolated_home, tmp_path) -> Path:
    """A database with two turns of one session (tool calls in both), copied per example."""
    store = SqliteStore(tmp_path / "template.db")
    for prompt in ("one", "two"):
        store.add_turn("s1", a_turn(prompt, calls=2), command="ask", cwd=tmp_path,
                       system="be brief", parent=None if prompt == "one" else 0)
    return tmp_path / "template.db"


def _shown_or_refused(action, *args) -> None:
    """``action(*args)`` works, or fails as one IkigaiError line naming the session and
    its rm."""
    try:
        action(*args)
    except IkigaiError as exc:
        event("refused")
        assert "\n" not in str(exc) and "ikigai sessions rm s1" in str(exc), str(exc)


def _show(store: SqliteStore) -> None:
    """What ``sessions show --json`` and ``--markdown`` print."""
    dumps(store.show("s1"), indent=2)
    transcript(store.show("s1"))


def _go_on(store: SqliteStore, provider) -> None:
    """What ``ask --continue`` sends ``provider``."""
    provider.request_body(store.branch("s1", provider.name).conversation, [], model="m",
                          stream=True)


def check_damage(data, template: Path, home: Path) -> None:
    """Damage one value of a copy of ``template``; every reader shows it or refuses it."""
    path = db_path(home)
    shutil.copy(template, path)
    table = data.draw(st.sampled_from(sorted(COLUMNS)))
    column = data.draw(st.sampled_from(COLUMNS[table]))
    with closing(sqlite3.connect(path, isolation_level=None)) as db:  # closed: no WAL left
        rows = db.execute(f"SELECT rowid, {column} FROM {table}").fetchall()
        rowid, original = data.draw(st.sampled_from(rows))
        value = data.draw(damaged_value(column, original))
        try:
            db.execute(f"UPDATE {table} SET {column} = ? WHERE rowid = ?", (value, rowid))
        except sqlite3.IntegrityError:  # NOT NULL, a key taken: sqlite3 refuses it too
            return
    store = SqliteStore(path)
    _shown_or_refused(_show, store)
    for provider in PROVIDERS.values():
        _shown_or_refused(_go_on, store, provider)
    listed = CliRunner().invoke(cli, ["sessions", "list", "--json"], catch_exceptions=False)
    assert listed.exit_code == 0 and json.loads(listed.stdout)[0]["id"] == "s1"


ONCE_PER_TEST = [HealthCheck.function_scoped_fixture]  # the template: copied per example


@settings(max_examples=100, deadline=None, suppress_health_check=ONCE_PER_TEST)
@given(data=st.data())
def test_random_row_damage_is_shown_or_one_line(data, recorded, isolated_home):
    check_damage(data, recorded, isolated_home)


@pytest.mark.slow
@settings(max_examples=1500, deadline=None, suppress_health_check=ONCE_PER_TEST)
@given(data=st.data())
def test_random_row_damage_big_budget(data, recorded, isolated_home):
    check_damage(data, recorded, isolated_home)
