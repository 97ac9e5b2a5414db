"""web_search in a full ``ikigai ask`` with the fake provider: the model searches a
SearXNG-shaped server on 127.0.0.1, fetches a result's page with web_fetch, pages with
``next_start_index`` and answers; and ``web.max_uses`` stops a tool once it is spent."""

from __future__ import annotations

import json

import pytest

from tests.support.fakeserver import json_reply
from tests.support.replies import REPLIES
from tests.test_cli_agent import keys, offline, sent_results  # noqa: F401

from .search_replies import PATHS, SEARXNG
from .site import html
from .test_cli import ikigai

pytestmark = pytest.mark.usefixtures("offline", "keys")
REPLY = REPLIES["openai"]
ALLOW = {"rules": [
    {"id": 1, "tool": "web_search", "decision": "allow"},
    {"id": 2, "tool": "web_fetch", "decision": "allow",
     "when": [{"pointer": "/url", "regex": r"^http://127\.0\.0\.1:"}]}]}


def set_up(home, site, **web) -> None:
    """Search through the site's SearXNG, fetch from the site, both allowed."""
    settings = {"allow_private": ["127.0.0.1"], "search_backends": ["searxng"],
                "searxng_url": site.url + PATHS["searxng"], **web}
    (home / "config.json").write_text(json.dumps({"web": settings}))
    (home / "permissions.json").write_text(json.dumps(ALLOW))


def test_ask_searches_fetches_a_result_in_parts_and_answers(fake_server, isolated_home, site):
    set_up(isolated_home, site)
    url = site.url + "/doc"
    found = {**SEARXNG, "results": [{**SEARXNG["results"][0], "url": url,
                                     "title": "Answers", "content": "Every answer."}]}
    site.routes[PATHS["searxng"] + "/search"] = json_reply(found)
    paragraphs = "".join(f"<p>Paragraph {i}: the answer is {i * 7}.</p>" for i in range(40))
    site.routes["/doc"] = html(f"<main><h1>Answers</h1>{paragraphs}</main>", title="Answers")
    fake_server.push(
        REPLY.reply(calls=[("c1", "web_search", {"query": "paragraph answers"})]),
        REPLY.reply(calls=[("c2", "web_fetch", {"url": url, "max_chars": 600})]),
        REPLY.reply(calls=[("c3", "web_fetch", {"url": url, "max_chars": 600,
                                                "start_index": 600})]),
        REPLY.reply("Paragraph 39 says 273."))
    done = ikigai("ask", "--provider", "openai", "--no-stream", "what does paragraph 39 say?")
    assert done.returncode == 0 and "273" in done.stdout, done.stderr
    [(_, searched)] = sent_results("openai", fake_server.requests[1].json)
    [(_, first)] = sent_results("openai", fake_server.requests[2].json)
    [(_, second)] = sent_results("openai", fake_server.requests[3].json)
    assert searched["tool_success"] is True
    assert searched["result"]["backend"] == "searxng"
    assert searched["result"]["results"] == [
        {"title": "Answers", "url": url, "snippet": "Every answer.",
         "published": "2026-03-01T00:00:00", "rank": 1, "backend": "searxng"}]
    assert first["result"]["truncated"] is True and first["result"]["next_start_index"] == 600
    assert second["result"]["returned_chars"] == 600 and second["result"]["cached"] is True
    assert first["result"]["content"].startswith("# Answers")
    assert site.paths() == [PATHS["searxng"] + "/search", "/robots.txt", "/doc"]
    tools = {t["function"]["name"] for t in fake_server.requests[0].json["tools"]}
    assert {"web_search", "web_fetch"} <= tools


def test_max_uses_stops_a_tool_for_the_rest_of_the_conversation(fake_server, isolated_home,
                                                                site):
    set_up(isolated_home, site, max_uses=2)
    site.routes[PATHS["searxng"] + "/search"] = json_reply(SEARXNG)
    fake_server.push(*(REPLY.reply(calls=[(f"c{i}", "web_search", {"query": f"q{i}"})])
                       for i in range(3)), REPLY.reply("Enough."))
    done = ikigai("ask", "--provider", "openai", "--no-stream", "search three times")
    assert done.returncode == 0, done.stderr
    envelopes = [sent_results("openai", fake_server.requests[i].json)[0][1] for i in (1, 2, 3)]
    assert [e["tool_success"] for e in envelopes] == [True, True, False]
    assert envelopes[2]["error_code"] == "TOOL_DENIED"
    assert ("web_search has spent its budget for this conversation (2 of web.max_uses: 2 "
            "in config.json)") in envelopes[2]["error"]
    assert len(site.requests) == 2  # the third search started nothing


def test_a_call_refused_before_it_ran_costs_no_use(fake_server, isolated_home, site):
    set_up(isolated_home, site, max_uses=1)
    only_ok = {"rules": [{"id": 1, "tool": "web_search", "decision": "allow",
                          "when": [{"pointer": "/query", "regex": "^ok"}]}]}
    (isolated_home / "permissions.json").write_text(json.dumps(only_ok))
    site.routes[PATHS["searxng"] + "/search"] = json_reply(SEARXNG)
    fake_server.push(*(REPLY.reply(calls=[(f"c{i}", "web_search", {"query": query})])
                       for i, query in enumerate(("not allowed", "ok one", "ok two"))),
                     REPLY.reply("Done."))
    done = ikigai("ask", "--provider", "openai", "--no-stream", "search")
    assert done.returncode == 0, done.stderr
    envelopes = [sent_results("openai", fake_server.requests[i].json)[0][1] for i in (1, 2, 3)]
    assert [e["tool_success"] for e in envelopes] == [False, True, False]
    assert "web.max_uses" not in envelopes[0]["error"]  # the user's rule refused it
    assert "(1 of web.max_uses: 1 in config.json)" in envelopes[2]["error"]
    assert len(site.requests) == 1
