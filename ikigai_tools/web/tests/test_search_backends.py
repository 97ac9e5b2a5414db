"""Each search backend's adapter: the real ``web_search-tool`` process against a local
server replaying that API's documented reply (tests/search_replies.py names each source)."""

from __future__ import annotations

import json

from tests.support.fakeserver import json_reply

from .search_replies import (
    BRAVE,
    DUCKDUCKGO,
    DUCKDUCKGO_CHALLENGE,
    GOOGLE,
    GOOGLE_EMPTY,
    PATHS,
    SEARXNG,
    TAVILY,
    endpoints,
    html_reply,
    run_search,
)

SHAPE = {"title", "url", "snippet", "published", "rank", "backend"}


def only(site, name):
    """The one request the backend ``name`` made."""
    (request,) = [r for r in site.requests if r.path.startswith(PATHS[name])]
    return request


def test_brave_sends_the_key_and_filters_and_reads_web_results(site):
    site.routes[PATHS["brave"]] = json_reply(BRAVE)
    answer = run_search({"query": "pluggy hooks", "max_results": 3, "freshness": "week",
                         "blocked_domains": ["spam.example"]},
                        env=endpoints(site.url, "brave"))
    assert answer["backend"] == "brave" and answer["untrusted_content"] is True
    first, second = answer["results"]
    assert set(first) == SHAPE
    assert first == {"title": "pluggy — Writing hooks", "url": "https://pluggy.readthedocs.io/en/latest/",
                     "snippet": "How pluggy calls hooks.", "published": "2026-03-01T10:00:00",
                     "rank": 1, "backend": "brave"}
    assert second["published"] is None and second["rank"] == 2
    request = only(site, "brave")
    assert request.headers["x-subscription-token"] == "brave-key"
    assert request.query["q"] == ["pluggy hooks -site:spam.example"]
    assert request.query["count"] == ["3"] and request.query["freshness"] == ["pw"]


def test_tavily_posts_its_own_domain_and_time_parameters(site):
    site.routes[PATHS["tavily"]] = json_reply(TAVILY)
    answer = run_search({"query": "pluggy hooks", "freshness": "month",
                         "blocked_domains": ["blocked.example"]},
                        env=endpoints(site.url, "tavily"))
    assert [r["url"] for r in answer["results"]] == ["https://tavily.example/one"]
    assert answer["results"][0]["published"] == "2026-03-01T10:00:00+00:00"  # RFC 2822 in
    request = only(site, "tavily")
    assert request.method == "POST" and request.headers["authorization"] == "Bearer tvly-key"
    assert request.json["query"] == "pluggy hooks" and request.json["max_results"] == 5
    assert request.json["exclude_domains"] == ["blocked.example"]
    assert request.json["time_range"] == "month"


def test_searxng_from_the_config_url_is_cut_to_max_results(site):
    site.routes[PATHS["searxng"] + "/search"] = json_reply(SEARXNG)
    answer = run_search({"query": "pluggy hooks", "max_results": 4, "freshness": "day",
                         "allowed_domains": ["searx.example"]}, env={},
                        web={"searxng_url": site.url + PATHS["searxng"] + "/"})
    assert answer["backend"] == "searxng"
    assert [r["rank"] for r in answer["results"]] == [1, 2, 3, 4]
    assert answer["results"][0]["published"] == "2026-03-01T00:00:00"
    request = only(site, "searxng")
    assert request.query["format"] == ["json"] and request.query["time_range"] == ["day"]
    assert request.query["q"] == ["pluggy hooks (site:searx.example)"]


def test_searxng_without_the_json_format_says_how_to_turn_it_on(site):
    site.routes[PATHS["searxng"] + "/search"] = json_reply({}, status=403)
    answer = run_search({"query": "q"}, env=endpoints(site.url, "searxng"))
    assert answer["error_code"] == "search_failed"
    assert "add json to search.formats in its settings.yml" in answer["error"]


def test_google_caps_num_at_ten_and_reads_the_published_meta_tag(site):
    site.routes[PATHS["google"]] = json_reply(GOOGLE)
    answer = run_search({"query": "pluggy", "max_results": 20, "freshness": "year"},
                        env=endpoints(site.url, "google"))
    one, two = answer["results"]
    assert one["published"] == "2026-03-01T10:00:00+00:00" and one["backend"] == "google"
    assert two["published"] is None and two["snippet"] == "The second."
    request = only(site, "google")
    assert request.query["key"] == ["g-key"] and request.query["cx"] == ["g-cx"]
    assert request.query["num"] == ["10"] and request.query["dateRestrict"] == ["y1"]


def test_google_with_no_items_is_an_empty_answer_not_an_error(site):
    site.routes[PATHS["google"]] = json_reply(GOOGLE_EMPTY)
    answer = run_search({"query": "nothing"}, env=endpoints(site.url, "google"))
    assert answer["backend"] == "google" and answer["results"] == []


def test_duckduckgo_reads_the_page_leaving_ads_out(site):
    site.routes[PATHS["duckduckgo"]] = html_reply(DUCKDUCKGO)
    answer = run_search({"query": "pluggy", "freshness": "week"},
                        env=endpoints(site.url, "duckduckgo"),
                        web={"search_backends": ["duckduckgo"]})
    assert answer["results"] == [
        {"title": "DDG one", "url": "https://ddg.example/one?a=1", "snippet": "The first & best.",
         "published": None, "rank": 1, "backend": "duckduckgo"},
        {"title": "DDG two", "url": "https://ddg.example/two", "snippet": "The second.",
         "published": None, "rank": 2, "backend": "duckduckgo"}]
    request = only(site, "duckduckgo")
    assert request.method == "POST" and request.body == b"q=pluggy&df=w"


def test_duckduckgo_is_never_chosen_unless_named(site):
    site.routes[PATHS["duckduckgo"]] = html_reply(DUCKDUCKGO)
    answer = run_search({"query": "pluggy"}, env=endpoints(site.url, "duckduckgo"))
    assert answer["error_code"] == "no_search_backend" and site.requests == []


def test_duckduckgo_rate_limited_is_named_so(site):
    site.routes[PATHS["duckduckgo"]] = DUCKDUCKGO_CHALLENGE
    answer = run_search({"query": "pluggy"}, env=endpoints(site.url, "duckduckgo"),
                        web={"search_backends": ["duckduckgo"]})
    assert answer == {"error": "no search backend answered: duckduckgo: rate limited (HTTP 202)",
                      "error_code": "search_failed"}


def test_an_answer_over_the_output_budget_leaves_results_out_and_says_how_many(site):
    site.routes[PATHS["searxng"] + "/search"] = json_reply(SEARXNG)
    budget = 1500
    env = {**endpoints(site.url, "searxng"), "IKIGAI_MAX_OUTPUT_BYTES": str(budget)}
    answer = run_search({"query": "many", "max_results": 20}, env=env)
    kept = len(answer["results"])
    assert 0 < kept < 20 and answer["omitted"] == 20 - kept
    assert len(json.dumps(answer, ensure_ascii=False).encode()) + 1 <= budget
    assert [r["rank"] for r in answer["results"]] == list(range(1, kept + 1))
