"""Stores are plugins: a third party's ``ikigai_session_stores`` adds a URL scheme, the
``sessions_url`` setting picks it; a scheme no plugin gives is one line."""

from __future__ import annotations

import json

import pytest

from tests.support.replies import REPLIES
from tests.test_sessions import invoke, offline

pytestmark = pytest.mark.usefixtures(offline.__name__)

PLUGIN = """
from ikigai_core import hookimpl
from ikigai_core.sessions import StoreKind
from ikigai_core.sqlite_store import SqliteStore

@hookimpl
def ikigai_session_stores():
    return [StoreKind(("memo",), lambda url, home: SqliteStore(home / (url[5:] + ".db"))),
            "not a kind"]
"""


def test_hook_ikigai_session_stores_adds_a_scheme(site, fake_server, isolated_home,
                                                  monkeypatch):
    site("acme-store", "acme_store", PLUGIN)
    (isolated_home / "config.json").write_text('{"sessions_url": "memo:team"}')
    fake_server.push(REPLIES["openai"].reply("A."))
    asked = invoke("ask", "--provider", "openai", "--json", "q")
    assert asked.exit_code == 0, asked.stderr
    assert "plugin 'acme_store' failed in ikigai_session_stores: it returned a str, not a " \
           "StoreKind" in asked.stderr
    assert (isolated_home / "team.db").exists() and not (isolated_home / "sessions.db").exists()
    (listed,) = json.loads(invoke("sessions", "list", "--json").stdout)
    assert listed["id"] == json.loads(asked.stdout)["session"]


@pytest.mark.parametrize(("url", "message"), [
    ("redis://localhost/0", "sessions_url 'redis://localhost/0': no installed plugin keeps "
                            "sessions in 'redis'; stores: "),
    ("just-a-path.db", "sessions_url 'just-a-path.db' names no store; use sqlite:///PATH"),
])
def test_a_store_no_plugin_gives_is_one_line(url, message, monkeypatch):
    monkeypatch.setenv("IKIGAI_SESSIONS_URL", url)
    done = invoke("sessions", "list")
    assert done.exit_code == 2 and done.stderr.startswith(f"ikigai: {message}")
    assert done.stderr.count("\n") == 1
