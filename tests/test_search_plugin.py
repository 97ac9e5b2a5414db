"""``ikigai_search_backends``: a third-party plugin's backend answers ``web_search`` in the
tool process, through ikigai, and is blocked like any plugin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.fakeserver import json_reply

pytest.importorskip("ikigai_tools_web")

IKIGAI = str(Path(sys.executable).with_name("ikigai"))

PLUGIN = """
from ikigai_core import hookimpl
from ikigai_tools_web.search import SearchBackend
from ikigai_tools_web.search.backend import result


class Acme(SearchBackend):
    name = "acme"
    endpoint = "https://acme.invalid/search"

    def search(self, query, http, environ):
        return [result("Acme " + query.text, "https://acme.example/" + str(n), "<b>hit</b>")
                for n in range(3)]


class Broken(SearchBackend):
    name = "broken"
    endpoint = "https://broken.invalid/search"

    def search(self, query, http, environ):
        return [{"title": "no url"}]


@hookimpl
def ikigai_search_backends():
    return [Acme(), Broken(), "not a backend"]
"""


def search(tmp_path, home, backends=("acme",), **env):
    (home / "config.json").write_text(json.dumps({"web": {"search_backends": list(backends)}}))
    child = {**os.environ, "IKIGAI_HOME": str(home), "PYTHONPATH": str(tmp_path / "site"), **env}
    done = subprocess.run([IKIGAI, "tool", "run", "web_search",
                           '{"query": "rockets", "max_results": 2}'],
                          capture_output=True, text=True, env=child, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["result"]


def test_hook_ikigai_search_backends_gives_a_backend_that_answers(site, tmp_path, isolated_home):
    site("acme-search", "acme_search", PLUGIN)
    answer = search(tmp_path, isolated_home)
    assert answer["backend"] == "acme"
    assert answer["results"] == [
        {"title": "Acme rockets", "url": f"https://acme.example/{n}", "snippet": "hit",
         "published": None, "rank": n + 1, "backend": "acme"} for n in range(2)]
    assert answer["notes"] == [
        "plugin 'acme_search' failed in ikigai_search_backends: it returned a str, not a "
        "SearchBackend; skipped. Disable it with IKIGAI_DISABLE_PLUGINS=acme_search"]


def test_a_backend_whose_results_are_malformed_hands_over_to_the_next(site, tmp_path,
                                                                     isolated_home):
    site("acme-search", "acme_search", PLUGIN)
    answer = search(tmp_path, isolated_home, backends=("broken", "acme"))
    assert answer["backend"] == "acme"
    assert answer["failed"] == [{"backend": "broken", "error": "broken: failed (KeyError: 'url')"}]


def test_a_blocked_plugin_gives_no_backend(site, tmp_path, isolated_home):
    site("acme-search", "acme_search", PLUGIN)
    answer = search(tmp_path, isolated_home, IKIGAI_DISABLE_PLUGINS="acme_search")
    assert answer["error_code"] == "no_search_backend"
    assert "names no backend 'acme'" in answer["error"]


KAGI = {
    # https://help.kagi.com/kagi/api/search.html (meta; data[]: t 0 a result with rank, url,
    # title, snippet, published; t 1 related searches).
    "meta": {"id": "m1", "node": "us-east", "ms": 120, "api_balance": 9.9},
    "data": [
        {"t": 0, "rank": 1, "url": "https://kagi.example/a", "title": "A <b>page</b>",
         "snippet": "Found it.", "published": "2026-03-01T00:00:00Z"},
        {"t": 1, "list": ["related one", "related two"]},
    ],
}


def test_the_docs_backend_example_searches_and_refuses_a_bad_reply(fake_server):
    import httpx
    from ikigai_tools_web.search import BackendError, Query

    from tests.test_docs_examples import example

    kagi = example("search backend").ikigai_search_backends()[0]
    environ = {"KAGI_API_KEY": "k", "IKIGAI_SEARCH_KAGI_URL": fake_server.url + "/search"}
    fake_server.check = None
    fake_server.push(json_reply(KAGI), json_reply({"meta": {}}))
    with httpx.Client(timeout=10) as http:
        assert kagi.search(Query("pages"), http, environ) == [
            {"title": "A page", "url": "https://kagi.example/a", "snippet": "Found it.",
             "published": "2026-03-01T00:00:00+00:00"}]
        with pytest.raises(BackendError, match="kagi: the reply has no data"):
            kagi.search(Query("pages"), http, environ)
    assert fake_server.requests[0].headers["authorization"] == "Bot k"
    assert fake_server.requests[0].query["q"] == ["pages"]
