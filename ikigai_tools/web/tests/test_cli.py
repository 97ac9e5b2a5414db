"""The web plugin through the real ``ikigai``: listed, configured, approved, and used by a
model in a full ``ask`` against the fake provider and a site on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.support.fakeserver import Reply
from tests.support.replies import REPLIES
from tests.test_cli_agent import IKIGAI, keys, offline, sent_results  # noqa: F401

from .site import html

pytestmark = pytest.mark.usefixtures("offline", "keys")
REPLY = REPLIES["openai"]
ALLOW_LOCAL_FETCH = {"rules": [{"id": 1, "tool": "web_fetch", "decision": "allow",
                                "when": [{"pointer": "/url", "regex": r"^http://127\.0\.0\.1:"}]}]}


def ikigai(*args: str) -> subprocess.CompletedProcess[str]:
    """``ikigai ARGS`` as a real process; a hang fails the test after 90 s."""
    return subprocess.run([IKIGAI, *args], capture_output=True, text=True, timeout=90)


def configure(home, web) -> None:
    (home / "config.json").write_text(json.dumps({"web": web}))


def test_plugins_lists_the_distribution_and_tool_list_shows_web_fetch():
    plugins = json.loads(ikigai("plugins", "--json").stdout)
    web = next(p for p in plugins if p["name"] == "web")
    assert web["distribution"] == "ikigai-tools-web" and web["version"]
    tools = {t["name"]: t for t in json.loads(ikigai("tool", "list", "--json").stdout)}
    assert tools["web_fetch"]["source"] == "web"


def test_a_misspelt_setting_stops_the_call_with_a_did_you_mean(isolated_home, site):
    configure(isolated_home, {"allow_privat": ["127.0.0.1"]})
    done = ikigai("tool", "run", "web_fetch", json.dumps({"url": site.url + "/"}))
    assert done.returncode == 1
    assert "unknown key 'web.allow_privat' (did you mean 'allow_private'?)" in done.stdout
    assert site.requests == []


def test_a_setting_of_the_wrong_type_names_the_key(isolated_home, site):
    configure(isolated_home, {"timeout": "soon"})
    done = ikigai("tool", "run", "web_fetch", json.dumps({"url": site.url + "/"}))
    assert "'web.timeout' must be a positive float, got 'soon'" in done.stdout
    assert site.requests == []


def test_the_allow_list_in_config_json_reaches_the_tool(isolated_home, site):
    site.routes["/hi"] = Reply(200, {"Content-Type": "text/plain"}, b"hello intranet")
    url = site.url + "/hi"
    refused = json.loads(ikigai("tool", "run", "web_fetch", json.dumps({"url": url})).stdout)
    assert refused["result"]["error_code"] == "url_refused"
    assert "web.allow_private" in refused["result"]["error"]
    configure(isolated_home, {"allow_private": ["127.0.0.1"]})
    done = json.loads(ikigai("tool", "run", "web_fetch", json.dumps({"url": url})).stdout)
    assert done["result"]["content"] == "hello intranet"
    assert (isolated_home / "web-cache.db").exists()


def test_ask_denies_a_fetch_by_default_and_says_how_to_allow(fake_server, isolated_home, site):
    configure(isolated_home, {"allow_private": ["127.0.0.1"]})
    fake_server.push(REPLY.reply(calls=[("c1", "web_fetch", {"url": site.url + "/"})]),
                     REPLY.reply("Could not."))
    ikigai("ask", "--provider", "openai", "--no-stream", "read it")
    [(_, envelope)] = sent_results("openai", fake_server.requests[1].json)
    assert envelope["error_code"] == "TOOL_DENIED"
    assert site.requests == []


def test_ask_fetches_a_page_in_parts_and_answers(fake_server, isolated_home, site):
    """The model fetches from the local site, pages with next_start_index, and answers;
    the request bodies carry the envelopes."""
    configure(isolated_home, {"allow_private": ["127.0.0.1"]})
    (isolated_home / "permissions.json").write_text(json.dumps(ALLOW_LOCAL_FETCH))
    paragraphs = "".join(f"<p>Paragraph {i}: the answer is {i * 7}.</p>" for i in range(40))
    site.routes["/doc"] = html(f"<main><h1>Answers</h1>{paragraphs}</main>", title="Answers")
    url = site.url + "/doc"
    fake_server.push(
        REPLY.reply(calls=[("c1", "web_fetch", {"url": url, "max_chars": 600})]),
        REPLY.reply(calls=[("c2", "web_fetch", {"url": url, "max_chars": 600,
                                                "start_index": 600})]),
        REPLY.reply("Paragraph 39 says 273."))
    done = ikigai("ask", "--provider", "openai", "--no-stream",
                  f"what does paragraph 39 of {url} say?")  # a URL the user gave
    assert done.returncode == 0 and "273" in done.stdout
    [(_, first)] = sent_results("openai", fake_server.requests[1].json)
    [(_, second)] = sent_results("openai", fake_server.requests[2].json)
    assert first["tool_success"] is True and second["tool_success"] is True
    one, two = first["result"], second["result"]
    assert one["title"] == "Answers" and one["truncated"] is True
    assert one["next_start_index"] == 600 and one["content"].startswith("# Answers")
    assert two["returned_chars"] == 600 and two["next_start_index"] == 1200
    assert one["total_chars"] == two["total_chars"] > 1200
    assert "Paragraph 39" not in one["content"] + two["content"]
    assert one["untrusted_content"] is True and two["cached"] is True
    assert site.paths() == ["/robots.txt", "/doc"]  # the second part came from the cache
    body = fake_server.requests[0].json
    described = next(tool["function"]["description"] for tool in body["tools"]
                     if tool["function"]["name"] == "web_fetch")
    assert "ikigai permissions allow web_fetch" in described  # says how to allow a site
