"""web_fetch end to end: the installed tool as a real process against a site on 127.0.0.1."""

from __future__ import annotations

import gzip
import json
import os
import sys

from tests.support.fakeserver import Reply

from .site import LOCAL, html, run_fetch

DOC = """<nav><a href="/">Home</a> <a href="/a">A</a></nav><main>
<h1>Install</h1><p>Run this <a href="/dl">now</a> with care and attention to detail.</p>
<pre><code class="language-python">import os
print(os.getcwd())
</code></pre>
<h2>Options</h2><ul><li>one</li><li>two</li></ul>
<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>
<p>A paragraph long enough for the extractor to take it as the main content of the page.</p>
</main><footer>Copyright 2026 Example</footer>"""


def test_html_becomes_markdown_with_the_result_shape(site, isolated_home):
    site.routes["/doc"] = html(DOC, title="Install guide")
    result = run_fetch({"url": site.url + "/doc"}, web=LOCAL, home=isolated_home)
    assert set(result) >= {"url", "final_url", "status", "content_type", "retrieved_at",
                           "total_chars", "returned_chars", "truncated", "next_start_index",
                           "title", "content"}
    assert result["status"] == 200 and result["content_type"] == "text/html"
    assert result["title"] == "Install guide" and result["untrusted_content"] is True
    content = result["content"]
    assert "# Install" in content and "## Options" in content
    assert "```" in content and "print(os.getcwd())" in content
    assert "[now](" in content and "- one" in content and "| a | b |" in content
    assert "Copyright" not in content
    assert result["truncated"] is False and result["next_start_index"] is None
    assert result["returned_chars"] == result["total_chars"] == len(content)
    assert site.paths() == ["/robots.txt", "/doc"]


def test_a_long_page_is_paged_and_never_cut_silently(site, isolated_home):
    text = "".join(f"line {i:05d}\n" for i in range(5000))
    site.routes["/log"] = Reply(200, {"Content-Type": "text/plain"}, text.encode())
    url = site.url + "/log"
    first = run_fetch({"url": url, "max_chars": 1000}, web=LOCAL, home=isolated_home)
    assert first["truncated"] is True and first["next_start_index"] == 1000
    assert first["next_call"] == {"url": url, "start_index": 1000, "max_chars": 1000, "raw": False}
    second = run_fetch(first["next_call"], web=LOCAL, home=isolated_home)
    assert first["content"] + second["content"] == text[:2000]
    assert second["cached"] is True  # the second part came from the cache
    whole, start = "", 0
    while start is not None:  # the default budget: every part fits the output limit
        part = run_fetch({"url": url, "start_index": start}, web=LOCAL, home=isolated_home)
        whole += part["content"]
        start = part["next_start_index"]
    assert whole == text and part["total_chars"] == len(text)
    past = run_fetch({"url": url, "start_index": len(text) + 5}, web=LOCAL, home=isolated_home)
    assert past["content"] == "" and past["truncated"] is False
    assert "past the end" in past["notes"][0]


def test_the_output_limit_cuts_a_part_and_says_where_to_go_on(site, isolated_home):
    text = "é\"\\" * 30000  # every character costs 2 or more bytes in JSON
    site.routes["/dense"] = Reply(200, {"Content-Type": "text/plain; charset=utf-8"},
                                  text.encode())
    result = run_fetch({"url": site.url + "/dense", "max_chars": 90000}, web=LOCAL,
                       home=isolated_home, env={"IKIGAI_MAX_OUTPUT_BYTES": "20000"})
    assert len(json.dumps(result, ensure_ascii=False).encode()) <= 20000
    assert result["truncated"] is True
    assert result["next_start_index"] == result["returned_chars"] > 0
    assert result["content"] == text[:result["returned_chars"]]


def test_near_empty_extraction_says_so_and_raw_gives_the_page(site, isolated_home):
    page = "<div id=app></div><script>" + "var x = 1;" * 200 + "</script>"
    site.routes["/spa"] = html(page)
    result = run_fetch({"url": site.url + "/spa"}, web=LOCAL, home=isolated_home)
    assert any("raw: true" in note for note in result["notes"])
    raw = run_fetch({"url": site.url + "/spa", "raw": True}, web=LOCAL, home=isolated_home)
    assert "<div id=app>" in raw["content"] and "notes" not in raw


