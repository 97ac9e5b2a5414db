"""``ikigai models``, and the warning ``--model`` and ``/model`` give for a name no one
lists (issue 27): the real program against the local fake server, which answers each
provider's model-listing GET in the shape its API documents:

- OpenAI ``GET /v1/models``: ``{"object": "list", "data": [{"id", "object", "created",
  "owned_by"}]}`` (developers.openai.com/api/reference, models/list);
- Anthropic ``GET /v1/models``: ``{"data": [{"id", "display_name", "created_at", "type"}],
  "has_more", "first_id", "last_id"}`` (docs.anthropic.com/en/api/models-list);
- Gemini ``GET /v1beta/models``: ``{"models": [{"name": "models/...", "displayName",
  "inputTokenLimit", "outputTokenLimit", "supportedGenerationMethods"}], "nextPageToken"}``
  (ai.google.dev/api/rest/v1beta/models/list).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.fakeserver import json_reply, unused_url
from tests.support.replies import REPLIES

IKIGAI = str(Path(sys.executable).with_name("ikigai"))
KEY = "sk-models-NEVER-SHOWN-0123456789"
LISTINGS = {
    "openai": {"object": "list", "data": [
        {"id": "gpt-4o-mini", "object": "model", "created": 1721172741, "owned_by": "system"},
        {"id": "ft:gpt-4o-mini:acme", "object": "model", "created": 1, "owned_by": "acme"}]},
    "anthropic": {"data": [
        {"id": "claude-sonnet-4-5", "display_name": "Claude Sonnet 4.5", "type": "model",
         "created_at": "2025-09-29T00:00:00Z"}],
        "has_more": False, "first_id": "claude-sonnet-4-5", "last_id": "claude-sonnet-4-5"},
    "google": {"models": [
        {"name": "models/gemini-2.5-flash", "displayName": "Gemini 2.5 Flash",
         "inputTokenLimit": 1048576, "outputTokenLimit": 65536,
         "supportedGenerationMethods": ["generateContent", "countTokens"]},
        {"name": "models/text-embedding-004", "inputTokenLimit": 2048,
         "supportedGenerationMethods": ["embedContent"]}]},
}
PATHS = {"openai": "/models", "anthropic": "/v1/models", "google": "/v1beta/models"}
AUTH = {"openai": ("authorization", f"Bearer {KEY}"), "anthropic": ("x-api-key", KEY),
        "google": ("x-goog-api-key", KEY)}
URL_VARS = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL",
            "google": "GOOGLE_GEMINI_BASE_URL"}


@pytest.fixture
def env(fake_server, isolated_home):
    """Every provider at the fake server, with a key."""
    environ = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    environ.update({var: fake_server.url for var in URL_VARS.values()})
    environ.update(OPENAI_API_KEY=KEY, ANTHROPIC_API_KEY=KEY, GEMINI_API_KEY=KEY)
    return environ


def ikigai(*args: str, env: dict[str, str], input: str = "") -> subprocess.CompletedProcess[str]:
    """``ikigai ARGS`` as a real program."""
    return subprocess.run([IKIGAI, *args], input=input, capture_output=True, text=True,
                          env=env, timeout=60)


@pytest.mark.parametrize("provider", list(LISTINGS))
def test_models_lists_what_the_api_lists_with_context_windows(provider, env, fake_server):
    fake_server.push(json_reply(LISTINGS[provider]))
    done = ikigai("models", "--provider", provider, "--json", env=env)
    assert (done.returncode, done.stderr) == (0, "")
    request = fake_server.requests[0]
    assert (request.method, request.path) == ("GET", PATHS[provider])
    assert request.headers[AUTH[provider][0]] == AUTH[provider][1]
    expected = {"openai": {"ft:gpt-4o-mini:acme": None, "gpt-4o-mini": 128000},
                "anthropic": {"claude-sonnet-4-5": 200000},
                "google": {"gemini-2.5-flash": 1048576}}[provider]
    prices = {"openai": {"gpt-4o-mini": {"input": 0.15, "output": 0.6}},  # genai-prices'
              "anthropic": {"claude-sonnet-4-5": {"input": 3.0, "output": 15.0}},
              "google": {"gemini-2.5-flash": {"input": 0.3, "output": 2.5}}}[provider]
    shown = json.loads(done.stdout)
    found = shown[provider].pop("prices")
    assert {name: pytest.approx(price) for name, price in found.items()} == prices
    assert shown == {provider: {"source": "api", "models": expected}}


def test_the_list_is_cached_and_printed_for_people(env, fake_server):
    fake_server.push(json_reply(LISTINGS["openai"]))
    first = ikigai("models", "--provider", "openai", env=env)
    assert first.stdout == ("openai (asked now, 2 models)\n"
                            "  ft:gpt-4o-mini:acme  context unknown\n"
                            "  gpt-4o-mini          128,000 tokens    $0.15 in, $0.60 out per "
                            "M tokens\n")
    again = ikigai("models", "--provider", "openai", env=env)
    assert again.stdout.startswith("openai (cached, 2 models)\n")
    assert len(fake_server.requests) == 1
    fake_server.push(json_reply({"object": "list", "data": []}))
    assert ikigai("models", "--provider", "openai", "--refresh",
                  env=env).stdout == "openai (asked now, 0 models)\n"


def test_offline_the_built_in_list_with_one_line_why(env):
    env["OPENAI_BASE_URL"] = unused_url()
    done = ikigai("models", "--provider", "openai", env=env)
    assert done.returncode == 0
    assert done.stderr.startswith("ikigai: openai: ") and done.stderr.count("\n") == 1
    assert done.stderr.endswith("; showing the built-in list\n")
    assert ["gpt-4o-mini", "128,000", "tokens"] in [line.split()[:3] for line in
                                                     done.stdout.splitlines()]


def test_a_rejected_key_is_one_line_without_the_key_and_the_cached_list_stays(
        env, fake_server):
    fake_server.push(json_reply(LISTINGS["anthropic"]),
                     REPLIES["anthropic"].error(401, "invalid x-api-key"))
    ikigai("models", "--provider", "anthropic", env=env)
    done = ikigai("models", "--provider", "anthropic", "--refresh", env=env)
    assert "rejected the API key" in done.stderr and KEY not in done.stderr
    assert done.stderr.endswith("; showing the cached list\n")
    assert done.stdout.startswith("anthropic (cached, 1 models)")


def test_a_model_no_one_lists_is_warned_about_and_still_used(env, fake_server):
    fake_server.push(REPLIES["openai"].reply("hi", stream=False))
    done = ikigai("ask", "--provider", "openai", "--no-stream", "--model", "gpt-4o-mni", "hi",
                  env=env)
    assert done.returncode == 0 and done.stdout == "hi\n"
    assert done.stderr == ("ikigai: model 'gpt-4o-mni' is not one openai lists; did you mean "
                           "'gpt-4o-mini'? sent as given (ikigai models --provider openai "
                           "lists them)\n")
    assert fake_server.requests[0].json["model"] == "gpt-4o-mni"
    fake_server.push(REPLIES["openai"].reply("ok", stream=False))
    known = ikigai("ask", "--provider", "openai", "--no-stream", "--model", "gpt-4o", "hi",
                   env=env)
    assert known.stderr == ""


def test_chat_model_command_warns_too(env, fake_server):
    done = ikigai("chat", "--provider", "openai", env=env, input="/model claude-sonet-4-5\n")
    assert done.returncode == 0, done.stderr
    assert "model: claude-sonet-4-5" in done.stdout
    assert "ikigai: model 'claude-sonet-4-5' is not one openai lists" in done.stderr
