"""``sessions export`` / ``import`` move history between stores losslessly: SQLite ->
PostgreSQL -> SQLite gives the same bytes; a hostile file is one line and imports nothing;
the store URL's password shows in no output."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from tests.stores.conftest import store_at
from tests.support.postgres import PASSWORD
from tests.test_sessions import a_turn, invoke, offline

pytestmark = pytest.mark.usefixtures(offline.__name__)


def _fill(url, home, tmp_path) -> None:
    store = store_at(url, home)
    store.add_turn("a1", replace(a_turn("héllo ✓ \"quoted\"\n"), cost=0.1 + 0.2,
                                 cache_read_tokens=3), command="chat", cwd=tmp_path,
                   system="sÿstem")
    store.add_turn("a1", a_turn("again", calls=3), command="chat", cwd=tmp_path, system=None,
                   parent=0)
    store.new_session("b2", command="agent", cwd=tmp_path, system=None, parent="a1",
                      fork_turn=1, agent="reviewer", status="killed")
    store.add_turn("c3", a_turn("third", calls=0), command="ask", cwd=tmp_path, system=None)


def _export(monkeypatch, url: str) -> bytes:
    monkeypatch.setenv("IKIGAI_SESSIONS_URL", url)
    done = invoke("sessions", "export")
    assert done.exit_code == 0, done.stderr
    return done.stdout_bytes


def _import(monkeypatch, url: str, path) -> str:
    monkeypatch.setenv("IKIGAI_SESSIONS_URL", url)
    done = invoke("sessions", "import", str(path))
    assert done.exit_code == 0, done.stderr
    return done.stdout


def test_sqlite_to_postgres_to_sqlite_is_byte_identical(postgres, isolated_home, tmp_path,
                                                        monkeypatch):
    first, back = (f"sqlite:///{tmp_path / name}" for name in ("first.db", "back.db"))
    _fill(first, isolated_home, tmp_path)
    exported = _export(monkeypatch, first)
    assert len(exported.splitlines()) == 3
    (tmp_path / "one.jsonl").write_bytes(exported)
    pg = postgres.database()
    assert _import(monkeypatch, pg, tmp_path / "one.jsonl") == "Imported 3 sessions.\n"
    assert _import(monkeypatch, pg, tmp_path / "one.jsonl") == (
        "Imported 0 sessions (3 already here).\n")
    monkeypatch.setenv("IKIGAI_SESSIONS_URL", pg)
    assert invoke("sessions", "export", "--to", str(tmp_path / "two.jsonl")).exit_code == 0
    assert (tmp_path / "two.jsonl").read_bytes() == exported
    assert (tmp_path / "two.jsonl").stat().st_mode & 0o777 == 0o600
    _import(monkeypatch, back, tmp_path / "two.jsonl")
    assert _export(monkeypatch, back) == exported
    listed = json.loads(invoke("sessions", "list", "--json").stdout)
    assert {s["id"]: (s["turns"], s["status"]) for s in listed} == {
        "a1": (2, None), "b2": (0, "killed"), "c3": (1, None)}


BAD_LINES = {
    "not JSON": ("{", "line 2: "),
    "a key missing": ('{"session": {}, "turns": []}', "not an object with exactly"),
    "turns out of order": (None, "turns are not numbered"),
    "text for a count": (None, "input_tokens is the text"),
    "a call of no turn": (None, "a tool call of no turn"),
}


@pytest.mark.parametrize("what", BAD_LINES)
def test_a_bad_line_is_one_line_and_imports_nothing(what, isolated_home, tmp_path,
                                                    monkeypatch):
    url = f"sqlite:///{tmp_path / 'from.db'}"
    _fill(url, isolated_home, tmp_path)
    lines = _export(monkeypatch, url).decode().splitlines()
    line, expected = BAD_LINES[what]
    if line is None:
        data = json.loads(lines[0])
        if what == "turns out of order":
            data["turns"].reverse()
        elif what == "text for a count":
            data["turns"][0]["input_tokens"] = "many"
        else:
            data["tool_calls"][0]["turn"] = 7
        line = json.dumps(data)
    (tmp_path / "bad.jsonl").write_text("\n".join([lines[1], line, lines[2]]) + "\n")
    monkeypatch.setenv("IKIGAI_SESSIONS_URL", f"sqlite:///{tmp_path / 'to.db'}")
    done = invoke("sessions", "import", str(tmp_path / "bad.jsonl"))
    assert done.exit_code == 2 and done.stderr.count("\n") == 1, done.stderr
    assert expected in done.stderr and "nothing was imported" in done.stderr
    assert json.loads(invoke("sessions", "list", "--json").stdout) == []


def test_a_failed_export_leaves_the_file_as_it_was(isolated_home, tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'from.db'}"
    _fill(url, isolated_home, tmp_path)
    import sqlite3
    with sqlite3.connect(tmp_path / "from.db") as db:
        db.execute("UPDATE turns SET messages = 'broken' WHERE session_id = 'c3'")
    (tmp_path / "out.jsonl").write_text("before\n")
    monkeypatch.setenv("IKIGAI_SESSIONS_URL", url)
    done = invoke("sessions", "export", "--to", str(tmp_path / "out.jsonl"))
    assert done.exit_code == 1 and "session c3 is damaged" in done.stderr
    assert (tmp_path / "out.jsonl").read_text() == "before\n"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".out")) == []


@pytest.mark.parametrize("how", ["a wrong password", "no server", "unknown scheme",
                                 "not a URL"])
def test_the_password_never_shows(how, postgres, fake_server, monkeypatch):
    secret = "hunter2-topsecret"
    url = {"a wrong password": postgres.url(password=secret),
           "no server": f"postgresql://ikigai:{secret}@127.0.0.1:1/db",
           "unknown scheme": f"mysql://ikigai:{secret}@127.0.0.1/db",
           "not a URL": f"postgresql://ikigai:{secret}@127.0.0.1:port/db"}[how]
    monkeypatch.setenv("IKIGAI_SESSIONS_URL", url)
    for args in (["sessions", "list"], ["sessions", "export"],
                 ["ask", "--provider", "openai", "q"]):
        fake_server.push(fake_server_reply())
        done = invoke(*args)
        output = done.stdout + done.stderr
        assert secret not in output and PASSWORD not in output, output
        assert "***" in output or "no installed plugin" in output, output
        assert done.exit_code != 0 or args[0] == "ask"


def fake_server_reply():
    from tests.support.replies import REPLIES

    return REPLIES["openai"].reply("A.")
