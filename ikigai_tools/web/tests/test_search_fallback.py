"""Which backend answers: the automatic choice, the configured order, the fallback on a
429, a 5xx or an unreachable server, and the setup message when nothing is set up."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.fakeserver import json_reply, unused_url

from .search_replies import (
    BRAVE,
    BRAVE_RATE_LIMITED,
    GOOGLE_QUOTA,
    PATHS,
    SEARXNG,
    TAVILY,
    clean_env,
    endpoints,
    run_search,
)

IKIGAI = str(Path(sys.executable).with_name("ikigai"))


def asked(site):
    """The backends asked, in order (by the path of each request)."""
    by_path = {path: name for name, path in PATHS.items()}
    return [by_path.get(r.path, by_path.get(r.path.removesuffix("/search"))) for r in site.requests]


def test_a_rate_limited_backend_hands_over_to_the_next_and_the_answer_says_which(site):
    site.routes[PATHS["brave"]] = json_reply(BRAVE_RATE_LIMITED, status=429)
    site.routes[PATHS["tavily"]] = json_reply(TAVILY)
    answer = run_search({"query": "pluggy"}, env=endpoints(site.url, "brave", "tavily"))
    assert answer["backend"] == "tavily"
    assert {r["backend"] for r in answer["results"]} == {"tavily"}
    assert answer["failed"] == [{"backend": "brave", "error": "brave: rate limited (HTTP 429)"}]
    assert asked(site) == ["brave", "tavily"]


def test_a_server_error_and_an_unreachable_server_hand_over_too(site):
    site.routes[PATHS["google"]] = json_reply({"error": {"code": 503}}, status=503)
    site.routes[PATHS["searxng"] + "/search"] = json_reply(SEARXNG)
    env = {**endpoints(site.url, "google", "searxng"), "BRAVE_API_KEY": "k",
           "IKIGAI_SEARCH_BRAVE_URL": unused_url()}
    answer = run_search({"query": "pluggy", "max_results": 1}, env=env)
    assert answer["backend"] == "searxng" and len(answer["results"]) == 1
    assert [f["backend"] for f in answer["failed"]] == ["brave", "google"]
    assert answer["failed"][0]["error"].startswith("brave: unreachable (ConnectError")
    assert answer["failed"][1]["error"] == "google: unavailable (HTTP 503)"


def test_the_configured_order_wins_and_an_unset_backend_names_its_variable(site):
    site.routes[PATHS["google"]] = json_reply(GOOGLE_QUOTA, status=429)
    site.routes[PATHS["brave"]] = json_reply(BRAVE)
    env = {**endpoints(site.url, "google", "brave")}
    answer = run_search({"query": "pluggy"}, env=env,
                        web={"search_backends": ["tavily", "google", "google", "brave"]})
    assert answer["backend"] == "brave" and asked(site) == ["google", "brave"]
    assert answer["failed"] == [
        {"backend": "tavily", "error": "tavily: set TAVILY_API_KEY"},
        {"backend": "google", "error": "google: rate limited (HTTP 429)"}]


def test_when_every_backend_fails_the_error_names_each(site):
    site.routes[PATHS["brave"]] = json_reply({}, status=401)
    site.routes[PATHS["tavily"]] = json_reply({"detail": {"error": "bad"}}, status=500)
    answer = run_search({"query": "pluggy"}, env=endpoints(site.url, "brave", "tavily"))
    assert answer == {"error_code": "search_failed", "error": (
        "no search backend answered: brave: the key was refused (HTTP 401); "
        "tavily: unavailable (HTTP 500)")}


def test_a_misspelled_backend_gets_a_did_you_mean(site):
    answer = run_search({"query": "q"}, env={}, web={"search_backends": ["brvae"]})
    assert answer["error_code"] == "no_search_backend"
    assert "names no backend 'brvae' (did you mean 'brave'?)" in answer["error"]


def test_with_nothing_set_up_ikigai_lists_the_tool_and_it_says_how_to_set_one_up(isolated_home):
    env = clean_env(IKIGAI_HOME=str(isolated_home))
    listed = subprocess.run([IKIGAI, "tool", "list", "--json"], capture_output=True, text=True,
                            env=env, timeout=60, check=True)
    assert "web_search" in {tool["name"] for tool in json.loads(listed.stdout)}
    done = subprocess.run([IKIGAI, "tool", "run", "web_search", '{"query": "ikigai"}'],
                          capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)["result"]
    assert result["error_code"] == "no_search_backend"
    message = result["error"]
    for needed in ("BRAVE_API_KEY", "https://api-dashboard.search.brave.com/register",
                   "TAVILY_API_KEY", "https://app.tavily.com", "GOOGLE_CSE_API_KEY",
                   "GOOGLE_CSE_ID", "https://developers.google.com/custom-search/v1/overview",
                   "IKIGAI_SEARCH_SEARXNG_URL", "web.searxng_url", "search_backends",
                   "docs/web.md"):
        assert needed in message


def test_a_search_key_reaches_web_search_and_no_other_tool(site, isolated_home):
    site.routes[PATHS["brave"]] = json_reply(BRAVE)
    env = clean_env(IKIGAI_HOME=str(isolated_home), **endpoints(site.url, "brave"),
                    TAVILY_API_KEY="tvly-secret-key")
    shown = subprocess.run(
        [IKIGAI, "tool", "run", "bash",
         '{"command": "echo ${BRAVE_API_KEY:-unset} ${TAVILY_API_KEY:-unset}"}'],
        capture_output=True, text=True, env=env, timeout=60, check=True)
    assert json.loads(shown.stdout)["result"]["output"].split() == ["unset", "unset"]
    done = subprocess.run([IKIGAI, "tool", "run", "web_search", '{"query": "pluggy"}'],
                          capture_output=True, text=True, env=env, timeout=60, check=True)
    assert json.loads(done.stdout)["result"]["backend"] == "brave"
    assert site.requests[0].headers["x-subscription-token"] == "brave-key"


def test_a_misspelt_or_wrong_search_setting_stops_the_call_with_its_fix(site, isolated_home):
    env = clean_env(IKIGAI_HOME=str(isolated_home), **endpoints(site.url, "brave"))
    for web, message in (
            ({"search_backend": ["brave"]},
             "unknown key 'web.search_backend' (did you mean 'search_backends'?)"),
            ({"max_uses": 0}, "'web.max_uses' must be a positive int, got 0"),
            ({"searxng_url": 8080}, "'web.searxng_url' must be a string, got 8080")):
        (isolated_home / "config.json").write_text(json.dumps({"web": web}))
        done = subprocess.run([IKIGAI, "tool", "run", "web_search", '{"query": "q"}'],
                              capture_output=True, text=True, env=env, timeout=60)
        assert done.returncode == 1 and message in json.loads(done.stdout)["error"]
    assert site.requests == []
