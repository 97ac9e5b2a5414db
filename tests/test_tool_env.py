"""The environment policy: provider keys never reach a tool; ``tool_env`` shapes the rest."""

from __future__ import annotations

import json
import sys
from fnmatch import fnmatchcase

import pytest

from ikigai_core.defaults import tool_env
from ikigai_core.defaults.tool_env import filter_env, provider_key_vars
from ikigai_core.errors import ConfigError
from tests.support.replies import REPLIES
from tests.test_cli_agent import KEY_VARS, SECRET, invoke, keys, offline, sent_results  # noqa: F401

PRINT_ENV = "print(json.dumps({'env': dict(os.environ)}))"

pytestmark = pytest.mark.usefixtures("offline", "keys")


@pytest.fixture
def env_tool(isolated_home, make_tool):
    """A user tool answering with the environment it was given."""
    make_tool(isolated_home / "tools", "env-tool", body=PRINT_ENV)


def test_a_tool_never_sees_provider_keys_but_sees_its_own_variable(
    env_tool, fake_server, monkeypatch
):
    monkeypatch.setenv("GOOGLE_API_KEY", SECRET)
    monkeypatch.setenv("ENV_TOOL_TOKEN", "the tool's own")
    replies = REPLIES["anthropic"]
    fake_server.push(replies.reply(calls=[("c1", "env", {})]), replies.reply("Done."))
    result = invoke("ask", "--yes", "--provider", "anthropic", "--no-stream", "env?")
    assert result.exit_code == 0, result.stderr
    [(_, envelope)] = sent_results("anthropic", fake_server.requests[1].json)
    seen = envelope["result"]["env"]
    assert seen["ENV_TOOL_TOKEN"] == "the tool's own"
    assert not set(seen) & {*KEY_VARS.values(), "GOOGLE_API_KEY"}
    assert SECRET not in json.dumps(envelope)


def test_bash_env_shows_no_key():
    result = invoke("tool", "run", "bash", '{"command": "env"}')
    assert result.exit_code == 0 and "PATH=" in result.stdout
    assert SECRET not in result.stdout


@pytest.mark.parametrize("pattern", ["OPENAI_API_KEY", "*", "AWS_*", "LC_?", "[AB]_KEY", "A.B",
                                     "A+B", "", "openai_api_key"])
@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "AWS_TOKEN", "LC_X", "A_KEY", "A.B", "AxB",
                                  "A+B", "", "A\nB"])
def test_a_glob_matches_as_fnmatch_says(pattern, name):
    """Names without a wildcard are compared directly: the same answers, no regex."""
    assert tool_env._matches(name, [pattern]) == fnmatchcase(name, pattern)


@pytest.mark.parametrize(("policy", "kept"), [
    ({}, {"HOME", "PATH", "LC_ALL", "AWS_TOKEN", "IKIGAI_MAX_OUTPUT_BYTES"}),
    ({"inherit": "core"}, {"HOME", "PATH", "LC_ALL", "IKIGAI_MAX_OUTPUT_BYTES"}),
    ({"inherit": "core", "include": ["AWS_*", "OPENAI_API_KEY"]},
     {"HOME", "PATH", "LC_ALL", "AWS_TOKEN", "OPENAI_API_KEY", "IKIGAI_MAX_OUTPUT_BYTES"}),
    ({"inherit": "none"}, {"IKIGAI_MAX_OUTPUT_BYTES"}),
    ({"exclude": ["AWS_*", "LC_*"]}, {"HOME", "PATH", "IKIGAI_MAX_OUTPUT_BYTES"}),
])
def test_tool_env_inherit_then_exclude_then_include(policy, kept):
    env = {name: "x" for name in ("HOME", "PATH", "LC_ALL", "AWS_TOKEN", "OPENAI_API_KEY",
                                  "ACME_KEY", "IKIGAI_MAX_OUTPUT_BYTES")}
    assert set(filter_env(env, policy, ["OPENAI_API_KEY", "ACME_KEY"])) == kept


@pytest.mark.parametrize(("policy", "words"), [
    ({"inherit": "some"}, "'tool_env.inherit' must be one of all, core, none"),
    ({"exclude": "AWS_*"}, "'tool_env.exclude' must be a list"),
    ({"include": [1]}, "'tool_env.include' must be a list"),
    ({"inherit": "all", "set": {}}, "unknown key 'set'"),
])
def test_a_bad_tool_env_is_one_line(policy, words, isolated_home):
    with pytest.raises(ConfigError, match=words):
        filter_env({}, policy, [])
    (isolated_home / "config.json").write_text(json.dumps({"tool_env": policy}))
    result = invoke("tool", "run", "bash", '{"command": "true"}')
    assert result.exit_code == 1 and words in result.stderr


