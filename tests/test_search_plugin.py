"""``ikigai_search_backends``: a third-party plugin's backend answers ``web_search`` in the
tool process, through ikigai, and is blocked like any plugin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

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


@hookimpl
def ikigai_search_backends():
    return [Acme(), "not a backend"]
"""


def search(tmp_path, home, **env):
    (home / "config.json").write_text(json.dumps({"web": {"search_backends": ["acme"]}}))
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


def test_a_blocked_plugin_gives_no_backend(site, tmp_path, isolated_home):
    site("acme-search", "acme_search", PLUGIN)
    answer = search(tmp_path, isolated_home, IKIGAI_DISABLE_PLUGINS="acme_search")
    assert answer["error_code"] == "no_search_backend"
    assert "names no backend 'acme'" in answer["error"]