def test_json_and_xml_come_back_as_text(site, isolated_home):
    site.routes["/j"] = Reply(200, {"Content-Type": "application/json"}, b'{"a": [1, 2]}')
    site.routes["/x"] = Reply(200, {"Content-Type": "application/atom+xml"}, b"<feed><t>x</t></feed>")
    assert run_fetch({"url": site.url + "/j"}, web=LOCAL, home=isolated_home)["content"] == '{"a": [1, 2]}'
    assert run_fetch({"url": site.url + "/x"}, web=LOCAL, home=isolated_home)["content"] == "<feed><t>x</t></feed>"


def test_binaries_are_refused_with_type_and_size_unread(site, isolated_home):
    site.routes["/img"] = Reply(200, {"Content-Type": "image/png"}, b"\x89PNG" + b"\0" * 5000)
    result = run_fetch({"url": site.url + "/img"}, web=LOCAL, home=isolated_home)
    assert result["error_code"] == "unsupported_content_type"
    assert "image/png" in result["error"] and "5004 bytes" in result["error"]


def test_a_gzip_bomb_stops_at_the_decoded_cap(site, isolated_home):
    bomb = gzip.compress(b"A" * (64 * 1024 * 1024), compresslevel=9)  # 64 KiB -> 64 MiB
    site.routes["/bomb"] = Reply(200, {"Content-Type": "text/plain", "Content-Encoding": "gzip"},
                                 bomb)
    result = run_fetch({"url": site.url + "/bomb", "max_chars": 10},
                       web={**LOCAL, "max_bytes": 1_000_000}, home=isolated_home)
    assert result["total_chars"] == 1_000_000
    assert any("web.max_bytes" in note for note in result["notes"])


def test_a_stalled_server_times_out_cleanly(site, isolated_home):
    site.routes["/slow"] = Reply(200, {"Content-Type": "text/plain"}, chunks=[b"a", b"b"],
                                 delay=5)
    result = run_fetch({"url": site.url + "/slow"}, web={**LOCAL, "timeout": 1.0},
                       home=isolated_home, timeout=30)
    assert result["error_code"] == "timeout" and "web.timeout" in result["error"]


def test_robots_txt_is_obeyed_unless_the_domain_is_ignored(site, isolated_home):
    site.routes["/robots.txt"] = Reply(200, {"Content-Type": "text/plain"},
                                       b"User-agent: *\nDisallow: /private\n")
    site.routes["/private/x"] = html("<p>secret</p>")
    url = site.url + "/private/x"
    denied = run_fetch({"url": url}, web=LOCAL, home=isolated_home)
    assert denied["error_code"] == "robots_denied" and "web.robots_ignore" in denied["error"]
    assert "/private/x" not in site.paths()
    assert site.requests[0].headers["user-agent"].startswith("ikigai-web-fetch/")
    allowed = run_fetch({"url": url}, web={**LOCAL, "robots_ignore": ["127.0.0.1"]},
                        home=isolated_home)
    assert "secret" in allowed["content"]


def test_robots_txt_failing_denies_until_it_answers(site, isolated_home):
    site.routes["/robots.txt"] = Reply(503, {"Content-Type": "text/plain"}, b"busy")
    site.routes["/a"] = html("<p>Back again, with enough words to be the page's content.</p>")
    denied = run_fetch({"url": site.url + "/a"}, web=LOCAL, home=isolated_home)
    assert denied["error_code"] == "robots_denied" and "server error" in denied["error"]
    del site.routes["/robots.txt"]  # now a 404: everything allowed, and not asked again
    assert "Back again" in run_fetch({"url": site.url + "/a"}, web=LOCAL, home=isolated_home)["content"]
    assert site.paths() == ["/robots.txt", "/robots.txt", "/a"]


def test_robots_txt_answering_403_means_deny(site, isolated_home):
    site.routes["/robots.txt"] = Reply(403, {"Content-Type": "text/plain"}, b"no")
    result = run_fetch({"url": site.url + "/a"}, web=LOCAL, home=isolated_home)
    assert result["error_code"] == "robots_denied" and "answers 403" in result["error"]