def test_tool_env_from_config_reaches_tool_run(isolated_home, monkeypatch):
    monkeypatch.setenv("MY_SETTING", "kept")
    monkeypatch.setenv("OTHER_SETTING", "dropped")
    (isolated_home / "config.json").write_text(json.dumps(
        {"tool_env": {"inherit": "core", "include": ["MY_*"]}}))
    result = invoke("tool", "run", "bash", '{"command": "env"}')
    assert "MY_SETTING=kept" in result.stdout and "OTHER_SETTING" not in result.stdout


PROVIDER = """
from ikigai_core import Provider, hookimpl

class Acme(Provider):
    name = "acme"
    default_model = "m"
    api_key_env = ("ACME_API_KEY",)
    base_url_env = "ACME_BASE_URL"
    default_base_url = "http://127.0.0.1:9"
    path = "/v1"

    def tool_schema(self, tool): return {}
    def request_body(self, *a, **k): return {}
    def parse_response(self, body): return None
    def parse_stream(self, events): return None

@hookimpl
def ikigai_provider_serializers():
    return [Acme()]
"""


def test_a_provider_plugin_declares_its_key_variable(site):
    site("ikigai-provider-acme", "acme", PROVIDER)
    provider_key_vars.cache_clear()
    try:
        found = provider_key_vars()
    finally:
        provider_key_vars.cache_clear()
    assert "ACME_API_KEY" in found and "OPENAI_API_KEY" in found and "GOOGLE_API_KEY" in found


@pytest.fixture
def declared(counted):
    """Count how often the providers themselves are asked for their key variables."""
    yield counted(tool_env, "_declared_key_vars")
    provider_key_vars.cache_clear()


def key_vars(cache):
    """The key variables as a new ikigai process finds them with this cache."""
    provider_key_vars.cache_clear()
    return provider_key_vars(cache)


def test_key_variables_are_remembered_until_a_provider_is_installed(site, tmp_path, declared):
    cache = tmp_path / "cache"
    site("ikigai-provider-acme", "acme", PROVIDER)
    assert "ACME_API_KEY" in key_vars(cache) and "ACME_API_KEY" in key_vars(cache)
    assert len(declared) == 1  # the second process imported no provider
    site("ikigai-provider-beta", "beta",
         PROVIDER.replace('"acme"', '"beta"').replace("ACME_", "BETA_"))
    assert {"ACME_API_KEY", "BETA_API_KEY", "OPENAI_API_KEY"} <= set(key_vars(cache))
    assert len(declared) == 2


def test_editing_a_provider_in_place_is_seen_at_once(site, tmp_path, declared):
    """An editable install changes the provider's source, never its metadata folder."""
    cache = tmp_path / "cache"
    site("ikigai-provider-acme", "acme", PROVIDER)
    assert "ACME_TOKEN" not in key_vars(cache)
    module = tmp_path / "site" / "ikigai_provider_acme_plugin.py"
    module.write_text(module.read_text().replace('("ACME_API_KEY",)',
                                                 '("ACME_API_KEY", "ACME_TOKEN")'))
    sys.modules.pop("ikigai_provider_acme_plugin")
    assert {"ACME_API_KEY", "ACME_TOKEN"} <= set(key_vars(cache))
    assert len(declared) == 2


def test_a_plugin_that_fails_to_load_is_never_remembered(site, tmp_path, declared):
    """It may be the provider whose key is missing: every process asks again until it loads."""
    cache = tmp_path / "cache"
    site("ikigai-provider-acme", "acme", PROVIDER)
    site("ikigai-broken", "broken", "raise RuntimeError('not today')")
    assert "ACME_API_KEY" in key_vars(cache) and "ACME_API_KEY" in key_vars(cache)
    assert len(declared) == 2 and not (cache / "provider-key-vars.json").exists()


@pytest.mark.parametrize("value", ['"ACME"', "[1]", "{}"])
def test_a_hand_edited_key_variable_cache_is_asked_again(site, tmp_path, declared, value):
    cache = tmp_path / "cache"
    site("ikigai-provider-acme", "acme", PROVIDER)
    key_vars(cache)
    path = cache / "provider-key-vars.json"
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "value": json.loads(value)}))
    assert "ACME_API_KEY" in key_vars(cache) and "A" not in key_vars(cache)
    assert len(declared) == 2
