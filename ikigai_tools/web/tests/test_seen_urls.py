"""The web plugin's conversation rules through the real ``ikigai ask`` and the fake provider:
``web.fetch_only_seen_urls`` (web_fetch fetches only URLs that appeared in the conversation)
and ``web.max_uses`` counted per conversation, ``ask --continue`` included (issue 24)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ikigai_tools_web.budget import uses
from ikigai_tools_web.seen import key, seen_in

from ikigai_core import AssistantMessage, ToolCall, ToolResult, ToolResultsMessage, UserMessage
from tests.support.cli import run
from tests.support.fakeserver import Reply, json_reply
from tests.support.replies import REPLIES
from tests.test_cli_agent import keys, offline, sent_results  # noqa: F401

from .search_replies import PATHS, SEARXNG
from .site import html
from .test_cli import ikigai
from .test_search_ask import set_up

pytestmark = pytest.mark.usefixtures("offline", "keys")
REPLY = REPLIES["openai"]
RULE = "web.fetch_only_seen_urls"


def ask(*prompt: str, cont: bool = False, real: bool = True):
    """``ikigai ask`` (``--continue`` with ``cont``) against the fake openai server: a real
    process, or with ``real=False`` the same command in this process (for a single ask: a
    count kept across asks must be seen across processes)."""
    return run("ask", *(["--continue"] if cont else []), "--provider", "openai",
               "--no-stream", *prompt, cwd=Path.cwd(), real=real, timeout=90)


def envelopes(fake_server, count: int) -> list[dict]:
    """The one tool result each of the first ``count`` follow-up requests carried."""
    return [sent_results("openai", fake_server.requests[i].json)[0][1]
            for i in range(1, count + 1)]


def test_a_url_not_in_the_conversation_is_refused_and_never_fetched(fake_server, isolated_home,
                                                                    site):
    set_up(isolated_home, site)
    site.routes["/leak"] = Reply(200, {"Content-Type": "text/plain"}, b"got it")
    fake_server.push(REPLY.reply(calls=[("c1", "web_fetch", {"url": site.url + "/leak?d=s3"})]),
                     REPLY.reply("Could not."))
    done = ask("what is new today?")
    assert done.returncode == 0, done.stderr
    [refused] = envelopes(fake_server, 1)
    assert refused["error_code"] == "TOOL_DENIED"
    assert "did not appear in this conversation" in refused["error"] and RULE in refused["error"]
    assert site.requests == []


def test_urls_from_the_prompt_a_search_result_and_a_fetched_page_are_fetched(
        fake_server, isolated_home, site):
    set_up(isolated_home, site)
    found = {**SEARXNG, "results": [{**SEARXNG["results"][0], "url": site.url + "/doc"}]}
    site.routes[PATHS["searxng"] + "/search"] = json_reply(found)
    site.routes["/doc"] = html('<main><h1>Doc</h1><p>See <a href="/next">next</a>.</p></main>')
    site.routes["/next"] = html("<main><h1>Next</h1><p>The end.</p></main>")
    site.routes["/mine"] = Reply(200, {"Content-Type": "text/plain"}, b"the user's page")
    fake_server.push(
        REPLY.reply(calls=[("c1", "web_fetch", {"url": site.url + "/mine"})]),
        REPLY.reply(calls=[("c2", "web_search", {"query": "doc"})]),
        REPLY.reply(calls=[("c3", "web_fetch", {"url": site.url + "/doc"})]),
        REPLY.reply(calls=[("c4", "web_fetch", {"url": site.url + "/next"})]),
        REPLY.reply("Read them all."))
    done = ask(f"start with {site.url}/mine, then search", real=False)
    assert done.returncode == 0, done.stderr
    mine, _, doc, after = envelopes(fake_server, 4)
    assert mine["result"]["content"] == "the user's page"
    assert doc["result"]["content"].startswith("# Doc")
    assert after["result"]["content"].startswith("# Next")
    assert {"/mine", "/doc", "/next"} <= set(site.paths())


def test_a_url_the_model_made_up_is_not_laundered_by_an_echo(fake_server, isolated_home, site):
    """web_search echoes its query: a URL the model searched for is still not seen."""
    set_up(isolated_home, site)
    site.routes[PATHS["searxng"] + "/search"] = json_reply(SEARXNG)
    made_up = site.url + "/leak?d=s3"
    fake_server.push(REPLY.reply(calls=[("c1", "web_search", {"query": made_up})]),
                     REPLY.reply(calls=[("c2", "web_fetch", {"url": made_up})]),
                     REPLY.reply(calls=[("c3", "web_fetch", {"url": made_up})]),
                     REPLY.reply("Could not."))
    assert ask("search the news", real=False).returncode == 0
    searched, refused, again = envelopes(fake_server, 3)
    assert searched["result"]["query"] == made_up
    assert refused["error_code"] == again["error_code"] == "TOOL_DENIED"  # refusal is no echo
    assert "/leak" not in site.paths()


def test_the_setting_off_allows_free_browsing(fake_server, isolated_home, site):
    set_up(isolated_home, site, fetch_only_seen_urls=False)
    site.routes["/any"] = Reply(200, {"Content-Type": "text/plain"}, b"free")
    fake_server.push(REPLY.reply(calls=[("c1", "web_fetch", {"url": site.url + "/any"})]),
                     REPLY.reply("Done."))
    assert ask("browse", real=False).returncode == 0
    [fetched] = envelopes(fake_server, 1)
    assert fetched["result"]["content"] == "free"


def test_the_setting_must_be_true_or_false(isolated_home, site):
    (isolated_home / "config.json").write_text(json.dumps({"web": {RULE[4:]: "no"}}))
    done = ikigai("tool", "run", "web_fetch", json.dumps({"url": site.url + "/"}))
    assert done.returncode == 1
    assert f"'{RULE}' must be true or false, got 'no'" in done.stdout
    assert site.requests == []


def test_tool_run_is_no_conversation_and_meets_no_url_rule(isolated_home, site):
    set_up(isolated_home, site)
    site.routes["/any"] = Reply(200, {"Content-Type": "text/plain"}, b"by hand")
    done = ikigai("tool", "run", "web_fetch", json.dumps({"url": site.url + "/any"}))
    assert json.loads(done.stdout)["result"]["content"] == "by hand"


def test_max_uses_counts_across_ask_continue(fake_server, isolated_home, site):
    set_up(isolated_home, site, max_uses=2)
    site.routes[PATHS["searxng"] + "/search"] = json_reply(SEARXNG)
    fake_server.push(*(REPLY.reply(calls=[(f"c{i}", "web_search", {"query": f"q{i}"})])
                       for i in range(2)), REPLY.reply("Two."))
    assert ask("search twice").returncode == 0
    fake_server.push(REPLY.reply(calls=[("c2", "web_search", {"query": "q2"})]),
                     REPLY.reply("Enough."))
    done = ask("once more", cont=True)
    assert done.returncode == 0, done.stderr
    [spent] = sent_results("openai", fake_server.requests[4].json)
    assert spent[1]["error_code"] == "TOOL_DENIED"
    assert "(2 of web.max_uses: 2 in config.json)" in spent[1]["error"]
    assert len(site.requests) == 2  # the third search started nothing
    fake_server.push(REPLY.reply(calls=[("c3", "web_search", {"query": "q3"})]),
                     REPLY.reply("Fresh."))
    assert ask("a new conversation").returncode == 0
    [fresh] = sent_results("openai", fake_server.requests[6].json)
    assert fresh[1]["tool_success"] is True  # a new conversation, a new count


def test_calls_of_one_turn_count_in_the_order_the_model_made_them(fake_server, isolated_home,
                                                                   site):
    set_up(isolated_home, site, max_uses=2)
    site.routes[PATHS["searxng"] + "/search"] = json_reply(SEARXNG)
    fake_server.push(REPLY.reply(calls=[(f"c{i}", "web_search", {"query": f"q{i}"})
                                        for i in range(3)]), REPLY.reply("Done."))
    assert ask("search three times at once", real=False).returncode == 0
    results = dict(sent_results("openai", fake_server.requests[1].json))
    assert [results[f"c{i}"]["tool_success"] for i in range(3)] == [True, True, False]
    assert len(site.requests) == 2


# -- the rules on their own ------------------------------------------------------------------

def result(name: str, arguments: dict, envelope: dict) -> ToolResultsMessage:
    return ToolResultsMessage((ToolResult(ToolCall("c", name, arguments), envelope),))


def test_seen_urls_come_from_the_user_and_from_results_as_written_in_prose():
    seen = set().union(*seen_in([
        UserMessage("read https://A.example:443/x. and (https://b.example/y) or docs.python.org/3/"),
        result("web_fetch", {"url": "https://c.example/p"},
               {"result": {"final_url": "https://c.example/dir/p", "content": "[n](../q#top)"}}),
        result("bash", {"command": "echo https://evil.example/?d=s3cret\u00e9"},
               {"result": {"output": "https://evil.example/?d=s3cret\\u00e9 https://ok.example"}}),
    ]))
    assert {"https://a.example/x", "https://b.example/y", "https://docs.python.org/3/",
            "http://docs.python.org/3/", "https://c.example/q", "https://ok.example/"} <= seen
    assert not any("evil" in url for url in seen)  # an echo, even JSON-escaped, is no source
    assert key("ftp://a.example/") is None and key("http://[::1") is None


def test_uses_counts_what_ran_and_the_turns_earlier_calls():
    ran = {"tool_success": True}
    denied = {"tool_success": False, "error_code": "TOOL_DENIED"}
    turn = AssistantMessage(tool_calls=(ToolCall("a", "web_search", {}),
                                        ToolCall("b", "bash", {}), ToolCall("c", "web_search", {})))
    history = [result("web_search", {}, ran), result("web_search", {}, denied), turn]
    assert [uses(history, "web_search", call) for call in ("a", "c", None)] == [1, 2, 3]
    assert uses([], "web_search", None) == 0
