"""``ikigai models`` and the unknown-model warning in-process (the coverage gate sees these
lines); tests/test_models.py has the user-facing behaviour through the real program."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ikigai_core.app import App
from ikigai_core.cli import cli
from ikigai_core.models import CACHE_FILE, list_models, unknown_model
from ikigai_core.providers import get_provider
from tests.support.fakeserver import json_reply

KEY = "sk-models-inprocess-0123456789"


@pytest.fixture
def openai(monkeypatch, fake_server):
    monkeypatch.setenv("OPENAI_BASE_URL", fake_server.url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return get_provider(App().pm, "openai")


def invoke(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_the_command_in_process(openai, fake_server, isolated_home):
    fake_server.push(json_reply({"object": "list", "data": [{"id": "gpt-4o"}, "junk"]}))
    done = invoke("models", "--provider", "openai")
    assert done.stdout == ("openai (asked now, 1 models)\n  gpt-4o  128,000 tokens    "
                           "$2.50 in, $10.00 out per M tokens\n")
    assert json.loads(invoke("models", "--provider", "openai", "--json").stdout) == {
        "openai": {"source": "cache", "models": {"gpt-4o": 128000},
                   "prices": {"gpt-4o": {"input": 2.5, "output": 10.0}}}}


def test_every_provider_and_one_that_lists_none(monkeypatch, fake_server):
    for var in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "GOOGLE_GEMINI_BASE_URL"):
        monkeypatch.setenv(var, fake_server.url)
    fake_server.push(json_reply({"data": []}), json_reply({"models": []}),
                     json_reply({"data": []}))  # anthropic, google, openai: sorted
    listed = json.loads(invoke("models", "--json").stdout)
    assert listed["ollama"] == {"source": "known", "models": {}, "prices": {}}  # no listing
    assert listed["openai"] == {"source": "api", "models": {}, "prices": {}}


def test_a_listing_of_another_shape_is_one_problem(openai, fake_server, isolated_home):
    fake_server.push(json_reply({"models": []}))
    listing = list_models(openai, App().environ, isolated_home)
    assert listing.source == "known"
    assert listing.problem == ("openai's model list is not what its API documents (the model "
                               "list holds no 'data' list)")


def test_an_error_status_is_the_provider_s_error_line(openai, fake_server, isolated_home):
    fake_server.push(json_reply({"error": {"message": "nope"}}, status=500))
    listing = list_models(openai, App().environ, isolated_home)
    assert listing.source == "known" and "HTTP 500" in str(listing.problem)


def test_a_cache_that_cannot_be_written_is_only_a_shortcut_lost(
        openai, fake_server, isolated_home):
    (isolated_home / "cache" / CACHE_FILE).mkdir(parents=True)  # a folder where it goes
    fake_server.push(json_reply({"data": [{"id": "gpt-4o"}]}))
    assert list_models(openai, App().environ, isolated_home).source == "api"


def test_the_warning_checks_the_cached_list_then_the_known_one(openai, isolated_home):
    environ = App().environ
    assert unknown_model(openai, "gpt-4o", isolated_home, environ) is None
    assert unknown_model(openai, "zzzz", isolated_home, environ) == (
        "model 'zzzz' is not one openai lists; sent as given (ikigai models --provider "
        "openai lists them)")
    cache = isolated_home / "cache"
    cache.mkdir(exist_ok=True)
    (cache / CACHE_FILE).write_text(json.dumps({"version": 1, "providers": {"openai": {
        "base_url": environ["OPENAI_BASE_URL"], "time": 0, "models": {"local-1": None}}}}))
    (cache / CACHE_FILE).chmod(0o600)
    assert unknown_model(openai, "local-1", isolated_home, environ) is None
    assert "did you mean 'local-1'?" in str(unknown_model(openai, "local-2", isolated_home,
                                                          environ))


def test_offline_in_process_the_cached_list_then_the_known_one(
        openai, fake_server, isolated_home, monkeypatch):
    from tests.support.fakeserver import unused_url

    fake_server.push(json_reply({"data": [{"id": "gpt-4o"}]}))
    list_models(openai, App().environ, isolated_home)
    monkeypatch.setenv("OPENAI_BASE_URL", unused_url())
    done = invoke("models", "--provider", "openai")
    assert "cannot reach openai at http://127.0.0.1:" in done.stderr
    assert done.stdout.startswith("openai (built-in list, ")  # the cache was another URL's
    monkeypatch.setenv("OPENAI_BASE_URL", fake_server.url)
    listing = list_models(openai, App().environ, isolated_home, refresh=True)
    assert (listing.source, listing.models) == ("cache", {"gpt-4o": 128000})
    assert "fake server: no scripted reply left" in str(listing.problem)


def test_warn_unknown_model_prints_one_line(openai, isolated_home, capsys):
    from ikigai_core.commands.models import warn_unknown_model

    warn_unknown_model(App(), openai, "gpt-4o-mni")
    assert capsys.readouterr().err.startswith(
        "ikigai: model 'gpt-4o-mni' is not one openai lists; did you mean 'gpt-4o-mini'?")