def test_a_stale_entry_is_revalidated_with_its_etag(site, isolated_home):
    site.routes["/e"] = Reply(200, {"Content-Type": "text/plain", "ETag": '"v1"'}, b"version one")
    web = {**LOCAL, "cache_ttl": 0.001}
    assert run_fetch({"url": site.url + "/e"}, web=web, home=isolated_home)["cached"] is False
    site.routes["/e"] = Reply(304, {"ETag": '"v1"'})
    again = run_fetch({"url": site.url + "/e"}, web=web, home=isolated_home)
    assert again["cached"] is True and again["content"] == "version one"
    assert site.requests[-1].headers["if-none-match"] == '"v1"'


def test_no_cache_fetches_afresh(site, isolated_home):
    site.routes["/n"] = Reply(200, {"Content-Type": "text/plain"}, b"one")
    run_fetch({"url": site.url + "/n"}, web=LOCAL, home=isolated_home)
    site.routes["/n"] = Reply(200, {"Content-Type": "text/plain"}, b"two")
    assert run_fetch({"url": site.url + "/n"}, web=LOCAL, home=isolated_home)["content"] == "one"
    assert run_fetch({"url": site.url + "/n", "no_cache": True}, web=LOCAL,
                     home=isolated_home)["content"] == "two"


def test_a_cached_private_page_is_not_served_once_the_allow_list_drops_it(site, isolated_home):
    site.routes["/c"] = Reply(200, {"Content-Type": "text/plain"}, b"intranet")
    run_fetch({"url": site.url + "/c"}, web=LOCAL, home=isolated_home)
    result = run_fetch({"url": site.url + "/c"}, web={}, home=isolated_home)
    assert result["error_code"] == "url_refused"


def test_the_cache_is_bounded(site, isolated_home):
    for i in range(4):  # 4000 bytes each: the third and the fourth must each evict
        site.routes[f"/{i}"] = Reply(200, {"Content-Type": "text/plain"}, b"x" * 4000)
        run_fetch({"url": f"{site.url}/{i}"}, web={**LOCAL, "cache_max_bytes": 10_000},
                  home=isolated_home)
    import sqlite3

    with sqlite3.connect(isolated_home / "web-cache.db") as db:
        total, count = db.execute("SELECT SUM(size), COUNT(*) FROM pages").fetchone()
    assert total <= 10_000 and count == 2
    assert oct((isolated_home / "web-cache.db").stat().st_mode & 0o777) == "0o600"


def test_bad_arguments_are_one_line_errors(isolated_home):
    for arguments, fault in (({"url": "http://x/", "max_chars": 0}, "'max_chars' must be an integer > 0"),
                             ({"url": "http://x/", "start_index": -1}, "'start_index' must be an integer >= 0"),
                             ({"url": "http://x/", "raw": "yes"}, "'raw' must be true or false"),
                             ({"start_index": 1}, "a string 'url'")):
        result = run_fetch(arguments, home=isolated_home)
        assert result["error_code"] == "invalid_arguments" and fault in result["error"]


def test_a_large_page_says_it_was_converted_in_slices(site, isolated_home):
    sections = "".join(f"<h2>Part {i}</h2><p>{'Some text of this part. ' * 60}</p>" for i in range(250))
    site.routes["/big"] = html(f"<main>{sections}</main>")
    result = run_fetch({"url": site.url + "/big", "max_chars": 100}, web=LOCAL, home=isolated_home)
    assert result["content"].startswith("## Part 0") and result["truncated"] is True
    assert any("a slice at a time" in note for note in result["notes"])


def test_a_cache_hit_imports_no_network_or_extraction_library(site, isolated_home):
    import subprocess

    from .site import TOOL

    site.routes["/h"] = html("<p>A page that will be read twice from the cache, not fetched.</p>")
    run_fetch({"url": site.url + "/h"}, web=LOCAL, home=isolated_home)
    env = {**os.environ, "IKIGAI_HOME": str(isolated_home), "IKIGAI_WEB_SETTINGS": json.dumps(LOCAL)}
    done = subprocess.run([sys.executable, "-X", "importtime", TOOL], input=json.dumps({"url": site.url + "/h"}),
                          capture_output=True, text=True, env=env, timeout=60, check=True)
    assert json.loads(done.stdout)["cached"] is True
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
    # (the lighter savings, typing or sqlite3's wrapper, are the benchmark's: a coverage run
    # imports them into every process)
    assert not imported & {"httpx", "trafilatura", "bs4", "markdownify", "lxml"}
