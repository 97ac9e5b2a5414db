"""robots.txt on every redirect hop: a redirect to another site obeys that site's rules
(the same agent, cache and ``robots_ignore``), so no request for a path it disallows
reaches it."""

from __future__ import annotations

from tests.support.fakeserver import Reply

from .site import LOCAL, Site, html, run_fetch

DISALLOW_SECRET = Reply(200, {"Content-Type": "text/plain"},
                        b"User-agent: ikigai-web-fetch\nDisallow: /secret\n")


def test_a_redirect_to_a_site_that_disallows_the_path_is_refused_unrequested(site, isolated_home):
    with Site() as other:  # another port: another origin, with robots.txt of its own
        other.routes["/robots.txt"] = DISALLOW_SECRET
        other.routes["/secret"] = html("<p>should never be served</p>")
        site.routes["/go"] = Reply(302, {"Location": other.url + "/secret"})
        result = run_fetch({"url": site.url + "/go"}, web=LOCAL, home=isolated_home)
        assert result["error_code"] == "robots_denied"
        assert f"{other.url}/robots.txt disallows this URL" in result["error"]
        assert "web.robots_ignore" in result["error"]
        assert other.paths() == ["/robots.txt"]
        assert other.requests[0].headers["user-agent"].startswith("ikigai-web-fetch/")
        assert site.paths() == ["/robots.txt", "/go"]


def test_each_site_of_a_redirect_chain_is_asked_once_and_then_cached(site, isolated_home):
    with Site() as other:
        other.routes["/robots.txt"] = DISALLOW_SECRET
        other.routes["/open"] = Reply(302, {"Location": "/page"})
        other.routes["/page"] = html("<main><h1>Reached</h1><p>The page past two hops.</p></main>")
        site.routes["/go"] = Reply(302, {"Location": other.url + "/open"})
        url = site.url + "/go"
        result = run_fetch({"url": url}, web=LOCAL, home=isolated_home)
        assert "Reached" in result["content"] and result["final_url"] == other.url + "/page"
        assert other.paths() == ["/robots.txt", "/open", "/page"]
        run_fetch({"url": url, "no_cache": True}, web=LOCAL, home=isolated_home)
        assert other.paths().count("/robots.txt") == 1  # the site's answer is cached


def test_robots_ignore_lifts_the_rule_on_a_redirect_hop(site, isolated_home):
    with Site() as other:
        other.routes["/robots.txt"] = DISALLOW_SECRET
        other.routes["/secret"] = html("<main><h1>Secret</h1><p>Served to those who ignore "
                                       "robots.txt on purpose.</p></main>")
        site.routes["/go"] = Reply(302, {"Location": other.url + "/secret"})
        result = run_fetch({"url": site.url + "/go"},
                           web={**LOCAL, "robots_ignore": ["127.0.0.1"]}, home=isolated_home)
        assert "Secret" in result["content"] and other.paths() == ["/secret"]
